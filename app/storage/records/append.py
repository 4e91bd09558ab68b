"""The ordinary append (CONTRACT.md 3.7): one record of a running run, one transaction,
or one statement of the fast path (grouped with concurrent appends when group commit is on)."""

from __future__ import annotations

from app.domain import validation as v
from app.domain.append import ordinary_append
from app.domain.validation import NewRecord
from app.storage import fast_path
from app.storage.fast_path.group_commit import Alone
from app.storage.operation import Context
from app.storage.records.inserts import insert, result
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import AppendResult, Record


def checked_ordinary(ctx: Context, record: Record) -> NewRecord:
    """An ordinary record as an append stores it, or the error of the first check it
    fails (the size limits, then the record's own rules)."""
    ctx.limits.check_record(record)
    return v.check_ordinary_record(record)


def append_run_record(ctx: Context, record: Record) -> AppendResult:
    """Append an ordinary record to a running run (3.7)."""
    rec = checked_ordinary(ctx, record)
    if ctx.uow.dialect.fast_path:
        # PostgreSQL: one round trip for the insert and the exact retry (grouped with
        # concurrent appends when group commit is on); anything the statement refuses
        # goes through the transaction below, which raises the error.
        found = _fast_append(ctx, rec)
        if found is not None:
            return found

    def operation(tx: Tx) -> AppendResult:
        run, session = tx.open_run(rec.run_id, rec.event_key)
        retried = ordinary_append(run, rec, tx.stored_record(run.run_id, rec.event_key))
        if retried is not None:
            return result(retried, inserted=False, session=session)
        return insert(tx, run, rec, session)

    return ctx.uow.write(operation)


def _fast_append(ctx: Context, rec: NewRecord) -> AppendResult | None:
    """The fast path's answer (``None``: refused), through the group commit when on."""
    if ctx.group_commit is not None:
        outcome = ctx.group_commit.append(rec)
        if isinstance(outcome, Exception):
            raise outcome
        if not isinstance(outcome, Alone):
            return outcome
    return ctx.uow.statement(lambda tx: fast_path.append_one(tx, rec))
