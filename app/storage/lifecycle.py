"""Lifecycle changes of a running run (CONTRACT.md 3.8-3.11): cancellation, suspension,
terminal status, and the two repairs.

Each opens the run with its writers' lock held (``Tx.open_run``), checks the competing
lifecycle facts in the contract's order, runs the append check, and stores the state
change together with its record (and, for a suspension, the checkpoint).
"""

from __future__ import annotations

from app.domain import validation as v
from app.domain.commands import check_terminal_against_run
from app.domain.payloads import RunCompletedPayload
from app.domain.state import RunState, SessionState
from runtime_store_client import (
    AppendResult,
    Checkpoint,
    Record,
    RepairOutcome,
    RepairResult,
    RunCancellationConflictError,
    RunNotActiveError,
    RunStatus,
    RunSuspensionConflictError,
    RunTerminalConflictError,
    StoreError,
)

from . import fast_path
from .append_check import check_append, insert, result
from .context import Context
from .unit_of_work import Tx


def _check_bounds(
    ctx: Context,
    run_id: str,
    record: Record,
    reason: str = "",
    checkpoint: Checkpoint | None = None,
) -> None:
    ctx.limits.check_id(run_id, "run_id")
    ctx.limits.check_id(reason, "reason")
    ctx.limits.check_record(record)
    if checkpoint is not None:
        ctx.limits.check_checkpoint(checkpoint)


def _suspension_input(
    ctx: Context, run_id: str, checkpoint: Checkpoint, record: Record
) -> v.NewRecord:
    """The input of a suspension or its repair, checked without state (3.9)."""
    _check_bounds(ctx, run_id, record, checkpoint=checkpoint)
    return v.check_suspension(run_id, checkpoint, record)


def _terminal_input(
    ctx: Context, run_id: str, status: RunStatus, record: Record
) -> tuple[RunStatus, v.NewRecord, RunCompletedPayload]:
    """The input of a terminal write or its repair, checked without state (3.10)."""
    _check_bounds(ctx, run_id, record)
    return v.check_terminal(run_id, status, record)


def record_run_cancellation(ctx: Context, run_id: str, reason: str, record: Record) -> AppendResult:
    """Store the first cancellation reason of a run with its intent record (3.8)."""
    _check_bounds(ctx, run_id, record, reason=reason)
    rec = v.check_cancellation(run_id, reason, record)

    def operation(tx: Tx) -> AppendResult:
        run, session = tx.open_run(run_id, rec.event_key)
        if run.cancellation_reason and run.cancellation_reason != reason:
            raise RunCancellationConflictError(
                f"run {run_id!r} was already canceled with reason {run.cancellation_reason!r}",
                run_id=run_id,
            )
        stored = check_append(tx, run, rec)
        if stored is not None:
            return result(stored, inserted=False, session=session)
        # The remembered key, not the reason, says whether a cancellation was stored: a run
        # stopped at start has the reason session_ended and no key (1.8, 3.8).
        if not run.cancellation_key and run.terminal:
            raise RunNotActiveError(f"run {run_id!r} is {run.status.value}", run_id=run_id)
        if run.cancellation_key:
            raise RunCancellationConflictError(
                f"run {run_id!r} cancellation was stored by another event", run_id=run_id
            )
        tx.change_run(run, cancellation_reason=reason, cancellation_key=rec.event_key)
        return insert(tx, run, rec, session)

    return ctx.uow.write(operation)


def _same_checkpoint(stored: tuple[str, bytes] | None, checkpoint: Checkpoint) -> bool:
    return stored is not None and stored == (checkpoint.id, bytes(checkpoint.data))


def _suspend(
    tx: Tx, run: RunState, session: SessionState | None, checkpoint: Checkpoint, rec: v.NewRecord
) -> AppendResult:
    if run.terminal and run.status is not RunStatus.SUSPENDED:
        raise RunTerminalConflictError(
            f"run {run.run_id!r} is already {run.status.value}", run_id=run.run_id
        )
    stored_checkpoint = tx.checkpoint(run.run_id) if run.terminal else None
    if stored_checkpoint is not None and not _same_checkpoint(stored_checkpoint, checkpoint):
        raise RunSuspensionConflictError(
            f"run {run.run_id!r} holds another checkpoint", run_id=run.run_id
        )
    stored = check_append(tx, run, rec)
    if stored is not None:
        return result(stored, inserted=False, session=session)
    if run.terminal:
        raise RunSuspensionConflictError(
            f"run {run.run_id!r} was suspended by another event", run_id=run.run_id
        )
    tx.change_run(
        run, status=RunStatus.SUSPENDED, suspension_key=rec.event_key, terminal_key=rec.event_key
    )
    tx.add_checkpoint(run, checkpoint.id, bytes(checkpoint.data))
    return insert(tx, run, rec, session)


