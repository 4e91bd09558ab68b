"""How the checker reads: pages of key ranges, one snapshot each, and their aggregate queries.

* **run pages** cover contiguous ``run_id`` ranges ``(lo, hi]`` (the first page open below,
  the last open above, so rows whose run is missing are still in some range). Per page,
  one ``GROUP BY run_id`` pass over ``run_records`` yields per-run counts (types, IDs,
  positions, owners), and one query over ``runs`` joins the session, checkpoint, tombstone,
  parent and the records named by the remembered lifecycle keys (unique-index lookups on
  ``(run_id, event_key)``). Only those few lifecycle payloads are decoded, in Python.
* **session pages** cover ``session_id`` ranges: a ``GROUP BY`` over the records of each
  session's runs checks that positions are exactly ``1..record_count``.

Every page runs in its own read-only transaction (PostgreSQL: REPEATABLE READ READ ONLY;
SQLite: ``query_only`` and a deferred BEGIN, which reads one WAL snapshot), so each check
compares rows of one consistent snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from app.domain.payloads import (
    CANCELLATION_INTENT,
    CHILD_RUN_LINKED,
    RUN_COMPLETED,
    RUN_STARTED,
    RUN_SUSPENDED,
)
from app.storage.database.dialects import dialect_of
from app.storage.database.tables import checkpoints, run_records, run_tombstones, runs, sessions
from app.storage.verify.facts import RecordStats
from app.storage.verify.report import DETAIL_ITEMS

# --- transactions and key ranges ---------------------------------------------------------


@contextmanager
def query_only(conn: Connection) -> Iterator[None]:
    """Make the connection refuse writes for as long as the check runs."""
    with dialect_of(conn.engine).read_only(conn):
        yield


@contextmanager
def _snapshot(conn: Connection) -> Iterator[None]:
    """One read-only transaction: every query of a page sees the same snapshot."""
    transaction = conn.begin()
    try:
        dialect_of(conn.engine).begin_snapshot(conn)
        yield
    finally:
        transaction.rollback()


@dataclass(frozen=True, slots=True)
class KeyRange:
    """``(lo, hi]`` over text keys; ``None`` is unbounded. Compared by the database only."""

    lo: str | None
    hi: str | None

    def __call__(self, column: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
        conditions: list[sa.ColumnElement[bool]] = []
        if self.lo is not None:
            conditions.append(column > self.lo)
        if self.hi is not None:
            conditions.append(column <= self.hi)
        return sa.and_(sa.true(), *conditions)


def pages(conn: Connection, key: sa.ColumnElement[str], page_size: int) -> Iterator[KeyRange]:
    """Consecutive key ranges of ``page_size`` keys, each opened in its own snapshot.

    Each range starts where the previous one ended and the last is open above, so the
    ranges cover the whole key space (dangling rows included) however rows change between
    pages; the end of a range is read inside the snapshot that checks it.
    """
    lo: str | None = None
    while True:
        with _snapshot(conn):
            query = sa.select(key).order_by(key).offset(page_size - 1).limit(1)
            if lo is not None:
                query = query.where(key > lo)
            hi: str | None = conn.execute(query).scalar_one_or_none()
            yield KeyRange(lo, hi)
        if hi is None:
            return
        lo = hi


# --- run pages ---------------------------------------------------------------------------


def _count_type(record_type: str) -> sa.ColumnElement[Any]:
    return sa.func.sum(sa.case((run_records.c.type == record_type, 1), else_=0))


def record_stats(conn: Connection, in_range: KeyRange) -> dict[str, RecordStats]:
    """Per-run facts of every record in the range, in one ``GROUP BY run_id`` pass."""
    rr = run_records.c
    session = sa.func.coalesce(rr.session_id, "")
    query = (
        sa.select(
            rr.run_id,
            sa.func.count().label("n"),
            sa.func.min(rr.seq).label("min_seq"),
            sa.func.max(rr.seq).label("max_seq"),
            _count_type(RUN_STARTED).label("started_n"),
            sa.func.max(sa.case((sa.and_(rr.seq == 1, rr.type == RUN_STARTED), 1), else_=0)).label(
                "started_first"
            ),
            sa.func.max(sa.case((rr.seq == 2, rr.type), else_=None)).label("second_type"),
            _count_type(RUN_COMPLETED).label("completed_n"),
            _count_type(RUN_SUSPENDED).label("suspended_n"),
            _count_type(CANCELLATION_INTENT).label("intent_n"),
            _count_type(CHILD_RUN_LINKED).label("link_n"),
            sa.func.count(rr.session_seq).label("positioned"),
            sa.func.min(rr.agent_id).label("min_agent"),
            sa.func.max(rr.agent_id).label("max_agent"),
            sa.func.min(session).label("min_session"),
            sa.func.max(session).label("max_session"),
        )
        .where(in_range(rr.run_id))
        .group_by(rr.run_id)
    )
    stats: dict[str, RecordStats] = {}
    for row in conn.execute(query).mappings():
        values = dict(row)
        run_id: str = values.pop("run_id")
        values["started_first"] = bool(values["started_first"])  # an integer max() in SQL
        stats[run_id] = RecordStats(**values)
    return stats


def run_rows(conn: Connection, in_range: KeyRange) -> list[Row[Any]]:
    """Each run of the range with the rows its invariants compare it to."""
    ru = runs.alias("ru")
    parent = runs.alias("parent")
    link = run_records.alias("link_rec")
    successor = runs.alias("successor")
    successor_start = run_records.alias("successor_start")
    children = (
        sa.select(runs.c.parent_run_id, sa.func.count().label("children"))
        .where(runs.c.parent_run_id != "", in_range(runs.c.parent_run_id))
        .group_by(runs.c.parent_run_id)
        .subquery("children")
    )
    joined = (
        ru.outerjoin(sessions, sessions.c.session_id == ru.c.session_id)
        .outerjoin(checkpoints, checkpoints.c.run_id == ru.c.run_id)
        .outerjoin(run_tombstones, run_tombstones.c.run_id == ru.c.run_id)
        .outerjoin(parent, parent.c.run_id == ru.c.parent_run_id)
        .outerjoin(
            link,
            sa.and_(link.c.run_id == ru.c.parent_run_id, link.c.event_key == ru.c.parent_link_key),
        )
        .outerjoin(children, children.c.parent_run_id == ru.c.run_id)
        .outerjoin(successor, successor.c.run_id == ru.c.successor_run_id)
        .outerjoin(
            successor_start,
            sa.and_(
                successor_start.c.run_id == successor.c.run_id,
                successor_start.c.event_key == successor.c.start_key,
            ),
        )
    )
    columns: list[sa.ColumnElement[Any]] = [
        sessions.c.status.label("session_status"),
        checkpoints.c.checkpoint_id,
        run_tombstones.c.run_id.label("tombstoned"),
        run_tombstones.c.session_id.label("tombstone_session"),
        parent.c.run_id.label("parent_found"),
        parent.c.session_id.label("parent_session"),
        link.c.type.label("link_type"),
        link.c.payload.label("link_payload"),
        sa.func.coalesce(children.c.children, 0).label("children"),
        successor.c.run_id.label("successor_found"),
        successor_start.c.payload.label("successor_start_payload"),
    ]
    # The record each remembered key names, as ``<prefix>_type`` and ``<prefix>_payload``.
    named_by = {
        "start": ru.c.start_key,
        "cancel": ru.c.cancellation_key,
        "susp": ru.c.suspension_key,
        "term": ru.c.terminal_key,
    }
    for prefix, key in named_by.items():
        record = run_records.alias(f"{prefix}_rec")
        # The range on the alias too, so the planner keeps these as index lookups.
        joined = joined.outerjoin(
            record,
            sa.and_(
                record.c.run_id == ru.c.run_id,
                record.c.event_key == key,
                in_range(record.c.run_id),
            ),
        )
        columns.append(record.c.type.label(f"{prefix}_type"))
        columns.append(record.c.payload.label(f"{prefix}_payload"))
    query = (
        sa.select(ru, *columns)
        .select_from(joined)
        .where(in_range(ru.c.run_id))
        .order_by(ru.c.run_id)
    )
    return list(conn.execute(query))


# --- session pages -----------------------------------------------------------------------


def session_rows(conn: Connection, in_range: KeyRange) -> list[Row[Any]]:
    """Each session of the range with the positions of its runs' records."""
    rr = run_records.c
    # Positions over the records of each session's runs (not the records' own session
    # column: a record claiming another session is an owner finding).
    positions = (
        sa.select(
            runs.c.session_id,
            sa.func.count(rr.session_seq).label("positioned"),
            sa.func.count(sa.distinct(rr.session_seq)).label("distinct_positions"),
            sa.func.min(rr.session_seq).label("min_pos"),
            sa.func.max(rr.session_seq).label("max_pos"),
        )
        .select_from(runs.join(run_records, rr.run_id == runs.c.run_id))
        .where(in_range(runs.c.session_id))
        .group_by(runs.c.session_id)
        .subquery("positions")
    )
    return list(
        conn.execute(
            sa.select(
                sessions.c.session_id,
                sessions.c.status,
                sessions.c.record_count,
                sa.func.coalesce(positions.c.positioned, 0).label("positioned"),
                sa.func.coalesce(positions.c.distinct_positions, 0).label("distinct_positions"),
                positions.c.min_pos,
                positions.c.max_pos,
            )
            .outerjoin(positions, positions.c.session_id == sessions.c.session_id)
            .where(in_range(sessions.c.session_id))
        )
    )


