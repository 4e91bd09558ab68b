"""An append is one round trip on PostgreSQL (issue 18, migration 0010).

``SqlStore.append_run_record`` sends ``runtime_store_append_record`` in autocommit: the
writers' lock, the run and the keyed record, and the insert (or the exact retry's answer)
in one statement, with no ``BEGIN`` and no ``COMMIT``. Counted here in libpq's own trace of
the connection: every message the client sent, and one ``Sync`` (the end of one
extended-protocol exchange) or one simple ``Query`` per round trip. Whatever the statement
refuses goes through the ordinary transaction, which answers with the contract's error.
A batch (migration 0011) and ``load_run`` are one round trip too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from runtime_store_client import (
    EventConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunStatus,
    SessionPurgedError,
    SessionStatus,
)
from tests.contract.builders import (
    all_records,
    at,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    terminal_record,
)


@pytest.fixture
def single_connection(postgres_url: str) -> Iterator[Engine]:
    """An engine whose pool holds one connection, so the traced one is the one used."""
    engine = create_engine(postgres_url, pool_size=1, max_overflow=0)
    yield engine
    engine.dispose()


def _sent(engine: Engine, action: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``action`` returned, and the messages the client sent while it ran."""
    fd, name = tempfile.mkstemp(suffix=".trace")
    path = Path(name)
    try:
        raw = engine.raw_connection()
        pgconn = raw.driver_connection.pgconn  # type: ignore[union-attr]
        pgconn.trace(fd)
        pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        raw.close()
        try:
            result = action()
        finally:
            raw = engine.raw_connection()
            raw.driver_connection.pgconn.untrace()  # type: ignore[union-attr]
            raw.close()
        os.close(fd)
        messages = [
            line.split("\t")[2].strip()
            for line in path.read_text().splitlines()
            if line.startswith("F\t")
        ]
    finally:
        path.unlink(missing_ok=True)
    return result, messages


def _round_trips(messages: list[str]) -> int:
    return sum(1 for message in messages if message in ("Sync", "Query"))


def test_an_append_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run

    result, messages = _sent(
        single_connection, lambda: store.append_run_record(record(run, event_key="e1"))
    )

    assert result.inserted
    assert result.id == "2"
    assert result.session_status == SessionStatus.ACTIVE
    assert _round_trips(messages) == 1, messages
    assert "Query" not in messages  # no BEGIN, no COMMIT
    assert [r.event_key for r in all_records(store, run.run_id)] == ["start", "e1"]


def test_an_exact_retry_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    first = store.append_run_record(record(run, event_key="e1"))
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )

    result, messages = _sent(
        single_connection, lambda: store.append_run_record(record(run, event_key="e1"))
    )

    assert (result.id, result.inserted) == (first.id, False)
    assert _round_trips(messages) == 1, messages


def test_a_sessionless_append_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    run = run_start(session_id="")
    store.start_one_shot_run(run, started_record(run))

    result, messages = _sent(
        single_connection, lambda: store.append_run_record(record(run, event_key="e1"))
    )

    assert (result.id, result.inserted, result.session_status) == ("2", True, None)
    assert _round_trips(messages) == 1, messages


