"""Database failures: nothing partial, and transient failures are ``unavailable``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from runtime_store_client import RunNotFoundError, UnavailableError
from tests.contract.builders import (
    all_session_records,
    canceled_record,
    new_session,
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