def record_run_suspension(
    ctx: Context, run_id: str, checkpoint: Checkpoint, record: Record
) -> AppendResult:
    """Suspend a run with its checkpoint and ``run_suspended`` record (3.9)."""
    rec = _suspension_input(ctx, run_id, checkpoint, record)

    def operation(tx: Tx) -> AppendResult:
        run, session = tx.open_run(run_id, rec.event_key)
        return _suspend(tx, run, session, checkpoint, rec)

    return ctx.uow.write(operation)


def _finish(
    tx: Tx, run: RunState, session: SessionState | None, terminal: RunStatus, rec: v.NewRecord
) -> AppendResult:
    if run.terminal and run.status is not terminal:
        raise RunTerminalConflictError(
            f"run {run.run_id!r} is already {run.status.value}", run_id=run.run_id
        )
    stored = check_append(tx, run, rec)
    if stored is not None:
        return result(stored, inserted=False, session=session)
    if run.terminal:
        raise RunTerminalConflictError(
            f"run {run.run_id!r} was finished by another event", run_id=run.run_id
        )
    tx.change_run(run, status=terminal, terminal_key=rec.event_key)
    return insert(tx, run, rec, session)


def record_run_terminal(
    ctx: Context, run_id: str, status: RunStatus, record: Record
) -> AppendResult:
    """Finish a run: completed, failed or canceled, with its ``run_completed`` (3.10)."""
    terminal, rec, payload = _terminal_input(ctx, run_id, status, record)
    if ctx.uow.dialect.fast_path:
        # PostgreSQL: one round trip for the change and the exact retry; anything the
        # statement refuses goes through the transaction below, which raises the error.
        found = ctx.uow.statement(lambda tx: fast_path.finish_run(tx, terminal, rec, payload))
        if found is not None:
            return found

    def operation(tx: Tx) -> AppendResult:
        run, session = tx.open_run(run_id, rec.event_key)
        check_terminal_against_run(run.labels, run.cancellation_reason, terminal, payload)
        return _finish(tx, run, session, terminal, rec)

    return ctx.uow.write(operation)


def _already_stored(
    tx: Tx, run: RunState, session: SessionState | None, rec: v.NewRecord
) -> RepairResult:
    try:
        stored = check_append(tx, run, rec)
    except StoreError:
        stored = None
    if stored is None:
        return _different(run)
    return RepairResult(
        outcome=RepairOutcome.ALREADY_STORED,
        status=run.status,
        record=result(stored, inserted=False, session=session),
    )


def _different(run: RunState) -> RepairResult:
    return RepairResult(outcome=RepairOutcome.DIFFERENT_TERMINAL, status=run.status)


def _stored(run: RunState, record: AppendResult) -> RepairResult:
    return RepairResult(outcome=RepairOutcome.STORED, status=run.status, record=record)


def repair_run_suspension(
    ctx: Context, run_id: str, checkpoint: Checkpoint, record: Record
) -> RepairResult:
    """Make sure a suspension is stored; a different final state is reported (3.11)."""
    rec = _suspension_input(ctx, run_id, checkpoint, record)

    def operation(tx: Tx) -> RepairResult:
        run, session = tx.open_run(run_id, rec.event_key)
        if run.status is RunStatus.RUNNING:
            return _stored(run, _suspend(tx, run, session, checkpoint, rec))
        if (
            run.status is RunStatus.SUSPENDED
            and run.suspension_key == rec.event_key
            and _same_checkpoint(tx.checkpoint(run_id), checkpoint)
        ):
            return _already_stored(tx, run, session, rec)
        return _different(run)

    return ctx.uow.write(operation)


def repair_run_terminal(
    ctx: Context, run_id: str, status: RunStatus, record: Record
) -> RepairResult:
    """Make sure a terminal status is stored; a different one is reported (3.11)."""
    terminal, rec, payload = _terminal_input(ctx, run_id, status, record)

    def operation(tx: Tx) -> RepairResult:
        run, session = tx.open_run(run_id, rec.event_key)
        check_terminal_against_run(run.labels, run.cancellation_reason, terminal, payload)
        if run.status is RunStatus.RUNNING:
            return _stored(run, _finish(tx, run, session, terminal, rec))
        if run.status is terminal and run.terminal_key == rec.event_key:
            return _already_stored(tx, run, session, rec)
        return _different(run)

    return ctx.uow.write(operation)
