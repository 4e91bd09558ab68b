// runtime-store console: follows a running run's records live (the records fragment names its tail).
// Builds on console.js (window.runtimeStoreConsole); untrusted text reaches the DOM only as
// textContent.
"use strict";

(() => {
  const { headers, humanBytes, problemOf, problemElement } = window.runtimeStoreConsole;
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

  function appendRecord(timeline, template, record) {
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
    set(".record-key", record.event_key);
    set(".record-turn", record.turn_id ? "turn " + record.turn_id : "");
    set("summary", "payload, " + humanBytes(size));
    set(".payload-text", pretty(record.payload));
    node.querySelector("details").open = size <= OPEN_PAYLOAD_BYTES;
    timeline.append(node);
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

  function follow(timeline, slot) {
    const url = timeline.dataset.tail;
    const template = slot.querySelector("#record-template");
    const state = slot.querySelector("#tail-state");
    const controller = new AbortController();
    let cursor = timeline.dataset.tailCursor || "";
    let received = 0;
    window.addEventListener("pagehide", () => controller.abort());

    const say = (text) => {
      state.textContent = text;
    };

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
        state.replaceWith(problemElement(problem));
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
              appendRecord(timeline, template, JSON.parse(data.join("\n")));
              received += 1;
              say("Following new records live: " + received + " new since the page loaded.");
            } else if (event === "end") {
              const end = data.length ? JSON.parse(data.join("\n")) : {};
              say(
                end.reason === "purged"
                  ? "The session was purged: no more records."
                  : "The run finished (" + (end.status || "final") + "): no more records."
              );
              timeline.dataset.ended = "true";
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
        say("Connection lost; reconnecting…");
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    })();
  }

  document.addEventListener("console:fragment", (event) => {
    const slot = event.target;
    const timeline = slot.querySelector("[data-tail]");
    if (timeline) follow(timeline, slot);
  });
})();
