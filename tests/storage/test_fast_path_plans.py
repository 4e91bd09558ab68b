"""A hot statement costs no more on a long run than on a short one, whatever plan it has.

PostgreSQL keeps a statement's plan: a PL/pgSQL function's statements for the life of its
connection, and a statement psycopg prepares (after a few executions) likewise. After a
few executions that is a generic plan, costed on the tables as they were then, often
nearly empty. A lookup that joins a batch's keys to the run's records, or filters them
from the run's whole index range, then reads every record of the run on every batch for
as long as the connection lives (docs/performance.md, "A batch's cost and its run's
length").

Here each statement gets its generic plan on an empty table (``plan_cache_mode =
force_generic_plan``, autovacuum off so no ``ANALYZE`` replans it), a run then grows to
10,000 records of 1 KB, and ``EXPLAIN (ANALYZE, BUFFERS)`` counts the buffers one
execution touches on that run and on a short one (a function's own statements included).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from psycopg import sql
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Engine, make_url

from app.storage import SqlStore, create_engine
from app.storage.database import statements as st
from app.storage.database.migrations import upgrade_schema
from app.storage.records import pages as page_reads
from app.storage.records import transcript_reads
from bench.bulk import add_records
from runtime_store_client import RunStart
from tests.conftest import postgres_server_url
from tests.contract.builders import new_session, start_root

_LONG_RUN = 10_000
#: Buffers an execution may touch on the long run beyond the short run's: a B-tree a
#: level deeper, and a page of 100 records of 1 KB (about 15 heap pages).
_SLACK = 30
_BATCH = 16
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A database of its own: its tables are empty when the plans are made."""
    admin = sa.create_engine(postgres_server_url(), isolation_level="AUTOCOMMIT")
    name = f"rs_plans_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except sa.exc.OperationalError:
        admin.dispose()
        pytest.skip("no PostgreSQL server answers")
    url = make_url(postgres_server_url()).set(database=name).render_as_string(False)
    try:
        upgrade_schema(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


class Probe:
    """One connection whose statements keep the generic plans made on empty tables."""

    def __init__(self, url: str) -> None:
        conninfo = url.replace("postgresql+psycopg://", "postgresql://")
        self.conn = psycopg.connect(conninfo, autocommit=True)
        self.conn.execute("ALTER TABLE run_records SET (autovacuum_enabled = off)")
        self.conn.execute("SET plan_cache_mode = force_generic_plan")
        self._dialect = postgresql.psycopg.dialect()  # type: ignore[no-untyped-call]
        self._params: dict[str, list[str]] = {}

    def prepare(self, name: str, statement: sa.ClauseElement) -> None:
        """``PREPARE`` a Core statement as the store sends it (``$n`` for each name)."""
        text = str(statement.compile(dialect=self._dialect))
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            if match.group(1) not in names:
                names.append(match.group(1))
            return f"${names.index(match.group(1)) + 1}"

        numbered = _PLACEHOLDER.sub(number, text)
        self.conn.execute(
            sql.SQL("PREPARE {} AS ").format(sql.Identifier(name)) + sql.SQL(numbered)
        )
        self._params[name] = names

    def buffers(self, query: sql.Composable) -> int:
        """Shared buffers (hits and reads) one execution of ``query`` touches."""
        explain = sql.SQL("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ")
        row = self.conn.execute(explain + query).fetchone()
        assert row is not None
        plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
        top = plan[0]["Plan"]
        return int(top["Shared Hit Blocks"]) + int(top["Shared Read Blocks"])

    def execute(self, name: str, values: dict[str, Any]) -> int:
        arguments = sql.SQL(", ").join(sql.Literal(values[key]) for key in self._params[name])
        return self.buffers(sql.SQL("EXECUTE {}({})").format(sql.Identifier(name), arguments))


def _values(run: RunStart) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "event_key": "start",
        "event_keys": ["start", "absent"],
        "after": 0,
        "last": 100,
        "limit_plus_one": 101,
        "first": 1,
        "through": 1_000_000,
        "count": 101,
    }


