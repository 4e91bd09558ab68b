// runtime-store console: the admin actions on a run (the run page), each confirmed first in a
// dialog; nothing is sent before the confirm button. The API decides who may: a refusal
// shows its problem. The records follow CONTRACT.md 5:
// - cancel: POST /v1/runs/{id}/cancellation, a runtime.cancellation_intent record whose
//   payload's reason is the command's (3.8); the run stays running until it ends;
// - finish by repair: POST /v1/runs/{id}/terminal/repair with a strict run_completed record
//   (3.10, 3.11): status and phase, the run's labels, failure for failed, and for canceled
//   the stored cancellation reason (engine_canceled when none was requested).
// Builds on console.js (window.runtimeStoreConsole); untrusted text reaches the DOM only as
// textContent.
"use strict";

(() => {
  const { headers, element, problemOf, problemElement, notice, load } = window.runtimeStoreConsole;

  const PAYLOAD_STATUS = { completed: "success", failed: "failed", canceled: "canceled" };

  function facts() {
    const node = document.getElementById("run-facts");
    if (!node) return null;
    let labels = {};
    try {
      labels = JSON.parse(node.dataset.labels || "{}");
    } catch (_) {
      labels = {};
    }
    return {
      runId: node.dataset.runId,
      agentId: node.dataset.agentId,
      sessionId: node.dataset.sessionId,
      reason: node.dataset.reason || "",
      labels,
    };
  }

  const runPath = (id) => "/v1/runs/" + encodeURIComponent(id);

  // A key of its own per action: a repeated click is a new request the API judges.
  const eventKey = (kind) =>
    "console-" + kind + "-" + Date.now() + "-" + Math.random().toString(36).slice(2, 8);

  function record(run, type, payload) {
    return {
      event_key: eventKey(type === "run_completed" ? "terminal" : "cancel"),
      run_id: run.runId,
      agent_id: run.agentId,
      session_id: run.sessionId,
      turn_id: "",
      type,
      payload: JSON.stringify(payload),
      timestamp: new Date().toISOString(), // milliseconds, UTC
    };
  }

  function completed(run, status, reason, message) {
    const payload = { status: PAYLOAD_STATUS[status], phase: status };
    if (status === "failed") payload.failure = { message: message || "finished by an operator", kind: "operator" };
    if (status === "canceled") payload.cancellation = { reason: reason || "engine_canceled" };
    if (Object.keys(run.labels).length) payload.labels = run.labels;
    return payload;
  }

  function show(content) {
    const box = document.getElementById("action-result");
    if (box) box.replaceChildren(content);
  }

  async function post(path, body) {
    return fetch(path, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "application/json" }),
      body: JSON.stringify(body),
    });
  }

  async function reloadRun() {
    await Promise.all(
      ["meta", "children", "timeline", "records"].map((id) => {
        const slot = document.getElementById(id);
        return slot ? load(slot) : Promise.resolve();
      })
    );
  }

  // Returns false (with the problem shown) when the API refused.
  async function repairTerminal(run, status, reason, message) {
    const response = await post(runPath(run.runId) + "/terminal/repair", {
      status,
      record: record(run, "run_completed", completed(run, status, reason, message)),
    });
    if (!response.ok) {
      show(problemElement(await problemOf(response)));
      return false;
    }
    const result = await response.json();
    if (result.outcome === "different_terminal") {
      const text = "Nothing written: the run is already " + result.status + " (different_terminal).";
      show(element("p", "problem", text));
      return false;
    }
    return true;
  }

  function askCancel(button) {
    const dialog = document.getElementById("run-cancel-dialog");
    const reason = document.getElementById("run-cancel-reason");
    const finish = document.getElementById("run-cancel-finish");
    const stored = button.dataset.reason || "";
    reason.value = stored || "user_requested";
    reason.readOnly = Boolean(stored); // the first reason is kept for good (3.8)
    finish.checked = Boolean(stored);
    dialog.showModal();
  }

  async function cancelRun() {
    const dialog = document.getElementById("run-cancel-dialog");
    const run = facts();
    const reason = document.getElementById("run-cancel-reason").value.trim();
    const finish = document.getElementById("run-cancel-finish").checked;
    dialog.close();
    if (!run || !reason) return;
    if (!run.reason) {
      const response = await post(runPath(run.runId) + "/cancellation", {
        reason,
        record: record(run, "runtime.cancellation_intent", { reason }),
      });
      if (!response.ok) {
        show(problemElement(await problemOf(response)));
        return;
      }
    }
    if (finish && !(await repairTerminal(run, "canceled", run.reason || reason, ""))) return;
    await reloadRun();
    notice(
      finish
        ? "Run " + run.runId + " canceled (" + reason + ")."
        : "Cancellation of run " + run.runId + " requested (" + reason + "): its worker ends it."
    );
  }

  function askRepair() {
    document.getElementById("run-repair-dialog").showModal();
  }

  async function repairRun() {
    const dialog = document.getElementById("run-repair-dialog");
    const run = facts();
    const status = document.getElementById("run-repair-status").value;
    const message = document.getElementById("run-repair-message").value.trim();
    dialog.close();
    if (!run) return;
    if (!(await repairTerminal(run, status, run.reason, message))) return;
    await reloadRun();
    notice("Run " + run.runId + " finished as " + status + " by a repair.");
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest(
      "[data-action=run-cancel], [data-action=run-repair], #run-cancel-confirm, #run-repair-confirm"
    );
    if (!button) return;
    const act = {
      "run-cancel": async () => askCancel(button),
      "run-repair": async () => askRepair(),
      "run-cancel-confirm": cancelRun,
      "run-repair-confirm": repairRun,
    }[button.id || button.dataset.action];
    if (!act) return;
    button.disabled = true;
    act()
      .catch((error) => show(problemElement({ status: 0, code: "unavailable", title: "Network error", detail: String(error) })))
      .finally(() => {
        button.disabled = false;
      });
  });
})();
