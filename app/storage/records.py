"""Run records: the ordinary append (CONTRACT.md 3.7) and the two record lists (section 4).

A page is one statement: an index range picks ``limit + 1`` keys with their payload sizes,
and window sums cut the page at the byte budget, so payloads past the cut never leave the
database. Run lists page on the record ID; session lists on the session position, handed
out under the session's lock in the writing transaction (commit order, never a sequence
drawn before commit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa

from app.domain import cursors
from app.domain import validation as v
from runtime_store_client import AppendResult, Page, Record, RunNotActiveError

from .append_check import check_append, insert, result
from .context import Context
from .rows import record_from_row
from .schema import run_records
from .sessions import readable_session
from .unit_of_work import Tx


def append_run_record(ctx: Context, record: Record) -> AppendResult:
    """Append an ordinary record to a running run (3.7)."""
    ctx.limits.check_record(record)
    rec = v.check_ordinary_record(record)

    def operation(tx: Tx) -> AppendResult:
        run, session = tx.open_run(rec.run_id, rec.event_key)
        stored = check_append(tx, run, rec)
        if stored is not None:
            return result(stored, inserted=False, session=session)
        if run.terminal:
            raise RunNotActiveError(f"run {run.run_id!r} is {run.status.value}", run_id=run.run_id)
        return insert(tx, run, rec, session)

    return ctx.uow.write(operation)


def _page_query(owner: sa.ColumnElement[Any], position: sa.ColumnElement[Any]) -> sa.Select[Any]:
    """One page of records after a position, cut at a byte budget; built once per list."""
    keys = (
        sa.select(
            run_records.c.run_id,
            run_records.c.seq,
            position.label("pos"),
            sa.func.length(run_records.c.payload).label("size"),
        )
        .where(owner == sa.bindparam("owner"), position > sa.bindparam("after"))
        .order_by(position)
        .limit(sa.bindparam("limit_plus_one"))
        .cte("page_keys")
    )
    sized = sa.select(
        keys.c.run_id,
        keys.c.seq,
        keys.c.pos,
        sa.func.sum(keys.c.size).over(order_by=keys.c.pos).label("total_size"),
        sa.func.row_number().over(order_by=keys.c.pos).label("n"),
        sa.func.count().over().label("found"),
    ).cte("page_sized")
    return (
        sa.select(run_records, sized.c.pos, sized.c.found)
        .join(
            sized,
            sa.and_(run_records.c.run_id == sized.c.run_id, run_records.c.seq == sized.c.seq),
        )
        .where(
            sized.c.n <= sa.bindparam("limit"),
            sa.or_(sized.c.n == 1, sized.c.total_size <= sa.bindparam("budget")),
        )
        .order_by(sized.c.pos)
    )


_RUN_PAGE: Final = _page_query(run_records.c.run_id, run_records.c.seq)
_SESSION_PAGE: Final = _page_query(run_records.c.session_id, run_records.c.session_seq)


@dataclass(frozen=True, slots=True)
class StreamPage:
    """Records with the cursor after each (the live tail's event IDs, 11.3), and whether
    more existed at read time."""

    records: list[Record]
    cursors: list[str]
    more: bool

    def page(self) -> Page:
        return Page(records=self.records, next_cursor=self.cursors[-1] if self.more else "")


def _page(
    ctx: Context, tx: Tx, query: sa.Select[Any], owner: str, *, after: int, limit: int
) -> tuple[list[Record], list[int], bool]:
    """The records, their list positions, and whether more existed at read time."""
    rows = tx.conn.execute(
        query,
        {
            "owner": owner,
            "after": after,
            "limit": limit,
            "limit_plus_one": limit + 1,
            "budget": ctx.page_byte_budget,
        },
    ).all()
    if not rows:
        return [], [], False
    return (
        [record_from_row(row) for row in rows],
        [row.pos for row in rows],
        rows[0].found > len(rows),
    )


def run_records_after(ctx: Context, run_id: str, cursor: str, limit: int) -> StreamPage:
    """The run's records after ``cursor``; each record's cursor is its ID (section 4)."""
    v.require_id(run_id, "run_id")
    size = cursors.check_limit(limit, ctx.page_max)

    def operation(tx: Tx) -> StreamPage:
        run = tx.existing_run(run_id)
        after = cursors.decode_record_id_cursor(cursor, run.record_count)
        records, _, more = _page(ctx, tx, _RUN_PAGE, run_id, after=after, limit=size)
        return StreamPage(records, [record.id for record in records], more)

    return ctx.uow.read(operation)


def session_records_after(ctx: Context, session_id: str, cursor: str, limit: int) -> StreamPage:
    """Every record of a session's runs after ``cursor``, in commit order; each record's
    cursor is sealed to the session's list."""
    size = cursors.check_limit(limit, ctx.page_max)
    v.optional_text(session_id, "session_id")
    after = 0
    if cursor:
        (after,) = ctx.cursors.open(cursors.SESSION_RECORDS, cursor, session_id, 1)
    codec = ctx.cursors.codec()  # after ``open``, which may have reloaded the key

    def operation(tx: Tx) -> tuple[list[Record], list[int], bool]:
        readable_session(tx, session_id)
        return _page(ctx, tx, _SESSION_PAGE, session_id, after=after, limit=size)

    records, positions, more = ctx.uow.read(operation)
    sealed = [codec.seal(cursors.SESSION_RECORDS, session_id, [p]) for p in positions]
    return StreamPage(records, sealed, more)


def list_run_records(ctx: Context, run_id: str, cursor: str, limit: int) -> Page:
    """A page of one run's records, oldest first; the cursor is the last record ID."""
    return run_records_after(ctx, run_id, cursor, limit).page()


def list_session_run_records(ctx: Context, session_id: str, cursor: str, limit: int) -> Page:
    """A page of every record of a session's runs, in commit order."""
    size = cursors.check_limit(limit, ctx.page_max)
    v.optional_text(session_id, "session_id")
    after = 0
    if cursor:
        (after,) = ctx.cursors.open(cursors.SESSION_RECORDS, cursor, session_id, 1)
    codec = ctx.cursors.codec()

    def operation(tx: Tx) -> Page:
        readable_session(tx, session_id)
        records, positions, more = _page(
            ctx, tx, _SESSION_PAGE, session_id, after=after, limit=size
        )
        next_cursor = (
            codec.seal(cursors.SESSION_RECORDS, session_id, positions[-1:]) if more else ""
        )
        return Page(records=records, next_cursor=next_cursor)

    return ctx.uow.read(operation)
