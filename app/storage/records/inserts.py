"""The append check (CONTRACT.md 2.3, decided in ``app.domain.append``) read in a
transaction, the insert with the next record ID and session position, and the append
result (2.4), for every write."""

from __future__ import annotations

from app.domain.append import check_owner, same_record
from app.domain.state import RunState, SessionState
from app.domain.validation import NewRecord
from app.storage.database.row_mapping import record_row
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import AppendResult


def check_append(tx: Tx, run: RunState, record: NewRecord) -> str | None:
    """The append check (``app.domain.append.append_check``) with the record stored under
    the key read in this transaction (already read with the run on the hot paths)."""
    check_owner(run, record)
    if run.is_new:
        return None
    return same_record(run.run_id, tx.stored_record(run.run_id, record.event_key), record)


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
