"""``python -m bench.append_cost``: PostgreSQL's own CPU per append, by what the append does.

Issue 18 judges ``SqlStore.append_run_record`` against the floor insert (one row into a
one-index table). This measures, on one connection and one thread (no contention, no
client in the figure), the CPU the server's backend process spends per call for:

* the floor insert (``bench/floor.py``'s statement), in autocommit;
* ``runtime_store_append_record`` (migration 0010) as ``SqlStore`` sends it;
* the same with the live tail's NOTIFY trigger disabled;
* a leaner shape that keeps the contract's guarantees (the session lock, record IDs and
  session positions in commit order, unique keys) but derives the next ID and position
  from the indexes instead of the run's and session's counters: what dropping the two
  counter updates would buy (a function created in the benchmark's database only);
* the pieces alone: the session lock, each counter update, ``SELECT 1``.

It reads the backend's CPU from ``/proc`` (server and benchmark on one machine), so it
needs a local PostgreSQL. Rounds alternate the shapes so a drifting machine shows.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from rich.console import Console
from rich.table import Table

from app.storage import SqlStore, create_engine
from app.storage.database.migrations import upgrade_schema
from tests.contract.builders import new_session, start_root

from .config import postgres_admin_url
from .floor import FloorStore, prepare
from .servers import create_postgres_database, drop_postgres_database
from .workloads import payload

_LEAN = """
CREATE FUNCTION bench_append_without_counters(
    p_run_id text, p_event_key text, p_agent_id text, p_session_id text, p_turn_id text,
    p_type text, p_payload bytea, p_timestamp_ms bigint, OUT record_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    s_id text;
    position bigint;
BEGIN
    SELECT sessions.session_id INTO s_id
      FROM sessions JOIN runs ON runs.session_id = sessions.session_id
     WHERE runs.run_id = p_run_id
       FOR UPDATE OF sessions;
    SELECT coalesce(max(seq), 0) + 1 INTO record_id FROM run_records WHERE run_id = p_run_id;
    SELECT coalesce(max(session_seq), 0) + 1 INTO position
      FROM run_records WHERE session_id = s_id;
    INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                             turn_id, type, payload, timestamp_ms)
    VALUES (p_run_id, record_id, p_event_key, p_agent_id, p_session_id, position,
            p_turn_id, p_type, p_payload, p_timestamp_ms);
END
$$
"""
_APPEND = "SELECT * FROM runtime_store_append_record(%s, %s, %s, %s, %s, %s, %b, %s)"
_LEAN_APPEND = "SELECT * FROM bench_append_without_counters(%s, %s, %s, %s, %s, %s, %b, %s)"
_TRIGGER = "run_records_notify"
#: The shapes measured, in order.
SHAPES = (
    "floor insert (1 KB row, one index)",
    "runtime_store_append_record",
    "  without the NOTIFY trigger",
    "  lean: no counter updates",
    "  lean, without the NOTIFY trigger",
    "the session lock alone",
    "the run's counter update alone",
    "the session's counter update alone",
    "SELECT 1",
)
_LOCK = (
    "SELECT sessions.record_count FROM sessions JOIN runs "
    "ON runs.session_id = sessions.session_id WHERE runs.run_id = %s FOR UPDATE OF sessions"
)
_RUN_COUNT = "UPDATE runs SET record_count = record_count WHERE run_id = %s"
_SESSION_COUNT = "UPDATE sessions SET record_count = record_count WHERE session_id = %s"


def _backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(database_url: str, calls: int, rounds: int) -> dict[str, list[float]]:
    """PostgreSQL CPU ms per call of each shape, one figure per round. Every append shape
    writes to a fresh run of a fresh session."""
    engine = create_engine(database_url)
    store = SqlStore(engine)
    conninfo = database_url.replace("postgresql+psycopg://", "postgresql://")
    conn = psycopg.connect(conninfo, autocommit=True)
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
    body = payload()
    figures: dict[str, list[float]] = {}
    try:
        prepare(conn)
        conn.execute(_LEAN)

        def run_of() -> Any:
            return start_root(store, new_session(store).id).run

        def append(sql: str) -> Callable[[int], object]:
            run = run_of()
            tag = os.urandom(4).hex()
            return lambda n: conn.execute(
                sql,
                (run.run_id, f"{tag}-{n}", run.agent_id, run.session_id, "", "note", body, 0),
            ).fetchone()

        floor_store = FloorStore(conn)  # autocommit: its COMMIT is a no-op, as ours are

        def statement(sql: str, *params: str) -> Callable[[int], object]:
            return lambda _: conn.execute(sql, params)

        for _ in range(rounds):
            run = run_of()
            shapes: list[tuple[str, Callable[[int], object], bool]] = [
                (
                    "floor insert (1 KB row, one index)",
                    lambda _: floor_store.insert(),
                    False,
                ),
                ("runtime_store_append_record", append(_APPEND), False),
                ("  without the NOTIFY trigger", append(_APPEND), True),
                ("  lean: no counter updates", append(_LEAN_APPEND), False),
                ("  lean, without the NOTIFY trigger", append(_LEAN_APPEND), True),
                ("the session lock alone", statement(_LOCK, run.run_id), False),
                ("the run's counter update alone", statement(_RUN_COUNT, run.run_id), False),
                (
                    "the session's counter update alone",
                    statement(_SESSION_COUNT, run.session_id),
                    False,
                ),
                ("SELECT 1", statement("SELECT 1"), False),
            ]
            assert tuple(name for name, _, _ in shapes) == SHAPES
            for name, call, no_trigger in shapes:
                if no_trigger:
                    conn.execute(f"ALTER TABLE run_records DISABLE TRIGGER {_TRIGGER}")
                try:
                    call(0)
                    before = _backend_cpu(pid)
                    for n in range(1, calls + 1):
                        call(n)
                    spent = _backend_cpu(pid) - before
                finally:
                    if no_trigger:
                        conn.execute(f"ALTER TABLE run_records ENABLE TRIGGER {_TRIGGER}")
                figures.setdefault(name, []).append(1e3 * spent / calls)
    finally:
        conn.close()
        engine.dispose()
    return figures


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(prog="python -m bench.append_cost", description=__doc__)
    parser.add_argument("--calls", type=int, default=4000, help="calls per shape and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    args = parser.parse_args(argv)
    database_url = create_postgres_database(args.postgres_url)
    try:
        upgrade_schema(database_url)
        started = time.strftime("%H:%M UTC", time.gmtime())
        figures = measure(database_url, args.calls, args.rounds)
    finally:
        drop_postgres_database(args.postgres_url, database_url)
    floor = figures["floor insert (1 KB row, one index)"]
    table = Table(
        title=f"PostgreSQL CPU per call, one connection, {args.calls} calls a round ({started})"
    )
    table.add_column("shape")
    table.add_column("ms per call, each round", justify="right")
    table.add_column("ratio to the floor insert", justify="right")
    for name, values in figures.items():
        # A round too short for the clock's 10 ms ticks reads 0 for the floor: no ratio.
        ratios = [
            f"{value / base:.2f}" if base > 0 else "-"
            for value, base in zip(values, floor, strict=True)
        ]
        table.add_row(name, " / ".join(f"{value:.3f}" for value in values), " / ".join(ratios))
    Console(width=120).print(table)
    return figures


if __name__ == "__main__":
    main()
