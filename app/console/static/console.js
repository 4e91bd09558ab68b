// runtime-store console: fetches the page's fragments with the tab's bearer token, runs the
// admin actions against the JSON API, and follows a running run's records live.
// No framework, no build step. Untrusted text only ever reaches the DOM as textContent;
// HTML comes only from the console's own fragment routes, which escape every value.
"use strict";

(() => {
  const TOKEN_KEY = "runtime-store-console-token";
  const OPEN_PAYLOAD_BYTES = 600;
  const RETRY_MAX_MS = 10000;

  // The one way HTML enters the page (the policy requires Trusted Types): fragments of
  // this service, fetched from its /console/fragments/ routes.
  const policy = window.trustedTypes
    ? window.trustedTypes.createPolicy("console", { createHTML: (html) => html })
    : { createHTML: (html) => html };

  const token = () => sessionStorage.getItem(TOKEN_KEY) || "";

  function headers(extra) {
    const all = Object.assign({}, extra || {});
    const value = token();
    if (value) all.Authorization = "Bearer " + value;
    return all;
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function humanBytes(count) {
    if (count < 1024) return count + " B";
    if (count < 1024 * 1024) return (count / 1024).toFixed(1) + " KiB";
    return (count / (1024 * 1024)).toFixed(1) + " MiB";
  }

  // --- problems ------------------------------------------------------------------------

  async function problemOf(response) {
    let body = {};
    try {
      body = await response.json();
    } catch (_) {
      body = {};
    }
    return {
      status: response.status,
      code: body.code || "http_" + response.status,
      title: body.title || response.statusText || "Error",
      detail: body.detail || "",
    };
  }

  function problemElement(problem) {
    const box = element("div", "problem");
    box.setAttribute("role", "alert");
    box.dataset.problem = problem.code;
    const head = element("p");
    head.append(element("strong", "", problem.title), " ", element("code", "", problem.code));
    head.append(" ", element("span", "muted", "(HTTP " + problem.status + ")"));
    box.append(head);
    if (problem.detail) box.append(element("p", "", problem.detail));
    return box;
  }

  function notice(text) {
    const box = document.getElementById("notice");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
  }

  // --- fragments -----------------------------------------------------------------------

  async function load(slot) {
    slot.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(slot.dataset.fragment, {
        headers: headers({ Accept: "text/html" }),
        cache: "no-store",
      });
      slot.innerHTML = policy.createHTML(await response.text());
    } catch (error) {
      slot.replaceChildren(
        problemElement({ status: 0, code: "unavailable", title: "Network error", detail: String(error) })
      );
    }
    slot.setAttribute("aria-busy", "false");
    slot.dataset.loaded = "true";
    const timeline = slot.querySelector("[data-tail]");
    if (timeline) follow(timeline, slot);
  }

  async function loadAll() {
    await Promise.all(Array.from(document.querySelectorAll("[data-fragment]"), load));
    if (location.hash) {
      const target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
    document.body.dataset.ready = "true";
  }

  // --- the token -----------------------------------------------------------------------

  function setupToken() {
    const form = document.getElementById("token-form");
    if (!form) return;
    const input = document.getElementById("token-input");
    const state = document.getElementById("token-state");
    state.textContent = token()
      ? "Token kept for this tab."
      : "No token: enough in open mode.";
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = input.value.trim();
      input.value = "";
      if (value) sessionStorage.setItem(TOKEN_KEY, value);
      location.reload();
    });
    document.getElementById("token-forget").addEventListener("click", () => {
      sessionStorage.removeItem(TOKEN_KEY);
      location.reload();
    });
  }

  // --- admin actions (the API decides who may) -----------------------------------------

  const sessionPath = (id) => "/v1/sessions/" + encodeURIComponent(id);

  function showResult(content) {
    const box = document.getElementById("action-result");
    if (box) box.replaceChildren(content);
  }

  async function refusal(response) {
    showResult(problemElement(await problemOf(response)));
  }

  function reloadSession() {
    const slot = document.getElementById("session");
    return slot ? load(slot) : Promise.resolve();
  }

  async function endSession(id) {
    const response = await fetch(sessionPath(id) + "/end", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "application/json" }),
      body: JSON.stringify({ ended_at: new Date().toISOString() }),
    });
    if (!response.ok) return refusal(response);
    await reloadSession();
    notice("Session " + id + " ended.");
  }

  async function askPurge() {
    const dialog = document.getElementById("purge-dialog");
    const summary = document.getElementById("purge-summary");
    summary.dataset.fragment = summary.dataset.summary;
    dialog.showModal();
    await load(summary);
  }

  async function purgeSession(id) {
    const dialog = document.getElementById("purge-dialog");
    const response = await fetch(sessionPath(id), {
      method: "DELETE",
      headers: headers({ Accept: "application/json" }),
    });
    dialog.close();
    if (!response.ok) return refusal(response);
    await reloadSession();
    notice("Session " + id + " purged.");
  }

  async function exportSession(id) {
    const response = await fetch(sessionPath(id) + "/export", {
      headers: headers({ Accept: "application/x-ndjson" }),
    });
    if (!response.ok) return refusal(response);
    const blob = await response.blob();
    const link = element("a", "", "Download " + id + ".ndjson (" + humanBytes(blob.size) + ")");
    link.href = URL.createObjectURL(blob);
    link.download = id + ".ndjson";
    link.dataset.export = id;
    showResult(link);
    link.click();
  }

  function setupActions() {
    document.addEventListener("click", (event) => {
      const button = event.target.closest("[data-action], #purge-confirm");
      if (!button) return;
      const id = button.dataset.sessionId;
      const action = button.id === "purge-confirm" ? "confirm-purge" : button.dataset.action;
      const run = {
        end: () => endSession(id),
        purge: () => askPurge(),
        "confirm-purge": () => purgeSession(id),
        export: () => exportSession(id),
      }[action];
      if (!run) return;
      button.disabled = true;
      run()
        .catch((error) =>
          showResult(
            problemElement({ status: 0, code: "unavailable", title: "Network error", detail: String(error) })
          )
        )
        .finally(() => {
          button.disabled = false;
        });
    });
  }

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

  document.addEventListener("DOMContentLoaded", () => {
    setupToken();
    setupActions();
    loadAll();
  });
})();
