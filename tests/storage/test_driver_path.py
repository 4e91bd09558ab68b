"""PostgreSQL's write path runs on the driver connection, observed or not.

An append and a terminal write are one statement each (migrations 0010 and 0012, in
autocommit); the lock, the lookup and the fused write of the other single-record writes (a
cancellation here) are three. All are compiled by SQLAlchemy and sent on its connection
(app/storage/database/raw_statements.py); statement observers receive SQLAlchemy's events
from them without changing the path; errors come back as SQLAlchemy's.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.database import raw_statements
from runtime_store_client import RunStatus
from tests.contract.builders import (
    all_records,
    cancellation_record,
    new_session,
    record,
    start_root,
    terminal_record,
)


@pytest.fixture
def driver_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL of every statement sent on the driver connection."""
    calls: list[str] = []
    run = raw_statements.DriverStatement._run

    def counting(
        self: raw_statements.DriverStatement, conn: Any, params: Any, *, fetch: bool
    ) -> Any:
        calls.append(self.compiled(conn))
        return run(self, conn, params, fetch=fetch)

    monkeypatch.setattr(raw_statements.DriverStatement, "_run", counting)
    return calls


def test_an_append_sends_its_one_statement_on_the_driver_connection(
    postgres_engine: Engine, driver_calls: list[str]
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    driver_calls.clear()

    result = store.append_run_record(record(run, event_key="e1"))

    assert result.inserted
    assert [sql.split()[0] for sql in driver_calls] == ["SELECT"]
    assert "runtime_store_append_record" in driver_calls[0]
    assert [r.event_key for r in all_records(store, run.run_id)][-1] == "e1"


def test_a_terminal_write_sends_its_one_statement_on_the_driver_connection(
    postgres_engine: Engine, driver_calls: list[str]
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    driver_calls.clear()

    result = store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )

    assert result.inserted
    assert [sql.split()[0] for sql in driver_calls] == ["SELECT"]
    assert "runtime_store_finish_run" in driver_calls[0]


def test_a_cancellation_sends_its_three_statements_on_the_driver_connection(
    postgres_engine: Engine, driver_calls: list[str]
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    driver_calls.clear()

    result = store.record_run_cancellation(
        run.run_id, "user_requested", cancellation_record(run, "user_requested")
    )

    assert result.inserted
    assert [sql.split()[0] for sql in driver_calls] == ["SELECT", "SELECT", "WITH"]
    assert "FOR UPDATE OF sessions" in driver_calls[0]


def test_an_observed_append_takes_the_same_path_and_the_observer_sees_every_statement(
    postgres_engine: Engine, driver_calls: list[str]
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    driver_calls.clear()
    before: list[tuple[str, object]] = []
    after: list[tuple[str, object]] = []

    def observe_before(
        _conn: Any, _cursor: Any, sql: str, _params: Any, context: Any, _many: bool
    ) -> None:
        context.span = sql  # tracing keeps its span on the context
        before.append((sql, context))

    def observe_after(
        _conn: Any, _cursor: Any, sql: str, _params: Any, context: Any, _many: bool
    ) -> None:
        after.append((sql, getattr(context, "span", None)))

    sa.event.listen(postgres_engine, "before_cursor_execute", observe_before)
    sa.event.listen(postgres_engine, "after_cursor_execute", observe_after)
    try:
        store.append_run_record(record(run, event_key="e1"))
    finally:
        sa.event.remove(postgres_engine, "before_cursor_execute", observe_before)
        sa.event.remove(postgres_engine, "after_cursor_execute", observe_after)

    assert [sql.split()[0] for sql in driver_calls] == ["SELECT"]
    assert [sql for sql, _ in before] == driver_calls
    assert after == [(sql, sql) for sql in driver_calls]


def test_a_statement_rewritten_by_an_observer_is_the_one_sent(postgres_engine: Engine) -> None:
    statement = raw_statements.DriverStatement(sa.select(sa.literal_column("1").label("x")))

    def rewrite(
        _conn: Any, _cursor: Any, sql: str, params: Any, _context: Any, _many: bool
    ) -> tuple[str, Any]:
        return sql.replace("1", "2"), params

    sa.event.listen(postgres_engine, "before_cursor_execute", rewrite, retval=True)
    try:
        with postgres_engine.connect() as conn:
            row = statement.first(conn, {})
    finally:
        sa.event.remove(postgres_engine, "before_cursor_execute", rewrite)
    assert row.x == 2


def test_the_driver_path_logs_its_statements_when_the_engine_logs_sql(
    postgres_engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    with caplog.at_level(logging.INFO, logger="sqlalchemy.engine.Engine"):
        store.append_run_record(record(run, event_key="e1"))
    driver_lines = [r.getMessage() for r in caplog.records if "driver connection" in r.getMessage()]
    assert [line.split()[0] for line in driver_lines] == ["SELECT"]
    assert all("parameters hidden" in line for line in driver_lines)


def test_a_connection_cut_on_the_driver_path_is_retried_and_stores_the_record_once(
    postgres_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    run_statement = raw_statements.DriverStatement._run
    cut: list[int] = []
    sent: list[int] = []

    def cut_once(
        self: raw_statements.DriverStatement, conn: Any, params: Any, *, fetch: bool
    ) -> Any:
        sent.append(1)
        if not cut:
            pid = conn.connection.driver_connection.info.backend_pid
            with postgres_engine.connect() as admin:
                admin.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
                admin.commit()
            cut.append(pid)
        return run_statement(self, conn, params, fetch=fetch)

    monkeypatch.setattr(raw_statements.DriverStatement, "_run", cut_once)

    result = store.append_run_record(record(run, event_key="after-cut"))

    assert cut, "the connection was not cut"
    # The statement failed on the dead connection; the retry sent it again.
    assert len(sent) == 2
    assert result.inserted
    stored = [r for r in all_records(store, run.run_id) if r.event_key == "after-cut"]
    assert len(stored) == 1


def test_a_database_error_on_the_driver_path_is_sqlalchemys(postgres_engine: Engine) -> None:
    statement = raw_statements.DriverStatement(sa.select(sa.literal_column("1 / 0").label("x")))
    with postgres_engine.connect() as conn, pytest.raises(sa.exc.DataError) as raised:
        statement.first(conn, {})
    assert not raised.value.connection_invalidated
    assert "division by zero" in str(raised.value.orig)
