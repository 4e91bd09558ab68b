"""Reads of a run's records beyond the lists: transcript prefixes (CONTRACT.md 12.3) and a
record by its key (12.5).

A transcript page is two reads of the partial index ``ix_run_records_transcript``
(migration 0014), as a record page is two reads of the primary key (records.py): the IDs
and payload sizes of the transcript records from ``after`` (inclusive, to prove it is one)
up to ``through``, at most ``size + 2`` of them, cut in Python (``transcript_cut``); then
the rows of exactly the records kept. ``through`` is checked against the run's record
count: record IDs are 1..n without gaps, so every ID up to it names a committed record.
The range ends at ``through``, so records appended later never reach a page.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

from app.domain import validation as v
from app.domain.transcript_reads import TranscriptWindow, transcript_cut, transcript_window
from runtime_store_client import (
    InvalidTranscriptPositionError,
    Record,
    RecordNotFoundError,
    RecordPage,
    UnavailableError,
)

from .context import Context
from .driver import DriverStatement
from .rows import RECORD_COLUMNS, records_from_rows
from .schema import TRANSCRIPT_RECORD, run_records
from .sessions import readable_session
from .unit_of_work import Tx

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


def _recheck_run(tx: Tx, run_id: str) -> None:
    """The run again: ``session_purged`` (or ``run_not_found``) once it is gone. On
    PostgreSQL each read sees the commits made before it, so a purge or a retention sweep
    may delete records between two reads; both remove the run (or mark its session purged)
    first, so a read that misses a record it should find asks here before answering."""
    run = tx.existing_run(run_id)
    if run.session_id:
        readable_session(tx, run.session_id)


def _transcript_page(tx: Tx, run_id: str, window: TranscriptWindow) -> RecordPage:
    run = tx.existing_run(run_id)
    if window.through > run.record_count:
        raise InvalidTranscriptPositionError(
            f"through {str(window.through)!r} is not a record of run {run_id!r}", run_id=run_id
        )
    fetch = tx.dialect.fetch_all
    # From ``after`` itself (it must be a transcript record), then ``size + 1`` more: the
    # page and whether more follow.
    extra = 1 if window.after else 0
    keys = list(
        fetch(
            tx.conn,
            _TRANSCRIPT_KEYS,
            {
                "run_id": run_id,
                "first": window.after,
                "through": window.through,
                "count": window.size + 1 + extra,
            },
        )
    )
    if window.after:
        if not keys or keys[0][0] != window.after:
            _recheck_run(tx, run_id)
            raise InvalidTranscriptPositionError(
                f"after {str(window.after)!r} is not a transcript record of run {run_id!r}",
                run_id=run_id,
            )
        keys = keys[1:]
    if not keys:
        _recheck_run(tx, run_id)  # an empty range, or one a purge emptied meanwhile
        return RecordPage(records=[])
    kept = transcript_cut([size for _, size in keys], window.size, run_id)
    rows = fetch(
        tx.conn,
        _TRANSCRIPT_ROWS,
        {"run_id": run_id, "after": window.after, "last": keys[kept - 1][0]},
    )
    if len(rows) != kept:
        _recheck_run(tx, run_id)
        raise UnavailableError("records were deleted while the page was read; retry")
    records = records_from_rows(rows)
    return RecordPage(records=records, next_cursor=records[-1].id if len(keys) > kept else "")


def list_run_transcript_records(
    ctx: Context, run_id: str, through: str, after: str, limit: int
) -> RecordPage:
    """The run's transcript records after ``after`` up to and including ``through`` (12.3)."""
    v.require_id(run_id, "run_id")
    window = transcript_window(through, after, limit)
    return ctx.uow.read(lambda tx: _transcript_page(tx, run_id, window))


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
            _recheck_run(tx, run_id)
            raise RecordNotFoundError(
                f"run {run_id!r} has no record {event_key!r}", run_id=run_id, event_key=event_key
            )
        return records_from_rows(rows)[0]

    return ctx.uow.read(operation)
