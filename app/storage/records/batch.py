"""Batch append (CONTRACT.md 11.2): up to 1,000 ordinary records of one run, one transaction.

Every record goes through the same checks as ``append_run_record`` (validation, owner,
purge, the append check against the stored records, ``run_not_active`` on a finished run),
in the given order; the stored records under the batch's keys are read with one statement.
A key repeated inside the batch is an exact retry of its first occurrence when the content
is the same, else ``event_conflict``. The first record that fails fails the whole batch, and
the problem names it (``event_key``); nothing is written. Results are in input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from app.domain import validation as v
from app.domain.append import batch_steps, named
from app.domain.state import StoredRecord
from app.storage import fast_path
from app.storage.database.row_mapping import stored_record_from_row
from app.storage.operation import Context
from app.storage.records.inserts import insert, result
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    AppendResult,
    InvalidArgumentError,
    Record,
    StoreError,
)

#: CONTRACT.md 11.2: 1 to 1,000 records per batch.
MAX_BATCH: Final = 1000


def _check_input(ctx: Context, run_id: str, records: Sequence[Record]) -> list[v.NewRecord]:
    v.require_id(run_id, "run_id")
    ctx.limits.check_id(run_id, "run_id")
    if isinstance(records, Record | str | bytes) or not isinstance(records, Sequence):
        raise InvalidArgumentError("records must be a list of records")
    if not 1 <= len(records) <= MAX_BATCH:
        raise InvalidArgumentError(
            f"a batch holds 1 to {MAX_BATCH} records, not {len(records)}", run_id=run_id
        )
    checked: list[v.NewRecord] = []
    for index, record in enumerate(records):
        key = getattr(record, "event_key", "")
        try:
            ctx.limits.check_record(record)
            rec = v.check_ordinary_record(record)
        except StoreError as exc:
            exc.message = f"records[{index}]: {exc.message}"
            raise named(exc, key if isinstance(key, str) else "") from None
        if rec.run_id != run_id:
            raise InvalidArgumentError(
                f"records[{index}] belongs to run {rec.run_id!r}, not {run_id!r}",
                run_id=run_id,
                event_key=rec.event_key,
            )
        checked.append(rec)
    return checked


def _stored(tx: Tx, run_id: str, keys: list[str]) -> dict[str, StoredRecord | None]:
    """The stored records under the batch's keys, in one statement."""
    found: dict[str, StoredRecord | None] = dict.fromkeys(keys)
    for row in tx.dialect.records_by_keys(tx.conn, run_id, keys):
        found[row.rec_event_key] = stored_record_from_row(row)
    return found


@dataclass(frozen=True, slots=True)
class OneStatementBatch:
    """A checked batch as the fast path's batch statement takes it: each distinct key once.
    A key repeated with the same content is answered from its first occurrence; one
    repeated with other content leaves the batch to the transaction (``event_conflict`` in
    the contract's order), as does a batch whose records name different agents or
    sessions."""

    run_id: str
    distinct: list[v.NewRecord]
    #: For each record of the batch, the index of its key in ``distinct``.
    at: list[int]

    @staticmethod
    def of(run_id: str, checked: Sequence[v.NewRecord]) -> OneStatementBatch | None:
        first: dict[str, int] = {}
        distinct: list[v.NewRecord] = []
        at: list[int] = []
        for rec in checked:
            index = first.get(rec.event_key)
            if index is None:
                index = first[rec.event_key] = len(distinct)
                distinct.append(rec)
            elif distinct[index] != rec:
                return None
            at.append(index)
        if fast_path.many_params(run_id, distinct) is None:
            return None
        return OneStatementBatch(run_id, distinct, at)

    def results(self, answered: list[AppendResult]) -> list[AppendResult]:
        """Every record's answer, in the batch's order, from the distinct keys' answers: a
        repeat of a key stored by this batch is an exact retry of it."""
        if len(self.distinct) == len(self.at):
            return answered
        seen: set[int] = set()
        results: list[AppendResult] = []
        for index in self.at:
            outcome = answered[index]
            if index in seen and outcome.inserted:
                outcome = AppendResult(
                    id=outcome.id, inserted=False, session_status=outcome.session_status
                )
            seen.add(index)
            results.append(outcome)
        return results


def _append_in_one_statement(
    ctx: Context, run_id: str, checked: list[v.NewRecord]
) -> list[AppendResult] | None:
    """The batch through ``fast_path.append_many`` (``OneStatementBatch``)."""
    batch = OneStatementBatch.of(run_id, checked)
    if batch is None:
        return None
    answered = ctx.uow.statement(lambda tx: fast_path.append_many(tx, run_id, batch.distinct))
    return None if answered is None else batch.results(answered)


def append_run_records(ctx: Context, run_id: str, records: Sequence[Record]) -> list[AppendResult]:
    """Append a batch of ordinary records to one run, all or nothing (11.2)."""
    checked = _check_input(ctx, run_id, records)
    if ctx.uow.dialect.fast_path:
        # PostgreSQL: one round trip for the whole batch; anything the statement refuses
        # goes through the transaction below, which raises the error naming the record.
        found = _append_in_one_statement(ctx, run_id, checked)
        if found is not None:
            return found

    def operation(tx: Tx) -> list[AppendResult]:
        run, session = tx.open_run(run_id)
        stored = _stored(tx, run_id, list(dict.fromkeys(rec.event_key for rec in checked)))
        results: list[AppendResult] = []
        for rec, step in zip(checked, batch_steps(run, checked, stored), strict=True):
            if isinstance(step, int):  # a repeat of an earlier record of the batch
                results.append(result(results[step].id, inserted=False, session=session))
            elif step is not None:  # an exact retry of a stored record
                results.append(result(step, inserted=False, session=session))
            else:
                results.append(insert(tx, run, rec, session))
        return results

    return ctx.uow.write(operation)
