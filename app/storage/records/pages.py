"""The two record lists of a run log (CONTRACT.md section 4): a run's records and a session's.

A page is two index-range reads: the positions and payload sizes of the next ``limit + 1``
records (no payload leaves the database), cut at the byte budget in Python, then the rows
of exactly the records kept. So payloads past the cut never leave the database, ``more``
is exact (a ``limit + 1``-th key, or a key past the budget, exists), and no window
function runs per row (docs/performance.md, "Cheap pages"). Run lists page on the record
ID; session lists on the session position, handed out under the session's lock in the
writing transaction (commit order, never a sequence drawn before commit).

A run's page reads its run's record count with the keys, in one statement and one snapshot
(``_RUN_AND_KEYS``): the cursor is checked against that count, so a page is two round trips.

A page is written once, as steps (``Steps``): the statements it sends, each chosen from the
rows of the ones before, then its answer, or ``Unsure`` where only the transaction can
answer (a missing owner, records deleted between the reads). ``drive`` sends them on the
read's connection and settles what ends unsure in a transaction.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, TypeVar, cast

import sqlalchemy as sa

from app.domain import cursors
from app.domain import validation as v
from app.storage.database.raw_statements import DriverStatement
from app.storage.database.row_mapping import RECORD_COLUMNS, records_from_rows, session_from_row
from app.storage.database.tables import run_records, runs, sessions
from app.storage.operation import Context
from app.storage.sessions.administration import readable, readable_session
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    Page,
    Record,
    UnavailableError,
)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _PageQuery:
    """The two reads of a page of one list; built once per list."""

    #: Positions and payload sizes (bytes) of the next ``limit + 1`` records.
    keys: DriverStatement
    #: The records with positions in ``(after, last]``: exactly the page's.
    rows: DriverStatement


def _page_query(owner: sa.ColumnElement[Any], position: sa.ColumnElement[Any]) -> _PageQuery:
    after = position > sa.bindparam("after")
    keys = (
        sa.select(position.label("pos"), sa.func.length(run_records.c.payload).label("size"))
        .where(owner == sa.bindparam("owner"), after)
        .order_by(position)
        .limit(sa.bindparam("limit_plus_one"))
    )
    rows = (
        sa.select(*RECORD_COLUMNS, position.label("pos"))
        .where(owner == sa.bindparam("owner"), after, position <= sa.bindparam("last"))
        .order_by(position)
    )
    return _PageQuery(DriverStatement(keys), DriverStatement(rows))


_RUN_PAGE: Final = _page_query(run_records.c.run_id, run_records.c.seq)
_SESSION_PAGE: Final = _page_query(run_records.c.session_id, run_records.c.session_seq)
_RUN_KEYS: Final = cast("sa.Select[Any]", _RUN_PAGE.keys.statement).subquery("page_keys")
#: A run page's first read: the run's record count with the page's keys, one round trip
#: and one snapshot (one row with no key when none follow; no row when the run is missing).
_RUN_AND_KEYS: Final = DriverStatement(
    sa.select(runs.c.record_count, _RUN_KEYS.c.pos, _RUN_KEYS.c.size)
    .select_from(runs.outerjoin(_RUN_KEYS, sa.true()))
    .where(runs.c.run_id == sa.bindparam("owner"))
    .order_by(_RUN_KEYS.c.pos)
)
_SESSION_KEYS: Final = cast("sa.Select[Any]", _SESSION_PAGE.keys.statement).subquery("page_keys")
#: A session page's first read, the same way: the session's row with the page's keys.
_SESSION_AND_KEYS: Final = DriverStatement(
    sa.select(sessions, _SESSION_KEYS.c.pos, _SESSION_KEYS.c.size)
    .select_from(sessions.outerjoin(_SESSION_KEYS, sa.true()))
    .where(sessions.c.session_id == sa.bindparam("owner"))
    .order_by(_SESSION_KEYS.c.pos)
)


def _cut(keys: Sequence[Sequence[Any]], limit: int, budget: int) -> int:
    """How many of ``keys`` (position, payload size) the page keeps: at most ``limit``,
    and no more than fit in ``budget`` bytes, but always the first."""
    total = 0
    for kept, (_, size) in enumerate(keys[:limit]):
        total += size
        if kept and total > budget:
            return kept
    return min(len(keys), limit)


@dataclass(frozen=True, slots=True)
class StreamPage:
    """Records with the cursor after each (the live tail's event IDs, 11.3), and whether
    more existed at read time."""

    records: list[Record]
    cursors: list[str]
    more: bool

    def page(self) -> Page:
        return Page(records=self.records, next_cursor=self.cursors[-1] if self.more else "")


Rows = Sequence[Sequence[Any]]


@dataclass(frozen=True, slots=True)
class Read:
    """One statement of a read's steps; whoever drives the steps sends its rows back."""

    statement: DriverStatement
    params: dict[str, Any]


class Unsure(Enum):
    """How a read's steps end when only its transaction can give the answer."""

    #: The list's owner was not found: whether it was purged is read in the transaction.
    OWNER_MISSING = "owner_missing"
    #: Records were deleted between the two reads (a purge, a retention sweep).
    GAP = "gap"
    #: A transcript page's ``after`` is not among the run's transcript records: a wrong
    #: position, unless a purge deleted it, which the transaction reads.
    AFTER_MISSING = "after_missing"
    #: A transcript page's range holds no record: empty, unless a purge emptied it.
    EMPTY = "empty"


#: A read as steps: the statements it sends, each chosen from the rows of the ones before,
#: then its answer. The rule is written once, here; ``drive`` sends the statements.
Steps = Generator[Read, Rows, T]


def drive(tx: Tx, steps: Steps[T]) -> T:
    """The answer of ``steps``, each statement sent on the transaction's connection."""
    fetch = tx.dialect.fetch_all
    try:
        read = next(steps)
        while True:
            read = steps.send(fetch(tx.conn, read.statement, read.params))
    except StopIteration as done:
        answer: T = done.value
        return answer


def _rows_steps(
    ctx: Context, query: _PageQuery, owner: str, keys: Rows, *, after: int, limit: int
) -> Steps[tuple[list[Record], list[int], bool] | Unsure]:
    """The records of a page, their list positions, and whether more existed at read
    time, from the page's keys (positions and payload sizes, read with the owner).

    On PostgreSQL each of the two reads sees the commits made before it, so a purge (or a
    retention sweep) may delete records between them: the steps then end ``GAP``, and the
    transaction reads the owner again, which fails once it is purging (both mark the
    session purged, or tombstone the run, before they delete). A page with a gap is never
    returned.
    """
    if not keys:
        return [], [], False
    kept = _cut(keys, limit, ctx.page_byte_budget)
    last = keys[kept - 1][0]
    rows = yield Read(query.rows, {"owner": owner, "after": after, "last": last})
    if len(rows) != kept:
        return Unsure.GAP
    return records_from_rows(rows), [row[-1] for row in rows], len(keys) > kept


def recheck_run(tx: Tx, run_id: str) -> None:
    """The run again: ``session_purged`` (or ``run_not_found``) once it is gone. On
    PostgreSQL each read sees the commits made before it, so a purge or a retention sweep
    may delete records between two reads; both remove the run (or mark its session purged)
    first, so a read that misses a record it should find asks here before answering."""
    run = tx.existing_run(run_id)
    if run.session_id:
        readable_session(tx, run.session_id)


DELETED_WHILE_READ: Final = "records were deleted while the page was read; retry"


class RunPageRead:
    """A page of a run's records after ``cursor``; each record's cursor is its ID
    (section 4). The arguments are checked when it is made; ``steps`` reads the run with
    the page's keys, then the rows."""

    __slots__ = ("_after", "_ctx", "_run_id", "_size")

    def __init__(self, ctx: Context, run_id: str, cursor: str, limit: int) -> None:
        v.require_id(run_id, "run_id")
        self._ctx = ctx
        self._run_id = run_id
        self._after = cursors.record_id_after(cursor)
        self._size = cursors.check_limit(limit, ctx.page_max)

    def steps(self) -> Steps[StreamPage | Unsure]:
        after, size = self._after, self._size
        found = yield Read(
            _RUN_AND_KEYS, {"owner": self._run_id, "after": after, "limit_plus_one": size + 1}
        )
        if not found:
            return Unsure.OWNER_MISSING
        cursors.check_record_id_issued(after, found[0][0])
        keys = [(position, length) for _, position, length in found if position is not None]
        page = yield from _rows_steps(
            self._ctx, _RUN_PAGE, self._run_id, keys, after=after, limit=size
        )
        if isinstance(page, Unsure):
            return page
        records, _, more = page
        return StreamPage(records, [record.id for record in records], more)

    def operation(self, tx: Tx) -> StreamPage:
        """The page read in ``tx``, the transaction settling what the steps cannot."""
        page = drive(tx, self.steps())
        if page is Unsure.OWNER_MISSING:
            raise tx.missing_run_error(self._run_id)
        if page is Unsure.GAP:
            recheck_run(tx, self._run_id)  # raises once the run's session is purging
            raise UnavailableError(DELETED_WHILE_READ)
        assert isinstance(page, StreamPage)
        return page


def run_records_after(ctx: Context, run_id: str, cursor: str, limit: int) -> StreamPage:
    """The run's records after ``cursor``; each record's cursor is its ID (section 4)."""
    return ctx.uow.read(RunPageRead(ctx, run_id, cursor, limit).operation)


class SessionPageRead:
    """A page of every record of a session's runs after a cursor, in commit order; each
    record's cursor is its session position, sealed to the session's list. Made by
    ``opened`` (which may read the cursor key); ``steps`` reads the session with the
    page's keys, then the rows."""

    __slots__ = ("_after", "_codec", "_ctx", "_session_id", "_size")

    def __init__(
        self, ctx: Context, session_id: str, after: int, size: int, codec: cursors.CursorCodec
    ) -> None:
        self._ctx = ctx
        self._session_id = session_id
        self._after = after
        self._size = size
        self._codec = codec

    @classmethod
    def opened(cls, ctx: Context, session_id: str, cursor: str, limit: int) -> SessionPageRead:
        """The read of the page after ``cursor``, its arguments checked; a cursor the
        cached key refuses is tried under the key the database holds (``CursorKeys``)."""
        size = cursors.check_limit(limit, ctx.page_max)
        v.optional_text(session_id, "session_id")
        after = 0
        if cursor:
            (after,) = ctx.cursors.open(cursors.SESSION_RECORDS, cursor, session_id, 1)
        # After ``open``, which may have reloaded the key.
        return cls(ctx, session_id, after, size, ctx.cursors.codec())

    def steps(self) -> Steps[tuple[list[Record], list[int], bool] | Unsure]:
        session_id, after, size = self._session_id, self._after, self._size
        found: Rows = []
        if session_id:  # "" is never a session
            params = {"owner": session_id, "after": after, "limit_plus_one": size + 1}
            found = yield Read(_SESSION_AND_KEYS, params)
        row = _SESSION_AND_KEYS.row(tuple(found[0])) if found else None
        readable(session_id, None if row is None else session_from_row(row))
        keys = [(line[-2], line[-1]) for line in found if line[-2] is not None]
        return (
            yield from _rows_steps(
                self._ctx, _SESSION_PAGE, session_id, keys, after=after, limit=size
            )
        )

    def operation(self, tx: Tx) -> tuple[list[Record], list[int], bool]:
        """The page read in ``tx``, the transaction settling what the steps cannot."""
        page = drive(tx, self.steps())
        if isinstance(page, Unsure):
            readable_session(tx, self._session_id)  # raises once the session is purging
            raise UnavailableError(DELETED_WHILE_READ)
        return page

    def page(self, read: tuple[list[Record], list[int], bool]) -> Page:
        """The contract's page of what was read: only the last position is sealed (the
        next cursor)."""
        records, positions, more = read
        sealed = self._codec.seal(cursors.SESSION_RECORDS, self._session_id, positions[-1:])
        return Page(records=records, next_cursor=sealed if more else "")

    def stream_page(self, read: tuple[list[Record], list[int], bool]) -> StreamPage:
        """What was read with every record's cursor sealed (the live tail's event IDs)."""
        records, positions, more = read
        seal = self._codec.seal
        sealed = [seal(cursors.SESSION_RECORDS, self._session_id, [p]) for p in positions]
        return StreamPage(records, sealed, more)


def session_records_after(ctx: Context, session_id: str, cursor: str, limit: int) -> StreamPage:
    """Every record of a session's runs after ``cursor``, in commit order; each record's
    cursor is sealed to the session's list."""
    read = SessionPageRead.opened(ctx, session_id, cursor, limit)
    return read.stream_page(ctx.uow.read(read.operation))


def list_run_records(ctx: Context, run_id: str, cursor: str, limit: int) -> Page:
    """A page of one run's records, oldest first; the cursor is the last record ID."""
    return run_records_after(ctx, run_id, cursor, limit).page()


def list_session_run_records(ctx: Context, session_id: str, cursor: str, limit: int) -> Page:
    """A page of every record of a session's runs, in commit order."""
    read = SessionPageRead.opened(ctx, session_id, cursor, limit)
    return read.page(ctx.uow.read(read.operation))