def test_an_append_the_statement_refuses_is_answered_by_the_transaction(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.append_run_record(record(run, event_key="e1", payload=b'{"v":1}'))

    with pytest.raises(EventConflictError):
        store.append_run_record(record(run, event_key="e1", payload=b'{"v":2}'))
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    with pytest.raises(RunNotActiveError):
        store.append_run_record(record(run, event_key="e2"))

    stored = all_records(store, run.run_id)
    assert [r.event_key for r in stored] == ["start", "e1", "terminal"]
    assert stored[1].payload == b'{"v":1}'


# --- batches (migration 0011) -----------------------------------------------------------


def test_a_batch_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    batch = [record(run, event_key=f"e{n}", payload=b'{"n":%d}' % n) for n in range(16)]

    results, messages = _sent(
        single_connection, lambda: store.append_run_records(run.run_id, batch)
    )

    assert [(r.id, r.inserted) for r in results] == [(str(n + 2), True) for n in range(16)]
    assert {r.session_status for r in results} == {SessionStatus.ACTIVE}
    assert _round_trips(messages) == 1, messages
    assert "Query" not in messages  # no BEGIN, no COMMIT
    assert [r.event_key for r in all_records(store, run.run_id)] == [
        "start",
        *(f"e{n}" for n in range(16)),
    ]
    session_records = store.list_session_run_records(run.session_id).records
    assert [r.event_key for r in session_records] == ["start", *(f"e{n}" for n in range(16))]


def test_a_batch_of_retries_new_records_and_repeats_is_one_round_trip(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.append_run_records(run.run_id, [record(run, event_key="a"), record(run, event_key="b")])
    batch = [
        record(run, event_key="c"),
        record(run, event_key="b"),  # stored: its original ID
        record(run, event_key="c"),  # repeated inside the batch: its first occurrence's ID
        record(run, event_key="d"),
    ]

    results, messages = _sent(
        single_connection, lambda: store.append_run_records(run.run_id, batch)
    )

    assert [(r.id, r.inserted) for r in results] == [
        ("4", True),
        ("3", False),
        ("4", False),
        ("5", True),
    ]
    assert _round_trips(messages) == 1, messages
    assert [r.event_key for r in all_records(store, run.run_id)] == ["start", "a", "b", "c", "d"]


def test_a_sessionless_batch_and_its_retry_on_a_finished_run_are_one_round_trip(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = run_start(session_id="")
    store.start_one_shot_run(run, started_record(run))
    batch = [record(run, event_key="e1"), record(run, event_key="e2")]

    first, messages = _sent(single_connection, lambda: store.append_run_records(run.run_id, batch))
    assert [(r.id, r.inserted, r.session_status) for r in first] == [
        ("2", True, None),
        ("3", True, None),
    ]
    assert _round_trips(messages) == 1, messages

    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    again, messages = _sent(single_connection, lambda: store.append_run_records(run.run_id, batch))
    assert [(r.id, r.inserted) for r in again] == [("2", False), ("3", False)]
    assert _round_trips(messages) == 1, messages


def test_a_batch_the_statement_refuses_is_answered_by_the_transaction_naming_the_record(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.append_run_record(record(run, event_key="e1", payload=b'{"v":1}'))

    with pytest.raises(EventConflictError) as conflict:
        store.append_run_records(
            run.run_id,
            [record(run, event_key="e2"), record(run, event_key="e1", payload=b'{"v":2}')],
        )
    assert conflict.value.event_key == "e1"
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    with pytest.raises(RunNotActiveError) as finished:
        store.append_run_records(
            run.run_id,
            [record(run, event_key="e1", payload=b'{"v":1}'), record(run, event_key="e3")],
        )
    assert finished.value.event_key == "e3"

    stored = all_records(store, run.run_id)
    assert [r.event_key for r in stored] == ["start", "e1", "terminal"]
    assert stored[1].payload == b'{"v":1}'


# --- one-statement reads ------------------------------------------------------------------


def test_load_run_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run

    meta, messages = _sent(single_connection, lambda: store.load_run(run.run_id))

    assert (meta.run_id, meta.status) == (run.run_id, RunStatus.RUNNING)
    assert _round_trips(messages) == 1, messages
    assert "Query" not in messages  # no BEGIN, no COMMIT


def test_a_run_of_a_purged_session_still_answers_session_purged(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(run.session_id, at(50))
    store.purge_session(run.session_id)

    with pytest.raises(SessionPurgedError):
        store.load_run(run.run_id)
    with pytest.raises(RunNotFoundError):
        store.load_run("run-never-started")


def test_a_page_is_three_round_trips_with_no_transaction_on_postgresql(
    single_connection: Engine,
) -> None:
    """At READ COMMITTED each statement takes its own snapshot in or out of a transaction,
    so reads run in autocommit: the run, the keys, the rows; no BEGIN, no COMMIT."""
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.append_run_records(run.run_id, [record(run, event_key=f"e{n}") for n in range(5)])

    page, messages = _sent(single_connection, lambda: store.list_run_records(run.run_id, limit=3))

    assert [r.event_key for r in page.records] == ["start", "e0", "e1"]
    assert page.next_cursor
    assert _round_trips(messages) == 3, messages
    assert "Query" not in messages


def test_an_engine_at_a_stricter_isolation_level_keeps_its_read_transactions(
    postgres_url: str,
) -> None:
    engine = create_engine(
        postgres_url, pool_size=1, max_overflow=0, isolation_level="REPEATABLE READ"
    )
    try:
        store = SqlStore(engine)
        run = start_root(store, new_session(store).id).run

        meta, messages = _sent(engine, lambda: store.load_run(run.run_id))

        assert meta.run_id == run.run_id
        assert messages.count("Query") == 2, messages  # BEGIN and COMMIT
    finally:
        engine.dispose()
