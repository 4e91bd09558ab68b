"""PostgreSQL's append path runs on the driver connection, unless something observes it.

The lock, the lookup and the fused write of an append are compiled by SQLAlchemy and sent
on its connection inside its transaction (app/storage/fastpath.py); observers of
statements make them go through SQLAlchemy; errors come back as SQLAlchemy's.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, fastpath
from tests.contract.builders import all_records, new_session, record, start_root


@pytest.fixture
def driver_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL of every statement sent on the driver connection."""
    calls: list[str] = []
    run = fastpath.DriverStatement._run

    def counting(self: fastpath.DriverStatement, conn: Any, params: Any, *, fetch: bool) -> Any:
        calls.append(self._compiled(conn))
        return run(self, conn, params, fetch=fetch)

    monkeypatch.setattr(fastpath.DriverStatement, "_run", counting)
    return calls


def test_an_append_sends_its_three_statements_on_the_driver_connection(
    postgres_engine: Engine, driver_calls: list[str]
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    driver_calls.clear()

    result = store.append_run_record(record(run, event_key="e1"))

    assert result.inserted
    assert [sql.split()[0] for sql in driver_calls] == ["SELECT", "SELECT", "WITH"]
    assert "FOR UPDATE OF sessions" in driver_calls[0]
    assert [r.event_key for r in all_records(store, run.run_id)][-1] == "e1"


def test_an_observer_of_statements_sees_every_statement_of_an_append(
    postgres_engine: Engine, driver_calls: list[str]
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    seen: list[str] = []

    def observe(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    sa.event.listen(postgres_engine, "before_cursor_execute", observe)
    try:
        store.append_run_record(record(run, event_key="e1"))
    finally:
        sa.event.remove(postgres_engine, "before_cursor_execute", observe)

    assert driver_calls == []
    assert [statement.split()[0] for statement in seen] == ["SELECT", "SELECT", "WITH"]


def test_a_connection_cut_on_the_driver_path_is_retried_and_stores_the_record_once(
    postgres_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore(postgres_engine)
    run = start_root(store, new_session(store).id).run
    run_statement = fastpath.DriverStatement._run
    cut: list[int] = []
    sent: list[int] = []

    def cut_once(self: fastpath.DriverStatement, conn: Any, params: Any, *, fetch: bool) -> Any:
        sent.append(1)
        if not cut:
            pid = conn.connection.driver_connection.info.backend_pid
            with postgres_engine.connect() as admin:
                admin.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
                admin.commit()
            cut.append(pid)
        return run_statement(self, conn, params, fetch=fetch)

    monkeypatch.setattr(fastpath.DriverStatement, "_run", cut_once)

    result = store.append_run_record(record(run, event_key="after-cut"))

    assert cut, "the connection was not cut"
    # The first statement failed on the dead connection; the retry sent all three.
    assert len(sent) == 4
    assert result.inserted
    stored = [r for r in all_records(store, run.run_id) if r.event_key == "after-cut"]
    assert len(stored) == 1


def test_a_database_error_on_the_driver_path_is_sqlalchemys(postgres_engine: Engine) -> None:
    statement = fastpath.DriverStatement(sa.select(sa.literal_column("1 / 0").label("x")))
    with postgres_engine.connect() as conn, pytest.raises(sa.exc.DataError) as raised:
        statement.first(conn, {})
    assert not raised.value.connection_invalidated
    assert "division by zero" in str(raised.value.orig)
