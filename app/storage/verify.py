"""``runtime-store db verify``: a read-only check of the database's invariants.

The checker walks the database in pages of key ranges and never holds more than one page
in memory:

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
compares rows of one consistent snapshot. Rows are only ever described in detail (first
gaps, first mismatching record) for runs or sessions already found broken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, Row

from app.domain.payloads import (
    CANCELLATION_INTENT,
    CHILD_RUN_LINKED,
    RUN_COMPLETED,
    RUN_STARTED,
    RUN_SUSPENDED,
    RunCompletedPayload,
    decode_cancellation_intent,
    decode_child_run_linked,
    decode_run_completed,
    decode_run_suspended,
)
from app.domain.validation import labels_json
from runtime_store_client import StoreError

from .schema import checkpoints, run_records, run_tombstones, runs, sessions

# Invariant names, as reported.
RUN_STARTED_FIRST: Final = "run_started_first"
RECORD_IDS: Final = "record_ids_contiguous"
SESSION_POSITIONS: Final = "session_positions_contiguous"
POSITION_PRESENCE: Final = "session_position_presence"
TERMINAL_RECORD: Final = "terminal_status_record"
SUSPENSION_CHECKPOINT: Final = "checkpoint_iff_suspended"
STOPPED_START: Final = "stopped_start_shape"
CANCELLATION_PROVENANCE: Final = "cancellation_provenance"
LIFECYCLE_KEYS: Final = "lifecycle_keys_resolve"
PURGED_SESSION: Final = "purged_session_empty"
CHILD_LINKS: Final = "child_links"
RECORD_OWNER: Final = "record_owner"
DANGLING_ROWS: Final = "dangling_rows"

INVARIANTS: Final = (
    RUN_STARTED_FIRST,
    RECORD_IDS,
    SESSION_POSITIONS,
    POSITION_PRESENCE,
    TERMINAL_RECORD,
    SUSPENSION_CHECKPOINT,
    STOPPED_START,
    CANCELLATION_PROVENANCE,
    LIFECYCLE_KEYS,
    PURGED_SESSION,
    CHILD_LINKS,
    RECORD_OWNER,
    DANGLING_ROWS,
)

DEFAULT_PAGE_SIZE: Final = 2000
#: How many gaps, duplicates or links a detail names before it stops listing.
_DETAIL_ITEMS: Final = 5
_PURGED: Final = "purged"
_STOP: Final = "stop"
_SESSION_ENDED: Final = "session_ended"
_ENGINE_CANCELED: Final = "engine_canceled"


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str
    run_id: str
    session_id: str
    detail: str


@dataclass(slots=True)
class VerifyReport:
    violations: list[Violation] = field(default_factory=list)
    runs_checked: int = 0
    sessions_checked: int = 0
    records_checked: int = 0
    #: Rows of tombstoned runs that a purge has yet to delete: not violations (the next
    #: purge of their session deletes them), but reported.
    purge_pending_records: int = 0
    purge_pending_checkpoints: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        pending = ""
        if self.purge_pending_records or self.purge_pending_checkpoints:
            pending = (
                f"; {self.purge_pending_records} records and {self.purge_pending_checkpoints} "
                "checkpoints of purged sessions not yet deleted (purge those sessions again)"
            )
        return (
            f"checked {self.runs_checked} runs, {self.sessions_checked} sessions, "
            f"{self.records_checked} records: {len(self.violations)} violation(s){pending}"
        )


def verify_database(engine: Engine, *, page_size: int = DEFAULT_PAGE_SIZE) -> VerifyReport:
    """Check every invariant over the whole database; never writes."""
    if page_size < 1:
        raise ValueError("page_size must be positive")
    report = VerifyReport()
    with engine.connect() as conn, _query_only(conn):
        _verify_run_pages(conn, page_size, report)
        _verify_session_pages(conn, page_size, report)
    return report


# --- transactions and key ranges ---------------------------------------------------------


@contextmanager
def _query_only(conn: Connection) -> Iterator[None]:
    """On SQLite, make the connection refuse writes for as long as the check runs."""
    if conn.dialect.name != "sqlite":
        yield
        return
    conn.exec_driver_sql("PRAGMA query_only = ON")
    conn.commit()
    try:
        yield
    finally:
        conn.rollback()
        conn.exec_driver_sql("PRAGMA query_only = OFF")
        conn.commit()


@contextmanager
def _snapshot(conn: Connection) -> Iterator[None]:
    """One read-only transaction: every query of a page sees the same snapshot."""
    transaction = conn.begin()
    try:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield
    finally:
        transaction.rollback()


@dataclass(frozen=True, slots=True)
class _KeyRange:
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


def _pages(conn: Connection, key: sa.ColumnElement[str], page_size: int) -> Iterator[_KeyRange]:
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
            yield _KeyRange(lo, hi)
        if hi is None:
            return
        lo = hi


# --- run pages ---------------------------------------------------------------------------


def _count_type(record_type: str) -> sa.ColumnElement[Any]:
    return sa.func.sum(sa.case((run_records.c.type == record_type, 1), else_=0))


def _record_aggregates(conn: Connection, in_range: _KeyRange) -> dict[str, Row[Any]]:
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
            # min = max = the run's value means every record carries it.
            sa.func.min(rr.agent_id).label("min_agent"),
            sa.func.max(rr.agent_id).label("max_agent"),
            sa.func.min(session).label("min_session"),
            sa.func.max(session).label("max_session"),
        )
        .where(in_range(rr.run_id))
        .group_by(rr.run_id)
    )
    return {row.run_id: row for row in conn.execute(query)}


def _run_facts(conn: Connection, in_range: _KeyRange) -> list[Row[Any]]:
    """Each run of the range with the rows its invariants compare it to."""
    ru = runs.alias("ru")
    parent = runs.alias("parent")
    by_key = {
        name: run_records.alias(name)
        for name in ("start_rec", "cancel_rec", "susp_rec", "term_rec")
    }
    link = run_records.alias("link_rec")
    children = (
        sa.select(runs.c.parent_run_id, sa.func.count().label("children"))
        .where(runs.c.parent_run_id != "", in_range(runs.c.parent_run_id))
        .group_by(runs.c.parent_run_id)
        .subquery("children")
    )
    key_columns = {
        "start_rec": ru.c.start_key,
        "cancel_rec": ru.c.cancellation_key,
        "susp_rec": ru.c.suspension_key,
        "term_rec": ru.c.terminal_key,
    }
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
    )
    for name, table in by_key.items():
        # The range on the alias too, so the planner keeps these as index lookups.
        joined = joined.outerjoin(
            table,
            sa.and_(
                table.c.run_id == ru.c.run_id,
                table.c.event_key == key_columns[name],
                in_range(table.c.run_id),
            ),
        )
    query = (
        sa.select(
            ru,
            sessions.c.status.label("session_status"),
            checkpoints.c.checkpoint_id,
            run_tombstones.c.session_id.label("tombstone_session"),
            parent.c.run_id.label("parent_found"),
            parent.c.session_id.label("parent_session"),
            link.c.type.label("link_type"),
            link.c.payload.label("link_payload"),
            sa.func.coalesce(children.c.children, 0).label("children"),
            by_key["start_rec"].c.type.label("start_type"),
            by_key["cancel_rec"].c.type.label("cancel_type"),
            by_key["cancel_rec"].c.payload.label("cancel_payload"),
            by_key["susp_rec"].c.type.label("susp_type"),
            by_key["susp_rec"].c.payload.label("susp_payload"),
            by_key["term_rec"].c.type.label("term_type"),
            by_key["term_rec"].c.payload.label("term_payload"),
        )
        .select_from(joined)
        .where(in_range(ru.c.run_id))
        .order_by(ru.c.run_id)
    )
    return list(conn.execute(query))


def _verify_run_pages(conn: Connection, page_size: int, report: VerifyReport) -> None:
    for in_range in _pages(conn, runs.c.run_id, page_size):
        aggregates = _record_aggregates(conn, in_range)
        facts = _run_facts(conn, in_range)
        report.runs_checked += len(facts)
        report.records_checked += sum(row.n for row in aggregates.values())
        for row in facts:
            _RunCheck(conn, row, aggregates.pop(row.run_id, None), report.violations).run()
        # What is left has no run row: records a purge has yet to delete (their run is
        # tombstoned), else dangling.
        pending = _tombstoned(conn, list(aggregates))
        for run_id, agg in aggregates.items():
            if run_id in pending:
                report.purge_pending_records += agg.n
                continue
            report.violations.append(
                Violation(DANGLING_ROWS, run_id, "", f"{agg.n} records belong to no run")
            )
        _check_dangling_checkpoints(conn, in_range, report)
        _check_tombstones(conn, in_range, report.violations)


def _tombstoned(conn: Connection, run_ids: list[str]) -> set[str]:
    if not run_ids:
        return set()
    query = sa.select(run_tombstones.c.run_id).where(run_tombstones.c.run_id.in_(run_ids))
    return set(conn.execute(query).scalars())


def _check_dangling_checkpoints(
    conn: Connection, in_range: _KeyRange, report: VerifyReport
) -> None:
    query = (
        sa.select(checkpoints.c.run_id, run_tombstones.c.run_id.label("tombstone"))
        .outerjoin(runs, runs.c.run_id == checkpoints.c.run_id)
        .outerjoin(run_tombstones, run_tombstones.c.run_id == checkpoints.c.run_id)
        .where(runs.c.run_id.is_(None), in_range(checkpoints.c.run_id))
    )
    for row in conn.execute(query):
        if row.tombstone is not None:
            report.purge_pending_checkpoints += 1
            continue
        report.violations.append(
            Violation(DANGLING_ROWS, row.run_id, "", "checkpoint belongs to no run")
        )


def _check_tombstones(conn: Connection, in_range: _KeyRange, out: list[Violation]) -> None:
    """Every run tombstone points at a session that is purged."""
    query = (
        sa.select(run_tombstones.c.run_id, run_tombstones.c.session_id, sessions.c.status)
        .outerjoin(sessions, sessions.c.session_id == run_tombstones.c.session_id)
        .where(
            in_range(run_tombstones.c.run_id),
            sa.or_(sessions.c.status.is_(None), sessions.c.status != _PURGED),
        )
    )
    for row in conn.execute(query):
        state = "does not exist" if row.status is None else f"is {row.status}"
        out.append(
            Violation(
                PURGED_SESSION,
                row.run_id,
                row.session_id,
                f"run tombstone points at session {row.session_id!r}, which {state}",
            )
        )


def _describe(record_type: str | None) -> str:
    return "no record" if record_type is None else f"a {record_type} record"


def _decoded(decode: Callable[[bytes], Any], payload: Any) -> tuple[Any, str]:
    """``(value, "")`` or ``(None, error)``: a bad payload is a finding, not a crash."""
    try:
        return decode(bytes(payload)), ""
    except StoreError as exc:
        return None, exc.message


class _RunCheck:
    """Every per-run invariant of one run, from its facts row and record aggregates."""

    def __init__(
        self, conn: Connection, row: Row[Any], agg: Row[Any] | None, out: list[Violation]
    ) -> None:
        self.conn = conn
        self.row = row
        self.out = out
        self.run_id: str = row.run_id
        self.session_id: str = row.session_id or ""
        self.n: int = agg.n if agg else 0
        self.min_seq: int = agg.min_seq if agg else 0
        self.max_seq: int = agg.max_seq if agg else 0
        self.started_n: int = agg.started_n if agg else 0
        self.started_first = bool(agg.started_first) if agg else False
        self.second_type: str | None = agg.second_type if agg else None
        self.completed_n: int = agg.completed_n if agg else 0
        self.suspended_n: int = agg.suspended_n if agg else 0
        self.intent_n: int = agg.intent_n if agg else 0
        self.link_n: int = agg.link_n if agg else 0
        self.positioned: int = agg.positioned if agg else 0
        self.owners_ok = agg is None or (
            agg.min_agent == agg.max_agent == row.agent_id
            and agg.min_session == agg.max_session == self.session_id
        )
        self.completed: RunCompletedPayload | None = None
        self.completed_error = ""
        if row.term_type == RUN_COMPLETED:
            self.completed, self.completed_error = _decoded(decode_run_completed, row.term_payload)

    def report(self, invariant: str, problems: list[str] | str) -> None:
        if isinstance(problems, str):
            problems = [problems]
        if problems:
            self.out.append(Violation(invariant, self.run_id, self.session_id, "; ".join(problems)))

    def run(self) -> None:
        self.check_session()
        self.check_run_started()
        self.check_record_ids()
        self.check_positions()
        self.check_owner()
        self.check_terminal()
        self.check_checkpoint()
        self.check_stop()
        self.check_cancellation()
        self.check_keys()
        self.check_child_side()
        self.check_parent_side()

    def check_session(self) -> None:
        row = self.row
        if row.session_id is not None and row.session_status is None:
            self.report(
                DANGLING_ROWS, f"run names session {row.session_id!r}, which does not exist"
            )
        problems = []
        if row.session_status == _PURGED:
            held = f"{self.n} records" + (" and a checkpoint" if row.checkpoint_id else "")
            problems.append(f"run of the purged session remains with {held}")
        if row.tombstone_session is not None:
            problems.append(
                f"run ID was tombstoned by the purge of session {row.tombstone_session!r} "
                "but the run exists"
            )
        self.report(PURGED_SESSION, problems)

    def check_run_started(self) -> None:
        if self.started_n != 1 or not self.started_first:
            where = "record 1 is one" if self.started_first else "record 1 is not one"
            self.report(RUN_STARTED_FIRST, f"{self.started_n} run_started records ({where})")

    def check_record_ids(self) -> None:
        count = self.row.record_count
        if self.n == count and (self.n == 0 or (self.min_seq == 1 and self.max_seq == count)):
            return
        values = sa.select(run_records.c.seq.label("v")).where(run_records.c.run_id == self.run_id)
        self.report(
            RECORD_IDS,
            f"record_count {count}, {self.n} records with IDs {self.min_seq}..{self.max_seq}"
            + _sequence_problems(self.conn, values.subquery(), count),
        )

    def check_positions(self) -> None:
        if self.session_id and self.positioned != self.n:
            self.report(
                POSITION_PRESENCE, f"{self.n - self.positioned} records have no session position"
            )
        if not self.session_id and self.positioned:
            self.report(
                POSITION_PRESENCE,
                f"{self.positioned} records of a sessionless run have a session position",
            )

    def check_owner(self) -> None:
        if self.owners_ok:
            return
        rr = run_records.c
        mismatch = sa.or_(
            rr.agent_id != self.row.agent_id,
            sa.func.coalesce(rr.session_id, "") != self.session_id,
        )
        found = self.conn.execute(
            sa.select(sa.func.count(), sa.func.min(rr.seq)).where(
                rr.run_id == self.run_id, mismatch
            )
        ).one()
        self.report(
            RECORD_OWNER,
            f"{found[0]} records (first ID {found[1]}) do not carry the run's agent "
            f"{self.row.agent_id!r} and session {self.session_id!r}",
        )

    def check_terminal(self) -> None:
        row = self.row
        status: str = row.status
        problems: list[str] = []
        if status == "running":
            if row.terminal_key is not None:
                problems.append(f"running run remembers terminal_key {row.terminal_key!r}")
            if row.suspension_key is not None:
                problems.append(f"running run remembers suspension_key {row.suspension_key!r}")
            if self.completed_n or self.suspended_n:
                problems.append(
                    f"running run has {self.completed_n} run_completed and "
                    f"{self.suspended_n} run_suspended records"
                )
        elif status == "suspended":
            if row.suspension_key is None:
                problems.append("suspended run remembers no suspension_key")
            elif row.terminal_key != row.suspension_key:
                problems.append(
                    f"terminal_key {row.terminal_key!r} differs from suspension_key "
                    f"{row.suspension_key!r}"
                )
            if self.suspended_n != 1 or self.completed_n:
                problems.append(
                    f"suspended run has {self.suspended_n} run_suspended and "
                    f"{self.completed_n} run_completed records (expected 1 and 0)"
                )
        else:
            if row.terminal_key is None:
                problems.append(f"{status} run remembers no terminal_key")
            if self.completed_n != 1 or self.suspended_n or row.suspension_key is not None:
                problems.append(
                    f"{status} run has {self.completed_n} run_completed and "
                    f"{self.suspended_n} run_suspended records (expected 1 and 0)"
                    + (" and a suspension_key" if row.suspension_key is not None else "")
                )
            if self.completed_error:
                problems.append(f"run_completed {row.terminal_key!r}: {self.completed_error}")
            elif self.completed is not None:
                if self.completed.run_status != status:
                    problems.append(
                        f"run_completed {row.terminal_key!r} says status "
                        f"{self.completed.status!r}/{self.completed.phase!r}, the run is {status}"
                    )
                if labels_json(self.completed.labels) != row.labels:
                    problems.append(
                        f"run_completed {row.terminal_key!r} labels differ from the run's"
                    )
        self.report(TERMINAL_RECORD, problems)

    def check_checkpoint(self) -> None:
        row = self.row
        if row.status != "suspended":
            if row.checkpoint_id is not None:
                self.report(SUSPENSION_CHECKPOINT, f"{row.status} run holds a checkpoint")
            return
        if row.checkpoint_id is None:
            self.report(SUSPENSION_CHECKPOINT, "suspended run has no checkpoint")
            return
        if row.susp_type != RUN_SUSPENDED:
            return  # reported as a lifecycle key
        suspended, error = _decoded(decode_run_suspended, row.susp_payload)
        if error:
            self.report(SUSPENSION_CHECKPOINT, f"run_suspended {row.suspension_key!r}: {error}")
        elif suspended.suspension_id != row.checkpoint_id:
            self.report(
                SUSPENSION_CHECKPOINT,
                f"checkpoint {row.checkpoint_id!r} but run_suspended names "
                f"{suspended.suspension_id!r}",
            )

    def check_stop(self) -> None:
        row = self.row
        if row.start_outcome != _STOP:
            return
        problems = []
        if row.status != "canceled":
            problems.append(f"status is {row.status}, not canceled")
        if row.cancellation_reason != _SESSION_ENDED:
            problems.append(f"cancellation_reason is {row.cancellation_reason!r}")
        if self.n != 2 or not self.started_first or self.second_type != RUN_COMPLETED:
            problems.append(
                f"{self.n} records, not exactly [run_started, run_completed] "
                f"(record 2 is {_describe(self.second_type)})"
            )
        if self.completed is not None and self.completed.cancellation_reason != _SESSION_ENDED:
            problems.append(
                f"run_completed reason is {self.completed.cancellation_reason!r}, "
                f"not {_SESSION_ENDED!r}"
            )
        self.report(STOPPED_START, problems)

    def check_cancellation(self) -> None:
        row = self.row
        problems: list[str] = []
        if row.start_outcome == _STOP:
            # The stop's own session_ended reason comes with no intent (3.10, second row).
            if self.intent_n or row.cancellation_key is not None:
                problems.append(
                    f"stopped start has {self.intent_n} cancellation intents and "
                    f"cancellation_key {row.cancellation_key!r}"
                )
            self.report(CANCELLATION_PROVENANCE, problems)
            return
        reason: str = row.cancellation_reason
        if reason:
            if self.intent_n != 1:
                problems.append(f"reason {reason!r} with {self.intent_n} intent records, not 1")
            if row.cancellation_key is None:
                problems.append(f"reason {reason!r} but no cancellation_key")
            elif row.cancel_type == CANCELLATION_INTENT:
                intent, error = _decoded(decode_cancellation_intent, row.cancel_payload)
                if error:
                    problems.append(f"intent {row.cancellation_key!r}: {error}")
                elif intent != reason:
                    problems.append(
                        f"intent {row.cancellation_key!r} says {intent!r}, run {reason!r}"
                    )
            expected = reason
        else:
            if self.intent_n or row.cancellation_key is not None:
                problems.append(
                    f"no cancellation reason, yet {self.intent_n} intent records and "
                    f"cancellation_key {row.cancellation_key!r}"
                )
            expected = _ENGINE_CANCELED
        # Only a canceled run_completed carries a reason; a mismatched status is terminal's.
        completed = self.completed
        if (
            row.status == "canceled"
            and completed is not None
            and completed.run_status == "canceled"
            and completed.cancellation_reason != expected
        ):
            problems.append(
                f"run_completed reason {completed.cancellation_reason!r}, expected {expected!r}"
            )
        self.report(CANCELLATION_PROVENANCE, problems)

    def check_keys(self) -> None:
        row = self.row
        problems = []
        if row.start_type != RUN_STARTED:
            problems.append(f"start_key {row.start_key!r} names {_describe(row.start_type)}")
        for name, key, actual, wanted in (
            ("cancellation_key", row.cancellation_key, row.cancel_type, (CANCELLATION_INTENT,)),
            ("suspension_key", row.suspension_key, row.susp_type, (RUN_SUSPENDED,)),
            ("terminal_key", row.terminal_key, row.term_type, (RUN_COMPLETED, RUN_SUSPENDED)),
        ):
            if key is not None and actual not in wanted:
                problems.append(f"{name} {key!r} names {_describe(actual)}")
        # A missing parent is a child-link finding; a present one must hold the link.
        if (
            row.parent_link_key is not None
            and row.parent_found is not None
            and row.link_type != CHILD_RUN_LINKED
        ):
            problems.append(
                f"parent_link_key {row.parent_link_key!r} names {_describe(row.link_type)} "
                f"on parent {row.parent_run_id!r}"
            )
        self.report(LIFECYCLE_KEYS, problems)

    def check_child_side(self) -> None:
        """A child's link is on its parent, under its parent_link_key, naming the child."""
        row = self.row
        problems: list[str] = []
        if not row.parent_run_id:
            if row.parent_link_key is not None:
                problems.append(f"root run remembers parent_link_key {row.parent_link_key!r}")
        elif row.parent_found is None:
            problems.append(f"parent run {row.parent_run_id!r} does not exist")
        else:
            if (row.parent_session or "") != self.session_id:
                problems.append(
                    f"parent {row.parent_run_id!r} is in session {row.parent_session or ''!r}"
                )
            if row.parent_link_key is None:
                problems.append("child run remembers no parent_link_key")
            elif row.link_type == CHILD_RUN_LINKED:
                linked, error = _decoded(decode_child_run_linked, row.link_payload)
                if error:
                    problems.append(f"link {row.parent_link_key!r}: {error}")
                elif (linked.child_run_id, linked.child_agent_id) != (self.run_id, row.agent_id):
                    problems.append(
                        f"link {row.parent_link_key!r} names child {linked.child_run_id!r} "
                        f"(agent {linked.child_agent_id!r})"
                    )
        self.report(CHILD_LINKS, problems)

    def check_parent_side(self) -> None:
        """Every link on this run names an existing child of this run.

        Each child is checked to hold its own link (``check_child_side``) and a link names
        one child, so equal counts mean every link is accounted for; only a mismatch makes
        the links of this run worth decoding.
        """
        if self.link_n == self.row.children:
            return
        links = self.conn.execute(
            sa.select(run_records.c.event_key, run_records.c.payload)
            .where(run_records.c.run_id == self.run_id, run_records.c.type == CHILD_RUN_LINKED)
            .order_by(run_records.c.seq)
        ).all()
        named: dict[str, str] = {}
        problems: list[str] = []
        for link in links:
            linked, error = _decoded(decode_child_run_linked, link.payload)
            if error:
                problems.append(f"link {link.event_key!r}: {error}")
            else:
                named[linked.child_run_id] = link.event_key
        candidates = list(named)  # ``named`` shrinks below as children are found
        for chunk_start in range(0, len(candidates), 500):
            chunk = candidates[chunk_start : chunk_start + 500]
            children = self.conn.execute(
                sa.select(runs.c.run_id, runs.c.parent_run_id).where(runs.c.run_id.in_(chunk))
            ).all()
            for child in children:
                if child.parent_run_id == self.run_id:
                    del named[child.run_id]
                else:
                    problems.append(
                        f"link {named.pop(child.run_id)!r} names run {child.run_id!r}, "
                        f"whose parent is {child.parent_run_id!r}"
                    )
        problems.extend(
            f"link {key!r} names child {child!r}, which does not exist"
            for child, key in named.items()
        )
        if not problems:
            problems.append(
                f"{self.link_n} child_run_linked records for {self.row.children} children"
            )
        if len(problems) > _DETAIL_ITEMS:
            problems[_DETAIL_ITEMS:] = [f"and {len(problems) - _DETAIL_ITEMS} more"]
        self.report(CHILD_LINKS, problems)


