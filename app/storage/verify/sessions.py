"""Sessions and purges: session positions, what a purge must leave, and rows of no run.

A purge (CONTRACT.md 3.1) makes a session's runs unreachable in one transaction: it turns
the session row into a tombstone (status ``purged``), deletes the runs and leaves a run
tombstone per run; their records and checkpoints may be deleted in later batches. Retention
(11.4) deletes terminal sessionless runs the same way, with run tombstones that name no
session. So a record or checkpoint of no run is pending deletion when its run is
tombstoned, and dangling otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from app.domain.state import SessionRowStatus
from app.storage.database.tables import (
    checkpoints,
    import_claims,
    run_records,
    run_tombstones,
    runs,
    sessions,
)
from app.storage.unit_of_work.import_holds import RUN as RUN_CLAIM
from app.storage.verify.facts import RecordStats, RunChecks, RunFacts
from app.storage.verify.reading import KeyRange, is_one_to, pages, sequence_problems, session_rows
from app.storage.verify.report import (
    DANGLING_ROWS,
    PURGED_SESSION,
    SESSION_POSITIONS,
    VerifyReport,
    Violation,
)

# --- session pages -----------------------------------------------------------------------


def verify_session_pages(conn: Connection, page_size: int, report: VerifyReport) -> None:
    for in_range in pages(conn, sessions.c.session_id, page_size):
        rows = session_rows(conn, in_range)
        report.sessions_checked += len(rows)
        for row in rows:
            if row.status == SessionRowStatus.PURGED.value:
                continue  # its runs are reported as leftovers by the run pages
            if row.positioned == row.distinct_positions and is_one_to(
                row.record_count, row.distinct_positions, row.min_pos, row.max_pos
            ):
                continue
            report.violations.append(_positions_violation(conn, row))
        report.violations.extend(_purged_session_records(conn, in_range))


def _positions_violation(conn: Connection, row: Row[Any]) -> Violation:
    """Describes the positions of a session (a ``session_rows`` row) found broken."""
    rr = run_records.c
    values = (
        sa.select(rr.session_seq.label("v"))
        .select_from(runs.join(run_records, rr.run_id == runs.c.run_id))
        .where(runs.c.session_id == row.session_id, rr.session_seq.is_not(None))
    )
    count = row.record_count
    return Violation(
        SESSION_POSITIONS,
        "",
        row.session_id,
        f"record_count {count}, {row.positioned} positions "
        f"({row.distinct_positions} distinct) in {row.min_pos}..{row.max_pos}"
        + sequence_problems(conn, values.subquery(), count),
    )


def _purged_session_records(conn: Connection, in_range: KeyRange) -> Iterator[Violation]:
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
            sessions.c.status == SessionRowStatus.PURGED.value,
            in_range(sessions.c.session_id),
            sa.or_(runs.c.session_id.is_(None), runs.c.session_id != rr.session_id),
        )
        .group_by(rr.session_id, rr.run_id)
    )
    for row in conn.execute(query):
        yield Violation(
            PURGED_SESSION,
            row.run_id,
            row.session_id,
            f"{row.n} records of run {row.run_id!r} name the purged session",
        )


# --- per run: its session ----------------------------------------------------------------


def session_exists(run: RunFacts) -> Iterator[str]:
    row = run.row
    if row.session_id is not None and row.session_status is None:
        yield f"run names session {row.session_id!r}, which does not exist"


def not_purged(run: RunFacts) -> Iterator[str]:
    """A purge leaves no run of the session, and a tombstoned run ID names no run."""
    row = run.row
    if row.session_status == SessionRowStatus.PURGED.value:
        held = f"{run.stats.n} records" + (" and a checkpoint" if row.checkpoint_id else "")
        yield f"run of the purged session remains with {held}"
    if row.tombstoned is not None:
        by = (
            f"the purge of session {row.tombstone_session!r}"
            if row.tombstone_session is not None
            else "retention (a sessionless run)"
        )
        yield f"run ID was tombstoned by {by} but the run exists"


CHECKS: Final[RunChecks] = (
    (DANGLING_ROWS, session_exists),
    (PURGED_SESSION, not_purged),
)


# --- per run page: rows of no run, run tombstones ----------------------------------------


def check_runless_rows(
    conn: Connection, in_range: KeyRange, runless: dict[str, RecordStats], report: VerifyReport
) -> None:
    """Records (``runless``: their stats, by run ID) and checkpoints of the range whose
    run does not exist: pending deletion if the run is tombstoned, else dangling."""
    pending = _tombstoned(conn, list(runless))
    importing = _claimed(conn, list(runless))
    for run_id, stats in runless.items():
        if run_id in pending:
            report.purge_pending_records += stats.n
            continue
        if run_id in importing:
            report.import_pending_records += stats.n
            continue
        report.violations.append(
            Violation(DANGLING_ROWS, run_id, "", f"{stats.n} records belong to no run")
        )
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


def _tombstoned(conn: Connection, run_ids: list[str]) -> set[str]:
    if not run_ids:
        return set()
    query = sa.select(run_tombstones.c.run_id).where(run_tombstones.c.run_id.in_(run_ids))
    return set(conn.execute(query).scalars())


def _claimed(conn: Connection, run_ids: list[str]) -> set[str]:
    """Run IDs an SQLite import in progress holds (its records come before its runs)."""
    if not run_ids:
        return set()
    query = sa.select(import_claims.c.claimed_id).where(
        import_claims.c.kind == RUN_CLAIM, import_claims.c.claimed_id.in_(run_ids)
    )
    return set(conn.execute(query).scalars())


def check_tombstones(conn: Connection, in_range: KeyRange) -> Iterator[Violation]:
    """Every run tombstone of a session points at a session that is purged (a tombstone
    without a session is a sessionless run deleted by retention)."""
    query = (
        sa.select(run_tombstones.c.run_id, run_tombstones.c.session_id, sessions.c.status)
        .outerjoin(sessions, sessions.c.session_id == run_tombstones.c.session_id)
        .where(
            in_range(run_tombstones.c.run_id),
            run_tombstones.c.session_id.is_not(None),
            sa.or_(sessions.c.status.is_(None), sessions.c.status != SessionRowStatus.PURGED.value),
        )
    )
    for row in conn.execute(query):
        state = "does not exist" if row.status is None else f"is {row.status}"
        yield Violation(
            PURGED_SESSION,
            row.run_id,
            row.session_id,
            f"run tombstone points at session {row.session_id!r}, which {state}",
        )
