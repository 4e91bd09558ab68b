"""Database failures: nothing partial, and transient failures are ``unavailable``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine, upgrade_schema
from runtime_store_client import RunNotFoundError, UnavailableError
from tests.contract.builders import (
    all_session_records,
    canceled_record,
    new_session,
    record,
    run_start,
    started_record,
)


@pytest.fixture
def failing_records(postgres_engine: Engine) -> Iterator[Engine]:
    """A PostgreSQL trigger that fails every insert of a record keyed ``explode``."""
    with postgres_engine.begin() as conn:
        conn.execute(
            sa.text(
                """
                CREATE FUNCTION explode() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.event_key = 'explode' THEN RAISE EXCEPTION 'disk on fire'; END IF;
                  RETURN NEW;
                END $$;
                CREATE TRIGGER explode BEFORE INSERT ON run_records
                  FOR EACH ROW EXECUTE FUNCTION explode();
                """
            )
        )
    try:
        yield postgres_engine
    finally:
        with postgres_engine.begin() as conn:
            conn.execute(sa.text("DROP TRIGGER explode ON run_records; DROP FUNCTION explode()"))


def test_a_start_that_fails_in_the_database_leaves_no_run_and_no_record(
    failing_records: Engine,
) -> None:
    store = SqlStore(failing_records)
    session = new_session(store)
    run = run_start(session_id=session.id)
    # The run row is written first, the record second; the failure must undo both.
    with pytest.raises(sa.exc.DBAPIError, match="disk on fire"):
        store.start_root_run(run, started_record(run, event_key="explode"), canceled_record(run))

    with pytest.raises(RunNotFoundError):
        store.load_run(run.run_id)
    assert all_session_records(store, session.id) == []


def test_an_unreachable_database_is_unavailable_after_retries() -> None:
    # Port 9 (discard) has no PostgreSQL listening: every connection attempt is refused.
    engine = create_engine(
        "postgresql://postgres@127.0.0.1:9/none", connect_args={"connect_timeout": 2}
    )
    store = SqlStore(engine, attempts=2)
    try:
        with pytest.raises(UnavailableError) as info:
            store.load_session_status("any")
        assert info.value.code == "unavailable"
        assert info.value.status == 503
    finally:
        engine.dispose()


def test_a_terminated_connection_is_retried_and_the_write_lands_once(
    postgres_engine: Engine,
) -> None:
    # The store's own engine, named, so that only its pooled connections are killed (a live
    # server of another test may use the same database).
    name = "rs-terminated-connection-test"
    engine = create_engine(
        postgres_engine.url.render_as_string(hide_password=False),
        connect_args={"application_name": name},
    )
    store = SqlStore(engine)
    try:
        session = new_session(store)
        # Kill every pooled connection of this engine behind its back.
        admin = create_engine(
            postgres_engine.url.set(database="postgres"), isolation_level="AUTOCOMMIT"
        )
        try:
            with admin.connect() as conn:
                killed = conn.execute(
                    sa.text(
                        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                        "FROM pg_stat_activity WHERE application_name = :name"
                    ),
                    {"name": name},
                ).scalar_one()
        finally:
            admin.dispose()
        assert killed >= 1

        run = run_start(session_id=session.id)
        result = store.start_root_run(run, started_record(run), canceled_record(run))
        assert result.started.inserted
        assert [r.type for r in all_session_records(store, session.id)] == ["run_started"]
    finally:
        engine.dispose()


def test_a_full_sqlite_database_is_unavailable_and_writes_nothing(tmp_path: Path) -> None:
    """A disk (or file) that is full answers ``unavailable`` (a retryable 503, as PostgreSQL's
    disk-full is), never a server error, and the refused append leaves nothing behind;
    once there is room the same append succeeds."""
    url = f"sqlite:///{tmp_path / 'full.db'}"
    upgrade_schema(url)
    engine = create_engine(url, pool_size=1)
    limit = {"pages": 0}

    @sa.event.listens_for(engine, "connect")
    def _cap(dbapi_connection: Any, _record: Any) -> None:
        if limit["pages"]:
            dbapi_connection.execute(f"PRAGMA max_page_count = {limit['pages']}")

    try:
        store = SqlStore(engine, attempts=2)
        session = new_session(store)
        run = run_start(session_id=session.id)
        store.start_root_run(run, started_record(run), canceled_record(run))
        with engine.connect() as conn:
            limit["pages"] = int(conn.exec_driver_sql("PRAGMA page_count").scalar_one())
        engine.dispose()  # new connections, capped at the file's size now
        big = record(run, event_key="big", payload=b'"' + b"x" * 200_000 + b'"')
        with pytest.raises(UnavailableError):
            store.append_run_record(big)
        assert [r.event_key for r in store.list_run_records(run.run_id).records] == ["start"]
        limit["pages"] = 0
        engine.dispose()
        assert store.append_run_record(big).inserted
    finally:
        engine.dispose()