def _sequence_problems(conn: Connection, values: sa.Subquery, expected: int) -> str:
    """The first duplicates, gaps and out-of-range values of a column meant to be 1..n."""
    v = values.c.v
    duplicates = conn.scalars(
        sa.select(v).group_by(v).having(sa.func.count() > 1).order_by(v).limit(_DETAIL_ITEMS)
    ).all()
    lagged = sa.select(v, sa.func.lag(v, 1, 0).over(order_by=v).label("prev")).subquery()
    gaps = conn.execute(
        sa.select((lagged.c.prev + 1).label("first"), (lagged.c.v - 1).label("last"))
        .where(lagged.c.v - lagged.c.prev > 1)
        .order_by(lagged.c.v)
        .limit(_DETAIL_ITEMS)
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
        parts.append("missing " + ", ".join(missing[:_DETAIL_ITEMS]))
    if top > expected:
        parts.append(f"values up to {top} beyond {expected}")
    if low is not None and low < 1:
        parts.append(f"values down to {low}")
    return (": " + "; ".join(parts)) if parts else ""


# --- session pages -----------------------------------------------------------------------


def _verify_session_pages(conn: Connection, page_size: int, report: VerifyReport) -> None:
    rr = run_records.c
    for in_range in _pages(conn, sessions.c.session_id, page_size):
        # Positions over the records of each session's runs (not the records' own
        # session column: a record claiming another session is an owner finding).
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
        rows = conn.execute(
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
        ).all()
        report.sessions_checked += len(rows)
        for row in rows:
            if row.status == _PURGED:
                continue  # its runs are reported as leftovers by the run pages
            count = row.record_count
            if row.positioned == row.distinct_positions == count and (
                count == 0 or (row.min_pos == 1 and row.max_pos == count)
            ):
                continue
            values = (
                sa.select(rr.session_seq.label("v"))
                .select_from(runs.join(run_records, rr.run_id == runs.c.run_id))
                .where(runs.c.session_id == row.session_id, rr.session_seq.is_not(None))
            )
            report.violations.append(
                Violation(
                    SESSION_POSITIONS,
                    "",
                    row.session_id,
                    f"record_count {count}, {row.positioned} positions "
                    f"({row.distinct_positions} distinct) in {row.min_pos}..{row.max_pos}"
                    + _sequence_problems(conn, values.subquery(), count),
                )
            )
        _check_purged_session_records(conn, in_range, report.violations)


def _check_purged_session_records(
    conn: Connection, in_range: _KeyRange, out: list[Violation]
) -> None:
    """Records naming a purged session from a run outside it (its own runs are reported
    with the run)."""
    rr = run_records.c
    query = (
        sa.select(rr.session_id, rr.run_id, sa.func.count().label("n"))
        .select_from(
            run_records.join(sessions, sessions.c.session_id == rr.session_id).join(
                runs, runs.c.run_id == rr.run_id
            )
        )
        .where(
            sessions.c.status == _PURGED,
            in_range(sessions.c.session_id),
            sa.or_(runs.c.session_id.is_(None), runs.c.session_id != rr.session_id),
        )
        .group_by(rr.session_id, rr.run_id)
    )
    for row in conn.execute(query):
        out.append(
            Violation(
                PURGED_SESSION,
                row.run_id,
                row.session_id,
                f"{row.n} records of run {row.run_id!r} name the purged session",
            )
        )
