// runtime-store console: follows a running run live (the records and transcript fragments name
// its tail): new records on the run page, with its meta and children reloaded when a lifecycle
// record arrives; new messages on the transcript's last page.
// Builds on console.js (window.runtimeStoreConsole); untrusted text reaches the DOM only as
// textContent.
"use strict";

(() => {
  const { headers, humanBytes, problemOf, problemElement, load } = window.runtimeStoreConsole;
  const OPEN_PAYLOAD_BYTES = 600;
  const RETRY_MAX_MS = 10000;

  // --- the live tail: fetch + a server-sent events parser -------------------------------
  // EventSource cannot send an Authorization header, so the stream is read with fetch().

  function pretty(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (_) {
      return text;
    }
  }

  function appendRecord(timeline, template, record, newestFirst) {
    const node = template.content.firstElementChild.cloneNode(true);
    const set = (selector, text) => {
      node.querySelector(selector).textContent = text;
    };
    const size = new TextEncoder().encode(record.payload).length;
    node.id = "record-" + record.id;
    node.dataset.type = record.type;
    node.classList.add("record-live");
    set(".record-id", "#" + record.id);
    set(".record-type", record.type);
    set(".record-time", record.timestamp);
    node.querySelector(".record-time").setAttribute("datetime", record.timestamp);
    node.querySelector(".record-time").title = record.timestamp + " UTC";
    set(".record-key", record.event_key);
    set(".record-turn", record.turn_id ? "turn " + record.turn_id : "");
    set("summary", "payload, " + humanBytes(size));
    set(".payload-text", pretty(record.payload));
    node.querySelector("details").open = size <= OPEN_PAYLOAD_BYTES;
    if (newestFirst) timeline.prepend(node);
    else timeline.append(node);
    const empty = document.getElementById("timeline-empty");
    if (empty) empty.remove();
  }

  function lineReader() {
    let buffer = "";
    return (chunk) => {
      buffer += chunk;
      const lines = [];
      for (;;) {
        const match = /\r\n|\n|\r/.exec(buffer);
        // A "\r" at the very end may be the first half of "\r\n": wait for more.
        if (!match || (match[0] === "\r" && match.index === buffer.length - 1)) break;
        lines.push(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
      return lines;
    };
  }

  // Reads a run's tail from `cursor` on, reconnecting with backoff, until it ends or is
  // refused: on.record(record), on.end(end), on.say(text) (its state), on.refused(problem).
  function tail(url, cursor, on) {
    const controller = new AbortController();
    window.addEventListener("pagehide", () => controller.abort());

    async function stream() {
      const request = { Accept: "text/event-stream" };
      if (cursor) request["Last-Event-ID"] = cursor;
      const query = cursor ? "?cursor=" + encodeURIComponent(cursor) : "";
      const response = await fetch(url + query, {
        headers: headers(request),
        cache: "no-store",
        signal: controller.signal,
      });
      if (!response.ok) {
        const problem = await problemOf(response);
        if (response.status === 503) return "retry";
        on.refused(problem);
        return "refused";
      }
      connected();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const lines = lineReader();
      let event = "";
      let data = [];
      let id = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "retry";
        for (const line of lines(value)) {
          if (line === "") {
            if (id !== null) cursor = id;
            if (event === "record" && data.length) {
              on.record(JSON.parse(data.join("\n")));
            } else if (event === "end") {
              on.end(data.length ? JSON.parse(data.join("\n")) : {});
              controller.abort();
              return "end";
            }
            event = "";
            data = [];
            id = null;
            continue;
          }
          if (line.startsWith(":")) continue; // a heartbeat
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let text = colon < 0 ? "" : line.slice(colon + 1);
          if (text.startsWith(" ")) text = text.slice(1);
          if (field === "event") event = text;
          else if (field === "data") data.push(text);
          else if (field === "id") id = text;
        }
      }
    }

    let delay = 500;
    const connected = () => {
      delay = 500;
    };

    (async () => {
      for (;;) {
        let outcome;
        try {
          outcome = await stream();
        } catch (error) {
          if (controller.signal.aborted) return;
          outcome = "retry";
        }
        if (outcome !== "retry") return;
        on.say("Connection lost; reconnecting…");
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    })();
  }

  const finished = (end) =>
    end.reason === "purged"
      ? "The session was purged: no more records."
      : "The run finished (" + (end.status || "final") + "): no more records.";

  // --- the run page: its timeline, and its meta and children kept current ---------------

  // Records that change what the run's meta shows (its status, times, outcome, successor).
  const LIFECYCLE = new Set([
    "run_started",
    "child_run_linked",
    "runtime.cancellation_intent",
    "run_suspended",
    "run_completed",
  ]);

  // One reload of a slot at a time, and one more if asked meanwhile: fetches that finish
  // out of order never leave an older answer on the page.
  const reloading = new Map();
  function reload(id) {
    const slot = document.getElementById(id);
    if (!slot || !slot.dataset.fragment) return;
    const state = reloading.get(id) || { running: false, again: false };
    reloading.set(id, state);
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = true;
    (async () => {
      do {
        state.again = false;
        await load(slot);
      } while (state.again);
      state.running = false;
    })();
  }

  function follow(timeline, slot) {
    const template = slot.querySelector("#record-template");
    const state = slot.querySelector("#tail-state");
    const newestFirst = timeline.dataset.order === "desc";
    let types = [];
    try {
      types = JSON.parse(timeline.dataset.types || "[]");
    } catch (_) {
      types = [];
    }
    let received = 0;
    const say = (text) => {
      state.textContent = text;
    };
    tail(timeline.dataset.tail, timeline.dataset.tailCursor || "", {
      say,
      refused: (problem) => state.replaceWith(problemElement(problem)),
      record: (record) => {
        if (!types.length || types.includes(record.type)) {
          appendRecord(timeline, template, record, newestFirst);
          received += 1;
          say("Following new records live: " + received + " new since the page loaded.");
        }
        if (LIFECYCLE.has(record.type)) reload("meta");
        if (record.type === "child_run_linked") reload("children");
      },
      end: (end) => {
        say(finished(end));
        reload("meta");
        timeline.dataset.ended = "true";
      },
    });
  }

  // --- the transcript page: its last page reloaded up to each new transcript record -----

  const TRANSCRIPT_TYPES = new Set(["transcript_messages_seeded", "transcript_messages_appended"]);

  function followTranscript(prefix, slot) {
    if (slot.dataset.following) return; // a reload of the followed page: already followed
    slot.dataset.following = "true";
    const state = document.getElementById("transcript-live");
    const reloadUrl = prefix.dataset.reload;
    const say = (text) => {
      state.textContent = text;
      state.hidden = false;
    };
    let received = 0;
    let pending = Promise.resolve();
    say("Following the run live (" + prefix.dataset.status + "): new messages appear here.");
    tail(prefix.dataset.transcriptTail, prefix.dataset.through || "", {
      say,
      refused: (problem) => {
        state.replaceChildren(problemElement(problem));
        state.hidden = false;
      },
      record: (record) => {
        if (!TRANSCRIPT_TYPES.has(record.type)) return;
        received += 1;
        const through = record.id;
        // One reload at a time, in order; a reader at the bottom stays at the bottom,
        // one reading above keeps their place (the page above does not move).
        pending = pending.then(async () => {
          const bottom =
            window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
          const y = window.scrollY;
          slot.dataset.fragment = reloadUrl + "&through=" + encodeURIComponent(through);
          await load(slot);
          if (bottom) window.scrollTo(0, document.documentElement.scrollHeight);
          else window.scrollTo(0, y);
          say("Following the run live: " + received + " new transcript record(s) since the page loaded.");
        });
      },
      end: (end) => {
        pending.then(() => {
          say(finished(end));
          slot.dataset.ended = "true";
        });
      },
    });
  }

  document.addEventListener("console:fragment", (event) => {
    const slot = event.target;
    const timeline = slot.querySelector("[data-tail]");
    if (timeline) follow(timeline, slot);
    const prefix = slot.querySelector("[data-transcript-tail]");
    if (prefix) followTranscript(prefix, slot);
  });
})();