# --- sequences 1..n ----------------------------------------------------------------------


def is_one_to(expected: int, distinct: int, low: int | None, high: int | None) -> bool:
    """Whether ``distinct`` values from ``low`` to ``high`` are exactly ``1..expected``."""
    return distinct == expected and (expected == 0 or (low == 1 and high == expected))


def sequence_problems(conn: Connection, values: sa.Subquery, expected: int) -> str:
    """The first duplicates, gaps and out-of-range values of a column meant to be 1..n."""
    v = values.c.v
    duplicates = conn.scalars(
        sa.select(v).group_by(v).having(sa.func.count() > 1).order_by(v).limit(DETAIL_ITEMS)
    ).all()
    lagged = sa.select(v, sa.func.lag(v, 1, 0).over(order_by=v).label("prev")).subquery()
    gaps = conn.execute(
        sa.select((lagged.c.prev + 1).label("first"), (lagged.c.v - 1).label("last"))
        .where(lagged.c.v - lagged.c.prev > 1)
        .order_by(lagged.c.v)
        .limit(DETAIL_ITEMS)
    ).all()
    low, high = conn.execute(sa.select(sa.func.min(v), sa.func.max(v))).one()
    top: int = high or 0
    missing = [f"{g.first}" if g.first == g.last else f"{g.first}-{g.last}" for g in gaps]
    if top < expected:
        missing.append(f"{top + 1}" if top + 1 == expected else f"{top + 1}-{expected}")
    parts = []
    if duplicates:
        parts.append("duplicated " + ", ".join(map(str, duplicates)))
    if missing:
        parts.append("missing " + ", ".join(missing[:DETAIL_ITEMS]))
    if top > expected:
        parts.append(f"values up to {top} beyond {expected}")
    if low is not None and low < 1:
        parts.append(f"values down to {low}")
    return (": " + "; ".join(parts)) if parts else ""
