// runtime-store console: the token bar and the admin actions (the API decides who may).
// Builds on console.js (window.runtimeStoreConsole); untrusted text reaches the DOM only as
// textContent.
"use strict";

(() => {
  const { TOKEN_KEY, token, headers, element, humanBytes, problemOf, problemElement, notice, load } =
    window.runtimeStoreConsole;

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

  document.addEventListener("DOMContentLoaded", () => {
    setupToken();
    setupActions();
  });
})();