#: Statements of the Python path and the page reads, by prepared name, with their owner.
_STATEMENTS: dict[str, tuple[sa.ClauseElement, str]] = {
    "run_page_keys": (page_reads._RUN_PAGE.keys.statement, "run"),
    "run_page_rows": (page_reads._RUN_PAGE.rows.statement, "run"),
    "run_and_page_keys": (page_reads._RUN_AND_KEYS.statement, "run"),
    "session_page_keys": (page_reads._SESSION_PAGE.keys.statement, "session"),
    "session_and_page_keys": (page_reads._SESSION_AND_KEYS.statement, "session"),
    "session_page_rows": (page_reads._SESSION_PAGE.rows.statement, "session"),
    "run_and_record": (st._RUN_AND_RECORD, "run"),
    "records_by_keys": (st.SELECT_RECORDS_BY_KEYS_PROBED, "run"),
    "transcript_keys": (transcript_reads._TRANSCRIPT_KEYS.statement, "run"),
    "run_and_transcript_keys": (transcript_reads._RUN_AND_TRANSCRIPT_KEYS.statement, "run"),
    "transcript_rows": (transcript_reads._TRANSCRIPT_ROWS.statement, "run"),
    "record_by_key": (transcript_reads._RECORD_BY_KEY.statement, "run"),
}


def _append_one(run: RunStart) -> sql.Composable:
    return sql.SQL(
        "SELECT * FROM runtime_store_append_record(p_run_id => {}, p_event_key => {}, "
        "p_agent_id => {}, p_session_id => {}, p_turn_id => '', p_type => 'planner_note', "
        "p_payload => '\\x7b7d'::bytea, p_timestamp_ms => 0)"
    ).format(
        sql.Literal(run.run_id),
        sql.Literal(f"plan-{uuid.uuid4().hex}"),
        sql.Literal(run.agent_id),
        sql.Literal(run.session_id),
    )


def _append_batch(run: RunStart) -> sql.Composable:
    keys = [f"plan-{uuid.uuid4().hex}" for _ in range(_BATCH)]
    return sql.SQL(
        "SELECT * FROM runtime_store_append_records(p_run_id => {}, p_agent_id => {}, "
        "p_session_id => {}, p_event_keys => {}, p_turn_ids => {}, p_types => {}, "
        "p_payloads => {}, p_timestamps_ms => {})"
    ).format(
        sql.Literal(run.run_id),
        sql.Literal(run.agent_id),
        sql.Literal(run.session_id),
        sql.Literal(keys),
        sql.Literal([""] * _BATCH),
        sql.Literal(["planner_note"] * _BATCH),
        sql.Literal([b"{}"] * _BATCH),
        sql.Literal([0] * _BATCH),
    )


_FUNCTIONS: dict[str, Callable[[RunStart], sql.Composable]] = {
    "runtime_store_append_record": _append_one,
    "runtime_store_append_records": _append_batch,
}


@pytest.fixture(scope="module")
def measured(database: str) -> dict[str, tuple[int, int]]:
    """Buffers per execution of each statement: (short run, long run)."""
    engine: Engine = create_engine(database)
    store = SqlStore(engine)
    try:
        short, long = (start_root(store, new_session(store).id).run for _ in range(2))
        probe = Probe(database)
        owners = {"run": "run_id", "session": "session_id"}

        def values(run: RunStart, owner: str) -> dict[str, Any]:
            return {**_values(run), "owner": getattr(run, owners[owner])}

        for name, (statement, owner) in _STATEMENTS.items():
            probe.prepare(name, statement)
            probe.execute(name, values(short, owner))  # the generic plan, made now
        for call in _FUNCTIONS.values():
            probe.buffers(call(short))
        add_records(engine, long.run_id, _LONG_RUN, b"x" * 1024, timestamp_ms=0)
        found = {
            name: (
                probe.execute(name, values(short, owner)),
                probe.execute(name, values(long, owner)),
            )
            for name, (_, owner) in _STATEMENTS.items()
        }
        for name, call in _FUNCTIONS.items():
            found[name] = (probe.buffers(call(short)), probe.buffers(call(long)))
        probe.conn.close()
        return found
    finally:
        engine.dispose()


@pytest.mark.parametrize("name", [*_STATEMENTS, *_FUNCTIONS])
def test_a_hot_statement_touches_no_more_buffers_on_a_long_run(
    measured: dict[str, tuple[int, int]], name: str
) -> None:
    on_short, on_long = measured[name]
    # The long run's records fill more than a thousand pages: reading them would show.
    assert on_long <= on_short + _SLACK, (on_short, on_long)
