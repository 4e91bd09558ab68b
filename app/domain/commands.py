"""Decisions of the lifecycle commands that need the run's stored state (CONTRACT.md 3.10).

Pure: each takes the facts it needs from the run and the command and raises the contract's
error or answers. The storage operation, the importer and the PostgreSQL fast path all
decide with these (the fast path is handed their answers as parameters and only compares).
"""

from __future__ import annotations

from app.domain.payloads import RunCompletedPayload
from app.domain.validation import labels_json
from runtime_store_client import CancellationReason, InvalidArgumentError, RunStatus

_ENGINE_CANCELED = CancellationReason.ENGINE_CANCELED.value


def accepted_cancellation_reasons(
    terminal: RunStatus, record_reason: str
) -> tuple[str, ...] | None:
    """The stored cancellation reasons a ``run_completed`` of ``terminal`` status accepts
    (3.10, cancellation provenance): its own reason, and for ``engine_canceled`` also none
    stored (""). ``None`` when the status is not ``canceled``: any stored reason will do."""
    if terminal is not RunStatus.CANCELED:
        return None
    if record_reason == _ENGINE_CANCELED:
        return (record_reason, "")
    return (record_reason,)


def check_terminal_against_run(
    run_labels: str, run_cancellation_reason: str, terminal: RunStatus, payload: RunCompletedPayload
) -> None:
    """The ``run_completed`` rules that need the run (3.10): its labels are the run's, and
    a canceled one carries the stored cancellation reason (``engine_canceled`` when none)."""
    if labels_json(payload.labels) != run_labels:
        raise InvalidArgumentError("run_completed labels must equal the run's labels")
    accepted = accepted_cancellation_reasons(terminal, payload.cancellation_reason)
    if accepted is not None and run_cancellation_reason not in accepted:
        expected = run_cancellation_reason or _ENGINE_CANCELED
        raise InvalidArgumentError(
            f"run_completed cancellation reason must be {expected!r}, "
            f"not {payload.cancellation_reason!r}"
        )
