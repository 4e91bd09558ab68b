// runtime-store console, the lists' times: every <time data-relative> shows how long ago
// it was ("3 min ago", the exact UTC time in its title), and every run's
// <span class="duration" data-from data-to|data-ticking> its duration, a running run's
// ticking. The server renders both once (app/console/times.py, same rules); this keeps
// them fresh. Text only ever reaches the DOM as textContent (strict CSP, Trusted Types).
"use strict";

(() => {
  const UNITS = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];

  function duration(ms) {
    if (ms < 1000) return Math.max(ms, 0) + " ms";
    let seconds = Math.floor(ms / 1000);
    const parts = [];
    for (const [name, size] of UNITS) {
      if (seconds >= size || parts.length) {
        parts.push(Math.floor(seconds / size) + " " + name);
        seconds %= size;
      }
      if (parts.length === 2 || (parts.length && name === "s")) break;
    }
    if (parts[parts.length - 1].startsWith("0 ")) parts.pop();
    return parts.join(" ");
  }

  function relative(ms) {
    const ahead = ms < 0;
    const seconds = Math.floor(Math.abs(ms) / 1000);
    if (seconds < 5) return "just now";
    for (const [name, size] of UNITS) {
      if (seconds >= size) {
        const amount = Math.floor(seconds / size) + " " + name;
        return ahead ? "in " + amount : amount + " ago";
      }
    }
    return "just now";
  }

  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  function refresh(root) {
    const now = Date.now();
    for (const node of root.querySelectorAll("time[data-relative][datetime]")) {
      const at = Date.parse(node.getAttribute("datetime"));
      if (!Number.isNaN(at)) setText(node, relative(now - at));
    }
    for (const node of root.querySelectorAll(".duration[data-from]")) {
      const from = Date.parse(node.dataset.from);
      const to = node.dataset.to ? Date.parse(node.dataset.to) : now;
      if (!Number.isNaN(from) && !Number.isNaN(to)) setText(node, duration(to - from));
    }
  }

  // Durations of running runs tick every second; the rest is fresh enough at that pace too
  // (a list holds at most a page of rows).
  document.addEventListener("console:fragment", (event) => refresh(event.target));
  document.addEventListener("DOMContentLoaded", () => {
    refresh(document);
    window.setInterval(() => refresh(document), 1000);
  });

  window.runtimeStoreConsoleTimes = Object.freeze({ duration, relative });
})();
