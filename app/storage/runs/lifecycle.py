"""Lifecycle changes of a running run (CONTRACT.md 3.8-3.11): cancellation, suspension,
terminal status, and the two repairs.

Each opens the run with its writers' lock held (``Tx.open_run``, which also reads the
record stored under the command's key), lets ``app.domain.commands`` decide (the competing
lifecycle facts in the contract's order, then the append check), and stores the state
change together with its record (and, for a suspension, the checkpoint).
"""

from __future__ import annotations

from collections.abc import Callable

from app.domain import commands
from app.domain import validation as v
from app.domain.payloads import RunCompletedPayload
from app.domain.state import RunState, SessionState, StoredRecord
from app.storage import fast_path
from app.storage.operation import Context
from app.storage.records.inserts import insert, result
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    AppendResult,
    Checkpoint,
    Record,
    RepairOutcome,
    RepairResult,
    RunStatus,
    WebhookEventType,
)


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
        retried = commands.cancellation(run, reason, rec, _stored(tx, run, rec))
        if retried is not None:
            return result(retried, inserted=False, session=session)
        tx.change_run(run, cancellation_reason=reason, cancellation_key=rec.event_key)
        return insert(tx, run, rec, session)

    return ctx.uow.write(operation)


def _stored(tx: Tx, run: RunState, rec: v.NewRecord) -> StoredRecord | None:
    """The record stored under the command's key (read with the run by ``open_run``)."""
    return tx.stored_record(run.run_id, rec.event_key)


def _suspend(
    tx: Tx, run: RunState, session: SessionState | None, checkpoint: Checkpoint, rec: v.NewRecord
) -> AppendResult:
    stored_checkpoint = tx.checkpoint(run.run_id) if run.terminal else None
    retried = commands.suspension(run, checkpoint, rec, _stored(tx, run, rec), stored_checkpoint)
    if retried is not None:
        return result(retried, inserted=False, session=session)
    tx.change_run(
        run, status=RunStatus.SUSPENDED, suspension_key=rec.event_key, terminal_key=rec.event_key
    )
    tx.add_checkpoint(run, checkpoint.id, bytes(checkpoint.data))
    tx.add_event(WebhookEventType.RUN_SUSPENDED, session_id=run.session_id, run=run)
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
    tx: Tx, run: RunState, session: SessionState | None, status: RunStatus, rec: v.NewRecord
) -> AppendResult:
    retried = commands.terminal(run, status, rec, _stored(tx, run, rec))
    if retried is not None:
        return result(retried, inserted=False, session=session)
    tx.change_run(run, status=status, terminal_key=rec.event_key)
    tx.add_event(WebhookEventType.RUN_FINISHED, session_id=run.session_id, run=run)
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
        commands.check_terminal_against_run(run.labels, run.cancellation_reason, terminal, payload)
        return _finish(tx, run, session, terminal, rec)

    return ctx.uow.write(operation)


def _repaired(
    tx: Tx,
    run: RunState,
    session: SessionState | None,
    rec: v.NewRecord,
    repair: commands.Repair,
    write: Callable[[], AppendResult],
) -> RepairResult:
    if repair is commands.Repair.WRITE:
        written = write()  # the status answered is the one it wrote
        return RepairResult(outcome=RepairOutcome.STORED, status=run.status, record=written)
    if repair is commands.Repair.ALREADY_STORED:
        stored = commands.already_stored(run, rec, _stored(tx, run, rec))
        if stored is not None:
            return RepairResult(
                outcome=RepairOutcome.ALREADY_STORED,
                status=run.status,
                record=result(stored, inserted=False, session=session),
            )
    return RepairResult(outcome=RepairOutcome.DIFFERENT_TERMINAL, status=run.status)


def repair_run_suspension(
    ctx: Context, run_id: str, checkpoint: Checkpoint, record: Record
) -> RepairResult:
    """Make sure a suspension is stored; a different final state is reported (3.11)."""
    rec = _suspension_input(ctx, run_id, checkpoint, record)

    def operation(tx: Tx) -> RepairResult:
        run, session = tx.open_run(run_id, rec.event_key)
        stored_checkpoint = tx.checkpoint(run_id) if run.status is RunStatus.SUSPENDED else None
        repair = commands.repair_suspension(run, checkpoint, rec, stored_checkpoint)
        return _repaired(
            tx, run, session, rec, repair, lambda: _suspend(tx, run, session, checkpoint, rec)
        )

    return ctx.uow.write(operation)


def repair_run_terminal(
    ctx: Context, run_id: str, status: RunStatus, record: Record
) -> RepairResult:
    """Make sure a terminal status is stored; a different one is reported (3.11)."""
    terminal, rec, payload = _terminal_input(ctx, run_id, status, record)

    def operation(tx: Tx) -> RepairResult:
        run, session = tx.open_run(run_id, rec.event_key)
        commands.check_terminal_against_run(run.labels, run.cancellation_reason, terminal, payload)
        repair = commands.repair_terminal(run, terminal, rec)
        return _repaired(
            tx, run, session, rec, repair, lambda: _finish(tx, run, session, terminal, rec)
        )

    return ctx.uow.write(operation)
