"""The append check (CONTRACT.md 2.3) and the append result (2.4), for every write.

Every record any operation writes goes through ``check_append`` before ``insert``: the
record's agent and session must be its run's; a record already stored under its event
key is an exact retry (its original ID) when it is *the same* (1.7: every field of
``NewRecord``, the payload byte for byte) and an ``event_conflict`` otherwise.
"""

from __future__ import annotations

from app.domain.validation import NewRecord
from runtime_store_client import AppendResult, EventConflictError, RunRecordOwnerMismatchError

from .rows import RunState, SessionState, record_row
from .unit_of_work import Tx


def check_owner(run: RunState, record: NewRecord) -> None:
    """The record's agent and session must be its run's (``run_record_owner_mismatch``)."""
    if record.agent_id != run.agent_id or record.session_id != run.session_id:
        raise RunRecordOwnerMismatchError(
            f"record {record.event_key!r} must carry agent {run.agent_id!r} and "
            f"session {run.session_id!r} of run {run.run_id!r}",
            run_id=run.run_id,
            event_key=record.event_key,
        )


def check_append(tx: Tx, run: RunState, record: NewRecord) -> str | None:
    """The owner and key parts of the append check.

    Returns the ID of the same record when it is already stored (an exact retry),
    ``None`` when the key is free; raises on another owner or other content.
    """
    check_owner(run, record)
    if run.is_new:
        return None
    stored = tx.stored_record(run.run_id, record.event_key)
    if stored is None:
        return None
    if stored.record != record:
        raise EventConflictError(
            f"event {record.event_key!r} of run {run.run_id!r} is already stored "
            "with other content",
            run_id=run.run_id,
            event_key=record.event_key,
        )
    return str(stored.seq)


def result(record_id: str, *, inserted: bool, session: SessionState | None) -> AppendResult:
    """The append result; ``session_status`` as read in this transaction (2.4)."""
    return AppendResult(
        id=record_id,
        inserted=inserted,
        session_status=session.contract_status if session is not None else None,
    )


def expect_stored(
    tx: Tx, run: RunState, record: NewRecord, session: SessionState | None
) -> AppendResult:
    """An exact retry of a lifecycle record the run remembers: its original ID."""
    record_id = check_append(tx, run, record)
    if record_id is None:
        raise RuntimeError(
            f"run {run.run_id!r} remembers {record.event_key!r} but the record is missing"
        )
    return result(record_id, inserted=False, session=session)


def insert(tx: Tx, run: RunState, record: NewRecord, session: SessionState | None) -> AppendResult:
    """Append a record with the next ID of its run and the next session position."""
    run.record_count += 1
    run.dirty = True
    position: int | None = None
    if session is not None:
        session.record_count += 1
        tx.mark_session(session)
        position = session.record_count
    tx.add_record(record_row(record, run.record_count, position))
    return result(str(run.record_count), inserted=True, session=session)
