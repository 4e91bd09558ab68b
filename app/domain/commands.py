"""The lifecycle commands (CONTRACT.md 3.8-3.11) as decisions over the run's stored state.

Pure: each takes the facts it needs from the run and the command and raises the contract's
error or answers. The storage operation, the importer and the PostgreSQL fast path all
decide with these (the fast path is handed their answers as parameters and only compares).
"""

from __future__ import annotations

import enum

from app.domain.append import append_check
from app.domain.payloads import RunCompletedPayload
from app.domain.state import RunState, StoredRecord
from app.domain.validation import NewRecord, labels_json
from runtime_store_client import (
    CancellationReason,
    Checkpoint,
    InvalidArgumentError,
    RunCancellationConflictError,
    RunNotActiveError,
    RunStatus,
    RunSuspensionConflictError,
    RunTerminalConflictError,
    StoreError,
)

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


def labels_match(run_labels: str, payload: RunCompletedPayload) -> bool:
    """Whether a ``run_completed`` carries the run's labels (3.10; ``run_labels`` is the
    run's canonical label JSON)."""
    return labels_json(payload.labels) == run_labels


def check_terminal_against_run(
    run_labels: str, run_cancellation_reason: str, terminal: RunStatus, payload: RunCompletedPayload
) -> None:
    """The ``run_completed`` rules that need the run (3.10): its labels are the run's, and
    a canceled one carries the stored cancellation reason (``engine_canceled`` when none)."""
    if not labels_match(run_labels, payload):
        raise InvalidArgumentError("run_completed labels must equal the run's labels")
    accepted = accepted_cancellation_reasons(terminal, payload.cancellation_reason)
    if accepted is not None and run_cancellation_reason not in accepted:
        expected = run_cancellation_reason or _ENGINE_CANCELED
        raise InvalidArgumentError(
            f"run_completed cancellation reason must be {expected!r}, "
            f"not {payload.cancellation_reason!r}"
        )


def cancellation(
    run: RunState, reason: str, record: NewRecord, stored: StoredRecord | None
) -> str | None:
    """3.8 after the run's lock and purge checks: the exact retry's ID, or ``None`` to
    store the reason and the record."""
    if run.cancellation_reason and run.cancellation_reason != reason:
        raise RunCancellationConflictError(
            f"run {run.run_id!r} was already canceled with reason {run.cancellation_reason!r}",
            run_id=run.run_id,
        )
    retried = append_check(run, record, stored)
    if retried is not None:
        return retried
    # The remembered key, not the reason, says whether a cancellation was stored: a run
    # stopped at start has the reason session_ended and no key (1.8, 3.8).
    if not run.cancellation_key and run.terminal:
        raise RunNotActiveError(f"run {run.run_id!r} is {run.status.value}", run_id=run.run_id)
    if run.cancellation_key:
        raise RunCancellationConflictError(
            f"run {run.run_id!r} cancellation was stored by another event", run_id=run.run_id
        )
    return None


def same_checkpoint(stored: tuple[str, bytes] | None, checkpoint: Checkpoint) -> bool:
    """Whether the stored checkpoint (ID, data) is this one, byte for byte."""
    return stored is not None and stored == (checkpoint.id, bytes(checkpoint.data))


def suspension(
    run: RunState,
    checkpoint: Checkpoint,
    record: NewRecord,
    stored: StoredRecord | None,
    stored_checkpoint: tuple[str, bytes] | None,
) -> str | None:
    """3.9 after the run's lock and purge checks (``stored_checkpoint`` read when the run
    is terminal): the exact retry's ID, or ``None`` to suspend with the checkpoint."""
    if run.terminal and run.status is not RunStatus.SUSPENDED:
        raise RunTerminalConflictError(
            f"run {run.run_id!r} is already {run.status.value}", run_id=run.run_id
        )
    if stored_checkpoint is not None and not same_checkpoint(stored_checkpoint, checkpoint):
        raise RunSuspensionConflictError(
            f"run {run.run_id!r} holds another checkpoint", run_id=run.run_id
        )
    retried = append_check(run, record, stored)
    if retried is not None:
        return retried
    if run.terminal:
        raise RunSuspensionConflictError(
            f"run {run.run_id!r} was suspended by another event", run_id=run.run_id
        )
    return None


def terminal(
    run: RunState, status: RunStatus, record: NewRecord, stored: StoredRecord | None
) -> str | None:
    """3.10 after the run's lock, purge checks and ``check_terminal_against_run``: the
    exact retry's ID, or ``None`` to finish the run in ``status``."""
    if run.terminal and run.status is not status:
        raise RunTerminalConflictError(
            f"run {run.run_id!r} is already {run.status.value}", run_id=run.run_id
        )
    retried = append_check(run, record, stored)
    if retried is not None:
        return retried
    if run.terminal:
        raise RunTerminalConflictError(
            f"run {run.run_id!r} was finished by another event", run_id=run.run_id
        )
    return None


class Repair(enum.Enum):
    """What a repair (3.11) does: the normal write, report the stored record, or report a
    different final state (not an error; nothing written)."""

    WRITE = enum.auto()
    ALREADY_STORED = enum.auto()
    DIFFERENT = enum.auto()


def repair_suspension(
    run: RunState,
    checkpoint: Checkpoint,
    record: NewRecord,
    stored_checkpoint: tuple[str, bytes] | None,
) -> Repair:
    """3.11 for a suspension (``stored_checkpoint`` read when the run is suspended)."""
    if run.status is RunStatus.RUNNING:
        return Repair.WRITE
    if (
        run.status is RunStatus.SUSPENDED
        and run.suspension_key == record.event_key
        and same_checkpoint(stored_checkpoint, checkpoint)
    ):
        return Repair.ALREADY_STORED
    return Repair.DIFFERENT


def repair_terminal(run: RunState, status: RunStatus, record: NewRecord) -> Repair:
    """3.11 for a terminal status, after ``check_terminal_against_run``."""
    if run.status is RunStatus.RUNNING:
        return Repair.WRITE
    if run.status is status and run.terminal_key == record.event_key:
        return Repair.ALREADY_STORED
    return Repair.DIFFERENT


def already_stored(run: RunState, record: NewRecord, stored: StoredRecord | None) -> str | None:
    """A repair's ``already_stored``: the stored record's ID when it is this record, else
    ``None`` (reported as ``different_terminal``)."""
    try:
        return append_check(run, record, stored)
    except StoreError:
        return None
