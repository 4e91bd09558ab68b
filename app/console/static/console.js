// runtime-store console, the core: the tab's bearer token, problems, and the page's
// fragments, fetched with the token. console-actions.js (the token bar, admin actions) and
// console-live.js (the live tail) build on what this file exports as window.runtimeStoreConsole.
// No framework, no build step. Untrusted text only ever reaches the DOM as textContent;
// HTML comes only from the console's own fragment routes, which escape every value.
"use strict";

(() => {
  const TOKEN_KEY = "runtime-store-console-token";

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
    // The other console files act on what a fragment brought (a timeline to follow, say).
    slot.dispatchEvent(new CustomEvent("console:fragment", { bubbles: true }));
  }

  async function loadAll() {
    await Promise.all(Array.from(document.querySelectorAll("[data-fragment]"), load));
    if (location.hash) {
      const target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
    document.body.dataset.ready = "true";
  }

  window.runtimeStoreConsole = Object.freeze({
    TOKEN_KEY,
    token,
    headers,
    element,
    humanBytes,
    problemOf,
    problemElement,
    notice,
    load,
  });

  document.addEventListener("DOMContentLoaded", loadAll);
})();
