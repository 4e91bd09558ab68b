// runtime-store console: the token bar (who the token is, from /v1/whoami), the jump box,
// and the admin actions, each destructive one confirmed first (the API decides who may).
// Builds on console.js (window.runtimeStoreConsole); untrusted text reaches the DOM only as
// textContent.
"use strict";

(() => {
  const { TOKEN_KEY, token, headers, element, humanBytes, problemOf, problemElement, notice, load } =
    window.runtimeStoreConsole;

  const networkProblem = (error) => ({
    status: 0,
    code: "unavailable",
    title: "Network error",
    detail: String(error),
  });

  // --- who the token is ----------------------------------------------------------------

  // GET /v1/whoami with `value` as the bearer token (none: the tab's own, if any).
  async function whoami(value) {
    const sent = { Accept: "application/json" };
    if (value) sent.Authorization = "Bearer " + value;
    const response = await fetch("/v1/whoami", {
      headers: value === undefined ? headers(sent) : sent,
      cache: "no-store",
    });
    if (!response.ok) return { problem: await problemOf(response) };
    return { answer: await response.json() };
  }

  // What the role may do, on <body data-may>: the stylesheet hides every [data-needs]
  // element whose permission is missing (fragments loaded later included).
  function allow(permissions) {
    document.body.dataset.may = permissions.join(" ");
  }

  function showIdentity(state, answer) {
    state.dataset.mode = answer.mode;
    state.dataset.role = answer.role;
    if (answer.mode === "open") {
      state.textContent = "Open mode: no token needed";
    } else {
      state.replaceChildren(
        element("strong", "token-name", answer.name),
        " · " + answer.role + " ",
        element("span", "token-kept", "(kept for this tab)")
      );
    }
  }

  function showProblem(state, problem, prefix) {
    state.dataset.mode = "refused";
    state.replaceChildren(prefix + problem.detail + " (" + problem.code + ")");
  }

  async function identify(state) {
    let found;
    try {
      found = await whoami();
    } catch (error) {
      found = { problem: networkProblem(error) };
    }
    if (found.answer) {
      showIdentity(state, found.answer);
      allow(found.answer.permissions);
    } else if (found.problem.status === 401 && !token()) {
      state.dataset.mode = "tokens";
      state.textContent = "Tokens are required: paste one";
      allow([]);
    } else if (found.problem.status === 401) {
      showProblem(state, found.problem, "The kept token is refused: ");
      allow([]);
    } else {
      // Not known: show every action; the API still refuses what the role may not.
      showProblem(state, found.problem, "Could not check the token: ");
      allow(["read", "write", "admin"]);
    }
    document.body.dataset.whoami = "done";
  }

  function setupToken() {
    const form = document.getElementById("token-form");
    if (!form) return;
    const input = document.getElementById("token-input");
    const state = document.getElementById("token-state");
    identify(state);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const value = input.value.trim();
      input.value = "";
      if (!value) return;
      // Checked before it is kept: a refused token never reaches sessionStorage.
      let found;
      try {
        found = await whoami(value);
      } catch (error) {
        found = { problem: networkProblem(error) };
      }
      if (found.problem) {
        showProblem(state, found.problem, "Token not kept: ");
        return;
      }
      sessionStorage.setItem(TOKEN_KEY, value);
      location.reload();
    });
    document.getElementById("token-forget").addEventListener("click", () => {
      sessionStorage.removeItem(TOKEN_KEY);
      location.reload();
    });
  }

  // --- the jump box ----------------------------------------------------------------------

  function setupJump() {
    const form = document.getElementById("jump-form");
    if (!form) return;
    const input = document.getElementById("jump-input");
    const result = document.getElementById("jump-result");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const wanted = input.value.trim();
      if (!wanted) return;
      result.replaceChildren("Looking up…");
      let response;
      try {
        response = await fetch("/console/go?id=" + encodeURIComponent(wanted), {
          headers: headers({ Accept: "application/json" }),
          cache: "no-store",
        });
      } catch (error) {
        result.replaceChildren("Network error: " + String(error));
        return;
      }
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        result.dataset.result = body.code || "refused";
        result.replaceChildren((body.detail || "Refused") + " (" + (body.code || response.status) + ")");
        return;
      }
      const found = body.found || [];
      result.dataset.result = found.length ? "found" : "not-found";
      if (found.length === 1) {
        location.assign(found[0].url);
        return;
      }
      if (!found.length) {
        result.replaceChildren("No session or run has the ID " + wanted + ".");
        return;
      }
      const links = found.map((match) => {
        const link = element("a", "", match.kind);
        link.href = match.url;
        link.dataset.kind = match.kind;
        return link;
      });
      result.replaceChildren(wanted + " is both: ", links[0], " · ", links[1]);
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

  function reloadSlot(id) {
    const slot = document.getElementById(id);
    return slot ? load(slot) : Promise.resolve();
  }

  // The slots a session action changes: the session page's, or the run page's.
  const reloadSession = () => Promise.all(["session", "meta", "children"].map(reloadSlot));

  // A session dialog names the session of the button that opened it (the run page's
  // dialogs are written before the run's session is known).
  function nameSession(dialog, id) {
    dialog.querySelectorAll("[data-session-id]").forEach((node) => {
      node.dataset.sessionId = id;
    });
    dialog.querySelectorAll(".dialog-session").forEach((node) => {
      node.textContent = id;
    });
  }

  async function askEnd(id) {
    const dialog = document.getElementById("end-dialog");
    nameSession(dialog, id);
    dialog.showModal();
  }

  async function endSession(id) {
    const dialog = document.getElementById("end-dialog");
    const response = await fetch(sessionPath(id) + "/end", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "application/json" }),
      body: JSON.stringify({ ended_at: new Date().toISOString() }),
    });
    if (dialog) dialog.close();
    if (!response.ok) return refusal(response);
    await reloadSession();
    notice("Session " + id + " ended.");
  }

  async function askPurge(id) {
    const dialog = document.getElementById("purge-dialog");
    const summary = document.getElementById("purge-summary");
    nameSession(dialog, id);
    summary.dataset.fragment = "/console/fragments/session/purge?session_id=" + encodeURIComponent(id);
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

  async function retryDelivery(button) {
    const response = await fetch(button.dataset.api, {
      method: "POST",
      headers: headers({ Accept: "application/json" }),
    });
    if (!response.ok) return refusal(response);
    await reloadSlot("webhooks");
    notice("Delivery " + button.dataset.eventId + " queued again.");
  }

  async function askDeleteWebhook(button) {
    const dialog = document.getElementById("webhook-delete-dialog");
    document.getElementById("webhook-delete-url").textContent = button.dataset.url;
    document.getElementById("webhook-delete-confirm").dataset.api = button.dataset.api;
    document.getElementById("webhook-delete-confirm").dataset.url = button.dataset.url;
    dialog.showModal();
  }

  async function deleteWebhook(button) {
    const dialog = document.getElementById("webhook-delete-dialog");
    const response = await fetch(button.dataset.api, {
      method: "DELETE",
      headers: headers({ Accept: "application/json" }),
    });
    dialog.close();
    if (!response.ok) return refusal(response);
    await reloadSlot("webhooks");
    notice("Subscription to " + button.dataset.url + " deleted.");
  }

  const CONFIRMS = {
    "end-confirm": "confirm-end",
    "purge-confirm": "confirm-purge",
    "webhook-delete-confirm": "confirm-delete-webhook",
  };

  function setupActions() {
    document.addEventListener("click", (event) => {
      const button = event.target.closest(
        "[data-action], #end-confirm, #purge-confirm, #webhook-delete-confirm"
      );
      if (!button) return;
      const id = button.dataset.sessionId;
      const action = CONFIRMS[button.id] || button.dataset.action;
      const run = {
        end: () => askEnd(id),
        "confirm-end": () => endSession(id),
        purge: () => askPurge(id),
        "confirm-purge": () => purgeSession(id),
        export: () => exportSession(id),
        "retry-delivery": () => retryDelivery(button),
        "delete-webhook": () => askDeleteWebhook(button),
        "confirm-delete-webhook": () => deleteWebhook(button),
      }[action];
      if (!run) return;
      button.disabled = true;
      run()
        .catch((error) => showResult(problemElement(networkProblem(error))))
        .finally(() => {
          button.disabled = false;
        });
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupToken();
    setupJump();
    setupActions();
  });
})();
