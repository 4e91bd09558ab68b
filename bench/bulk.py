"""Fast fixtures written with direct SQL: running runs, records, a purgeable session.

Rows are generated inside the database (``generate_series`` on PostgreSQL, a recursive
CTE on SQLite), with the counters the store hands IDs from kept consistent, so the
service reads and extends them exactly as if it had written them.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.storage.database.engines import WRITE_OPTION

STARTED_PAYLOAD = b'{"ParentRunID":"","PredecessorRunID":"","Labels":null}'


def _insert_series(conn: Connection, head: str, select: str, count: int, **params: Any) -> None:
    """``head`` (an ``INSERT INTO … (columns)``) fed by ``select`` over ``x`` = 1..count."""
    if conn.dialect.name == "postgresql":
        sql = f"{head} SELECT {select} FROM generate_series(1, :count) AS g(x)"
    else:
        sql = (
            "WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < :count) "
            f"{head} SELECT {select} FROM g"
        )
    conn.execute(sa.text(sql), {"count": count, **params})


def _write(engine: Engine) -> Connection:
    return engine.connect().execution_options(**{WRITE_OPTION: True})


def _session_count(conn: Connection, session_id: str) -> int:
    query = sa.text("SELECT record_count FROM sessions WHERE session_id = :sid")
    return int(conn.execute(query, {"sid": session_id}).scalar_one())


def _bump_session(conn: Connection, session_id: str, added: int) -> None:
    conn.execute(
        sa.text("UPDATE sessions SET record_count = record_count + :n WHERE session_id = :sid"),
        {"n": added, "sid": session_id},
    )


def add_running_runs(
    engine: Engine,
    session_id: str,
    run_prefix: str,
    count: int,
    *,
    agent_id: str,
    started_at_ms: int,
    status: str = "running",
) -> None:
    """Runs ``{run_prefix}1`` … ``{run_prefix}{count}`` in an existing session.

    Each holds its ``run_started`` record (event key ``start``) as if started by
    ``start_root_run`` in an active session with no labels.
    """
    if count <= 0:
        return
    with _write(engine) as conn, conn.begin():
        base = _session_count(conn, session_id)
        _insert_series(
            conn,
            "INSERT INTO runs (run_id, agent_id, session_id, parent_run_id, status, "
            "start_outcome, started_at_ms, updated_at_ms, labels, cancellation_reason, "
            "record_count, start_key, terminal_key)",
            "CAST(:prefix AS TEXT) || x, :agent, :sid, '', :status, 'proceed', :ms, :ms, "
            "'{}', '', 1, 'start', :terminal_key",
            count,
            prefix=run_prefix,
            agent=agent_id,
            sid=session_id,
            status=status,
            ms=started_at_ms,
            terminal_key=None if status == "running" else "terminal",
        )
        _insert_series(
            conn,
            "INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, "
            "session_seq, turn_id, type, payload, timestamp_ms)",
            "CAST(:prefix AS TEXT) || x, 1, 'start', :agent, :sid, :base + x, '', "
            "'run_started', :payload, :ms",
            count,
            prefix=run_prefix,
            agent=agent_id,
            sid=session_id,
            base=base,
            payload=STARTED_PAYLOAD,
            ms=started_at_ms,
        )
        _bump_session(conn, session_id, count)


def add_records(
    engine: Engine, run_id: str, count: int, payload: bytes, *, timestamp_ms: int
) -> None:
    """Append ``count`` ``planner_note`` records (keys ``bulk-<id>``) to an existing run."""
    if count <= 0:
        return
    with _write(engine) as conn, conn.begin():
        run = conn.execute(
            sa.text("SELECT agent_id, session_id, record_count FROM runs WHERE run_id = :rid"),
            {"rid": run_id},
        ).one()
        session_base = _session_count(conn, run.session_id) if run.session_id else 0
        _insert_series(
            conn,
            "INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, "
            "session_seq, turn_id, type, payload, timestamp_ms)",
            ":rid, :run_base + x, 'bulk-' || (:run_base + x), :agent, :sid, "
            f"{':session_base + x' if run.session_id else 'NULL'}, '', 'planner_note', "
            ":payload, :ms",
            count,
            rid=run_id,
            run_base=run.record_count,
            agent=run.agent_id,
            sid=run.session_id,
            session_base=session_base,
            payload=payload,
            ms=timestamp_ms,
        )
        conn.execute(
            sa.text("UPDATE runs SET record_count = record_count + :n WHERE run_id = :rid"),
            {"n": count, "rid": run_id},
        )
        if run.session_id:
            _bump_session(conn, run.session_id, count)


def add_finished_runs(
    engine: Engine,
    session_id: str,
    run_prefix: str,
    runs: int,
    *,
    per_run: int,
    payload: bytes,
    agent_id: str,
    at_ms: int,
) -> None:
    """``runs`` completed runs of ``per_run`` records each in an existing, empty session.

    Only what a purge touches is realistic: the records are ``planner_note``s with no
    lifecycle records, which the purge deletes without reading.
    """
    with _write(engine) as conn, conn.begin():
        _insert_series(
            conn,
            "INSERT INTO runs (run_id, agent_id, session_id, parent_run_id, status, "
            "start_outcome, started_at_ms, updated_at_ms, labels, cancellation_reason, "
            "record_count, start_key, terminal_key)",
            "CAST(:prefix AS TEXT) || x, :agent, :sid, '', 'completed', 'proceed', :ms, :ms, "
            "'{}', '', :per_run, 'start', 'terminal'",
            runs,
            prefix=run_prefix,
            agent=agent_id,
            sid=session_id,
            ms=at_ms,
            per_run=per_run,
        )
        _insert_series(
            conn,
            "INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, "
            "session_seq, turn_id, type, payload, timestamp_ms)",
            "CAST(:prefix AS TEXT) || ((x - 1) / :per_run + 1), (x - 1) % :per_run + 1, "
            "'bulk-' || ((x - 1) % :per_run + 1), :agent, :sid, x, '', 'planner_note', "
            ":payload, :ms",
            runs * per_run,
            prefix=run_prefix,
            per_run=per_run,
            agent=agent_id,
            sid=session_id,
            payload=payload,
            ms=at_ms,
        )
        _bump_session(conn, session_id, runs * per_run)


def end_session_and_runs(engine: Engine, session_id: str, ended_at_ms: int) -> None:
    """Mark every run of the session completed and the session ended (ready to purge)."""
    with _write(engine) as conn, conn.begin():
        conn.execute(
            sa.text(
                "UPDATE runs SET status = 'completed', terminal_key = 'terminal' "
                "WHERE session_id = :sid AND status = 'running'"
            ),
            {"sid": session_id},
        )
        conn.execute(
            sa.text(
                "UPDATE sessions SET status = 'ended', ended_at_ms = :ms WHERE session_id = :sid"
            ),
            {"sid": session_id, "ms": ended_at_ms},
        )


def analyze(engine: Engine) -> None:
    """Refresh PostgreSQL's planner statistics (and so its cached plans), as autovacuum would."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE"))
