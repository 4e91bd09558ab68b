"""Reads of a run's records beyond the lists: transcript prefixes (CONTRACT.md 12.3) and a
record by its key (12.5).

A transcript page is two reads of the partial index ``ix_run_records_transcript``
(migration 0014), as a record page is two reads of the primary key (records.py): the run's
record count with the IDs and payload sizes of the transcript records from ``after``
(inclusive, to prove it is one) up to ``through``, at most ``size + 2`` of them, in one
statement and one snapshot; cut in Python (``transcript_cut``); then the rows of exactly
the records kept. ``through`` is checked against the run's record count: record IDs are
1..n without gaps, so every ID up to it names a committed record. The range ends at
``through``, so records appended later never reach a page.

The page is written once, as steps (``TranscriptPageRead``, as ``RunPageRead``), driven
by ``drive``, which leaves to a transaction what only it can answer (a missing run, an
``after`` or a range a purge may have emptied, records deleted between the reads).
"""

from __future__ import annotations

from typing import Any, Final, cast

import sqlalchemy as sa

from app.domain import validation as v
from app.domain.transcript_reads import transcript_cut, transcript_window
from app.storage.database.raw_statements import DriverStatement
from app.storage.database.row_mapping import RECORD_COLUMNS, records_from_rows
from app.storage.database.tables import TRANSCRIPT_RECORD, run_records, runs
from app.storage.operation import Context
from app.storage.records.pages import DELETED_WHILE_READ, Read, Steps, Unsure, drive, recheck_run
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    InvalidTranscriptPositionError,
    Record,
    RecordNotFoundError,
    RecordPage,
    UnavailableError,
)

_RUN = run_records.c.run_id == sa.bindparam("run_id")


#: IDs and payload sizes of the transcript records in ``[first, through]``, at most
#: ``count``: an index range of the partial index.
_TRANSCRIPT_KEYS: Final = DriverStatement(
    sa.select(run_records.c.seq, sa.func.length(run_records.c.payload).label("size"))
    .where(
        _RUN,
        TRANSCRIPT_RECORD,
        run_records.c.seq >= sa.bindparam("first"),
        run_records.c.seq <= sa.bindparam("through"),
    )
    .order_by(run_records.c.seq)
    .limit(sa.bindparam("count"))
)
_TRANSCRIPT_KEYS_SUBQUERY: Final = cast("sa.Select[Any]", _TRANSCRIPT_KEYS.statement).subquery(
    "transcript_keys"
)
#: A transcript page's first read: the run's record count with the page's keys, one round
#: trip and one snapshot (one row with no key when the range holds none; no row when the
#: run is missing).
_RUN_AND_TRANSCRIPT_KEYS: Final = DriverStatement(
    sa.select(
        runs.c.record_count, _TRANSCRIPT_KEYS_SUBQUERY.c.seq, _TRANSCRIPT_KEYS_SUBQUERY.c.size
    )
    .select_from(runs.outerjoin(_TRANSCRIPT_KEYS_SUBQUERY, sa.true()))
    .where(runs.c.run_id == sa.bindparam("run_id"))
    .order_by(_TRANSCRIPT_KEYS_SUBQUERY.c.seq)
)
#: The transcript records in ``(after, last]``: exactly the page's.
_TRANSCRIPT_ROWS: Final = DriverStatement(
    sa.select(*RECORD_COLUMNS)
    .where(
        _RUN,
        TRANSCRIPT_RECORD,
        run_records.c.seq > sa.bindparam("after"),
        run_records.c.seq <= sa.bindparam("last"),
    )
    .order_by(run_records.c.seq)
)
#: The record stored under a key (the unique index on ``(run_id, event_key)``).
_RECORD_BY_KEY: Final = DriverStatement(
    sa.select(*RECORD_COLUMNS).where(_RUN, run_records.c.event_key == sa.bindparam("event_key"))
)


class TranscriptPageRead:
    """A page of a run's transcript records after ``after`` up to and including ``through``
    (12.3). The arguments are checked when it is made; ``steps`` reads the run's record
    count with the page's keys, then the rows."""

    __slots__ = ("_run_id", "_window")

    def __init__(self, run_id: str, through: str, after: str, limit: int) -> None:
        v.require_id(run_id, "run_id")
        self._run_id = run_id
        self._window = transcript_window(through, after, limit)

    def steps(self) -> Steps[RecordPage | Unsure]:
        run_id, window = self._run_id, self._window
        # From ``after`` itself (it must be a transcript record), then ``size + 1`` more:
        # the page and whether more follow.
        extra = 1 if window.after else 0
        found = yield Read(
            _RUN_AND_TRANSCRIPT_KEYS,
            {
                "run_id": run_id,
                "first": window.after,
                "through": window.through,
                "count": window.size + 1 + extra,
            },
        )
        if not found:
            return Unsure.OWNER_MISSING
        if window.through > found[0][0]:
            raise InvalidTranscriptPositionError(
                f"through {str(window.through)!r} is not a record of run {run_id!r}",
                run_id=run_id,
            )
        keys = [(seq, size) for _, seq, size in found if seq is not None]
        if window.after:
            if not keys or keys[0][0] != window.after:
                return Unsure.AFTER_MISSING
            keys = keys[1:]
        if not keys:
            return Unsure.EMPTY  # an empty range, or one a purge emptied meanwhile
        kept = transcript_cut([size for _, size in keys], window.size, run_id)
        rows = yield Read(
            _TRANSCRIPT_ROWS, {"run_id": run_id, "after": window.after, "last": keys[kept - 1][0]}
        )
        if len(rows) != kept:
            return Unsure.GAP
        records = records_from_rows(rows)
        return RecordPage(records=records, next_cursor=records[-1].id if len(keys) > kept else "")

    def operation(self, tx: Tx) -> RecordPage:
        """The page read in ``tx``, the transaction settling what the steps cannot."""
        page = drive(tx, self.steps())
        if page is Unsure.OWNER_MISSING:
            raise tx.missing_run_error(self._run_id)
        if isinstance(page, Unsure):
            recheck_run(tx, self._run_id)  # raises once the run's session is purging
            if page is Unsure.AFTER_MISSING:
                raise InvalidTranscriptPositionError(
                    f"after {str(self._window.after)!r} is not a transcript record of run "
                    f"{self._run_id!r}",
                    run_id=self._run_id,
                )
            if page is Unsure.EMPTY:
                return RecordPage(records=[])
            raise UnavailableError(DELETED_WHILE_READ)
        return page


def list_run_transcript_records(
    ctx: Context, run_id: str, through: str, after: str, limit: int
) -> RecordPage:
    """The run's transcript records after ``after`` up to and including ``through`` (12.3)."""
    return ctx.uow.read(TranscriptPageRead(run_id, through, after, limit).operation)


def load_run_record(ctx: Context, run_id: str, event_key: str) -> Record:
    """The record stored under ``(run_id, event_key)`` (12.5)."""
    v.require_id(run_id, "run_id")
    v.require_id(event_key, "event_key")

    def operation(tx: Tx) -> Record:
        tx.existing_run(run_id)
        rows = tx.dialect.fetch_all(
            tx.conn, _RECORD_BY_KEY, {"run_id": run_id, "event_key": event_key}
        )
        if not rows:
            recheck_run(tx, run_id)
            raise RecordNotFoundError(
                f"run {run_id!r} has no record {event_key!r}", run_id=run_id, event_key=event_key
            )
        return records_from_rows(rows)[0]

    return ctx.uow.read(operation)
