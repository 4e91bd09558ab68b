"""Transcript prefix reads are index ranges of the transcript records only (CONTRACT.md
12.3, migration 0014): however many other records a run holds, a page reads the partial
index ``ix_run_records_transcript``, on both databases, also as a prepared statement's
generic plan on PostgreSQL (the types are literals, never parameters). And a page reads no
payload past its cut."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy.engine import Connection, Engine

from app.storage import SqlStore
from app.storage.database import dialects
from app.storage.database.raw_statements import DriverStatement
from app.storage.records.transcript_reads import (
    _RUN_AND_TRANSCRIPT_KEYS,
    _TRANSCRIPT_KEYS,
    _TRANSCRIPT_ROWS,
)
from tests.contract.builders import new_session, record, start_root

INDEX = "ix_run_records_transcript"
PARAMS = {"run_id": "r", "first": 0, "after": 0, "through": 10, "last": 10, "count": 10}


def _sqlite_plan(conn: Connection, statement: DriverStatement) -> str:
    compiled = statement.statement.compile(dialect=conn.dialect)
    values = tuple(PARAMS.get(name, 0) for name in compiled.positiontup or [])
    rows = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + str(compiled), values).all()
    return " ".join(str(row[-1]) for row in rows)


def _postgres_generic_plan(conn: Connection, statement: DriverStatement) -> str:
    """The plan of the statement prepared with ``$n`` parameters, forced generic."""
    sql = statement.compiled(conn)
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    prepared = re.sub(r"%\((\w+)\)s", number, sql)
    conn.exec_driver_sql("SET LOCAL plan_cache_mode = force_generic_plan")
    conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
    conn.exec_driver_sql(f"PREPARE transcript_read AS {prepared}")
    try:
        arguments = ", ".join(
            f"'{PARAMS[name]}'" if name == "run_id" else str(PARAMS[name]) for name in names
        )
        rows = conn.exec_driver_sql(f"EXPLAIN EXECUTE transcript_read({arguments})").all()
    finally:
        conn.exec_driver_sql("DEALLOCATE transcript_read")
    return " ".join(str(row[0]) for row in rows)


@pytest.mark.parametrize(
    "statement",
    [_TRANSCRIPT_KEYS, _RUN_AND_TRANSCRIPT_KEYS, _TRANSCRIPT_ROWS],
    ids=["keys", "run-and-keys", "rows"],
)
def test_a_transcript_page_reads_the_transcript_index(
    engine: Engine, statement: DriverStatement
) -> None:
    store = SqlStore(engine)
    run = start_root(store, new_session(store).id).run
    for n in range(30):
        kind = "transcript_messages_appended" if n % 10 == 0 else "tool_call_scheduled"
        store.append_run_record(record(run, event_key=f"e{n}", type=kind, payload=b"[]"))
    with engine.connect() as conn, conn.begin():
        if engine.dialect.name == "sqlite":
            plan = _sqlite_plan(conn, statement)
        else:
            plan = _postgres_generic_plan(conn, statement)
    assert INDEX in plan, plan


@pytest.fixture
def fetched(monkeypatch: pytest.MonkeyPatch) -> list[Sequence[Any]]:
    """Every row a read fetched through the dialect, on either database."""
    rows: list[Sequence[Any]] = []
    for dialect in (dialects.SqliteDialect, dialects.PostgresDialect):
        read = dialect.fetch_all

        def recording(self: Any, conn: Any, statement: Any, params: Any, read: Any = read) -> Any:
            found = read(self, conn, statement, params)
            rows.extend(found)
            return found

        monkeypatch.setattr(dialect, "fetch_all", recording)
    return rows


def test_a_transcript_page_reads_no_payload_past_its_cut(
    engine: Engine, fetched: list[Sequence[Any]]
) -> None:
    store = SqlStore(engine)
    run = start_root(store, new_session(store).id).run
    payload = b'["' + b"x" * (400 * 1024) + b'"]'
    for n in range(4):
        store.append_run_record(
            record(run, event_key=f"t{n}", type="transcript_messages_appended", payload=payload)
        )
    fetched.clear()

    page = store.list_run_transcript_records(run.run_id, "5", limit=512)

    assert len(page.records) == 2  # a third would pass 1 MiB
    read = sum(len(value) for row in fetched for value in row if isinstance(value, bytes))
    assert read == 2 * len(payload)
