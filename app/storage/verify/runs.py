"""Run pages: every per-run invariant, for each run of a page of ``run_id``s.

This module holds the checks of a run's records as a sequence (the first is
``run_started``, IDs are ``1..record_count``, positions present exactly for session runs,
owners are the run's); ``sessions``, ``lifecycle`` and ``links`` hold the rest, and
``RUN_CHECKS`` lists them all in report order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.storage.database.tables import run_records, runs
from app.storage.verify import continuations, lifecycle, links, sessions, starts
from app.storage.verify.facts import NO_RECORDS, RunChecks, RunFacts
from app.storage.verify.labels import check_run_labels
from app.storage.verify.reading import is_one_to, pages, record_stats, run_rows, sequence_problems
from app.storage.verify.report import (
    POSITION_PRESENCE,
    RECORD_IDS,
    RECORD_OWNER,
    RUN_STARTED_FIRST,
    VerifyReport,
    Violation,
)


def verify_run_pages(conn: Connection, page_size: int, report: VerifyReport) -> None:
    for in_range in pages(conn, runs.c.run_id, page_size):
        stats = record_stats(conn, in_range)
        rows = run_rows(conn, in_range)
        report.runs_checked += len(rows)
        report.records_checked += sum(run_stats.n for run_stats in stats.values())
        for row in rows:
            run = RunFacts(conn, row, stats.pop(row.run_id, NO_RECORDS))
            report.violations.extend(check_run(run))
        report.violations.extend(check_run_labels(conn, in_range, rows))
        # What is left has no run row.
        sessions.check_runless_rows(conn, in_range, stats, report)
        report.violations.extend(sessions.check_tombstones(conn, in_range))


def check_run(run: RunFacts) -> Iterator[Violation]:
    """One violation per check that finds problems, its problems joined."""
    for invariant, check in RUN_CHECKS:
        problems = list(check(run))
        if problems:
            yield Violation(invariant, run.run_id, run.session_id, "; ".join(problems))


def run_started_first(run: RunFacts) -> Iterator[str]:
    stats = run.stats
    if stats.started_n != 1 or not stats.started_first:
        where = "record 1 is one" if stats.started_first else "record 1 is not one"
        yield f"{stats.started_n} run_started records ({where})"


def record_ids(run: RunFacts) -> Iterator[str]:
    count = run.row.record_count
    stats = run.stats
    # IDs are a primary key column with the run ID: never duplicated within a run.
    if is_one_to(count, stats.n, stats.min_seq, stats.max_seq):
        return
    values = sa.select(run_records.c.seq.label("v")).where(run_records.c.run_id == run.run_id)
    yield (
        f"record_count {count}, {stats.n} records with IDs {stats.min_seq}..{stats.max_seq}"
        + sequence_problems(run.conn, values.subquery(), count)
    )


def position_presence(run: RunFacts) -> Iterator[str]:
    stats = run.stats
    if run.session_id and stats.positioned != stats.n:
        yield f"{stats.n - stats.positioned} records have no session position"
    if not run.session_id and stats.positioned:
        yield f"{stats.positioned} records of a sessionless run have a session position"


def record_owner(run: RunFacts) -> Iterator[str]:
    stats, agent_id = run.stats, run.row.agent_id
    if stats.n == 0 or (
        stats.min_agent == stats.max_agent == agent_id
        and stats.min_session == stats.max_session == run.session_id
    ):
        return
    rr = run_records.c
    mismatch = sa.or_(
        rr.agent_id != agent_id, sa.func.coalesce(rr.session_id, "") != run.session_id
    )
    found = run.conn.execute(
        sa.select(sa.func.count(), sa.func.min(rr.seq)).where(rr.run_id == run.run_id, mismatch)
    ).one()
    yield (
        f"{found[0]} records (first ID {found[1]}) do not carry the run's agent "
        f"{agent_id!r} and session {run.session_id!r}"
    )


RECORD_CHECKS: Final[RunChecks] = (
    (RUN_STARTED_FIRST, run_started_first),
    (RECORD_IDS, record_ids),
    (POSITION_PRESENCE, position_presence),
    (RECORD_OWNER, record_owner),
)

#: Every per-run check, in report order.
RUN_CHECKS: Final[RunChecks] = (
    sessions.CHECKS
    + RECORD_CHECKS
    + lifecycle.CHECKS
    + links.CHECKS
    + continuations.CHECKS
    + starts.CHECKS
)
