"""An append, a start of each kind and a terminal write are one round trip on PostgreSQL
(issue 18, migrations 0010-0012).

``SqlStore.append_run_record`` sends ``runtime_store_append_record`` in autocommit: the
writers' lock, the run and the keyed record, and the insert (or the exact retry's answer)
in one statement, with no ``BEGIN`` and no ``COMMIT``. Counted here in libpq's own trace of
the connection: every message the client sent, and one ``Sync`` (the end of one
extended-protocol exchange) or one simple ``Query`` per round trip. Whatever the statement
refuses goes through the ordinary transaction, which answers with the contract's error.
A batch (migration 0011) and ``load_run`` are one round trip too. A start or terminal write
in one statement stores exactly the rows its transaction stores, and whatever the statement
refuses is answered by the transaction with the contract's error.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from runtime_store_client import (
    EventConflictError,
    InvalidArgumentError,
    Record,
    RunConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    RunTerminalConflictError,
    SessionNotFoundError,
    SessionPurgedError,
    SessionStatus,
)
from tests.contract.builders import (
    all_records,
    at,
    canceled_record,
    cancellation_record,
    link_record,
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


def test_a_run_page_is_two_round_trips_with_no_transaction_on_postgresql(
    single_connection: Engine,
) -> None:
    """At READ COMMITTED each statement takes its own snapshot in or out of a transaction,
    so reads run in autocommit: the run with the page's keys, then the rows; no BEGIN,
    no COMMIT."""
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.append_run_records(run.run_id, [record(run, event_key=f"e{n}") for n in range(5)])

    page, messages = _sent(single_connection, lambda: store.list_run_records(run.run_id, limit=3))

    assert [r.event_key for r in page.records] == ["start", "e0", "e1"]
    assert page.next_cursor
    assert _round_trips(messages) == 2, messages
    assert "Query" not in messages


def test_a_session_page_is_two_round_trips_with_no_transaction_on_postgresql(
    single_connection: Engine,
) -> None:
    """The session with the page's keys, then the rows (once the cursor key is loaded)."""
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.append_run_records(run.run_id, [record(run, event_key=f"e{n}") for n in range(5)])
    first = store.list_session_run_records(run.session_id, limit=3)  # loads the cursor key

    page, messages = _sent(
        single_connection,
        lambda: store.list_session_run_records(run.session_id, first.next_cursor, limit=3),
    )

    assert [r.event_key for r in page.records] == ["e2", "e3", "e4"]
    assert page.next_cursor == ""
    assert _round_trips(messages) == 2, messages
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


# --- starts and terminal writes (migration 0012) ------------------------------------------


def _rows(
    engine: Engine, run_id: str, *, naming_others: tuple[str, ...] = ()
) -> dict[str, list[dict[str, Any]]]:
    """Everything stored for a run, by table, with its run ID and the store's clock left
    out, so a run written one way compares with a run written the other way;
    ``naming_others``: columns that name other runs (a parent's, a child's) left out too."""
    left_out = ("run_id", "updated_at_ms", "session_id", "session_seq", *naming_others)
    out: dict[str, list[dict[str, Any]]] = {}
    with engine.connect() as conn:
        for table, order in (("runs", "run_id"), ("run_labels", "key"), ("run_records", "seq")):
            rows = conn.execute(
                sa.text(f"SELECT * FROM {table} WHERE run_id = :r ORDER BY {order}"), {"r": run_id}
            ).mappings()
            out[table] = [{k: v for k, v in row.items() if k not in left_out} for row in rows]
    return out


def _child_of(parent: RunStart, **changes: Any) -> tuple[RunStart, Record, Record]:
    """A child start of ``parent``: the child, its link record, its started record."""
    child = run_start(
        session_id=parent.session_id, parent_run_id=parent.run_id, labels={"role": "sub"}
    )
    child = replace(child, **changes)
    return child, link_record(parent, child), started_record(child)


def test_a_root_start_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    session = new_session(store)
    run = run_start(session_id=session.id, labels={"team": 'a "b"', "zone": "é\\u0000"})
    store.append_run_record(record(start_root(store, session.id).run, event_key="other"))

    result, messages = _sent(
        single_connection,
        lambda: store.start_root_run(run, started_record(run), canceled_record(run)),
    )

    assert (result.outcome, result.run_status) == (RunStartOutcome.PROCEED, RunStatus.RUNNING)
    assert (result.started.id, result.started.inserted) == ("1", True)
    assert result.started.session_status == SessionStatus.ACTIVE
    assert result.canceled is None
    assert _round_trips(messages) == 1, messages
    assert "Query" not in messages  # no BEGIN, no COMMIT
    assert store.load_run(run.run_id).labels == run.labels
    assert [r.run_id for r in store.search_runs(labels={"team": 'a "b"'}).runs] == [run.run_id]
    session_records = store.list_session_run_records(session.id).records
    assert [r.event_key for r in session_records] == ["start", "other", "start"]
    assert session_records[-1].run_id == run.run_id


def test_a_root_start_in_one_statement_stores_what_its_transaction_stores(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    labels = {"team": "a", "x": "y"}
    one = start_root(store, new_session(store).id, labels=labels).run
    # The fast path off: every write takes its transaction.
    store = SqlStore(single_connection, fast_path=False)
    other = start_root(store, new_session(store).id, labels=labels).run

    assert _rows(single_connection, one.run_id) == _rows(single_connection, other.run_id)
    assert store.load_run(one.run_id).labels == labels


def test_root_starts_the_statement_refuses_are_answered_by_the_transaction(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    session = new_session(store)
    first = start_root(store, session.id)

    retried = store.start_root_run(first.run, started_record(first.run), canceled_record(first.run))
    assert (retried.started.id, retried.started.inserted) == (first.result.started.id, False)
    with pytest.raises(SessionNotFoundError):
        start_root(store, "no-such-session")
    store.end_session(session.id, at(50))
    stopped = start_root(store, session.id).result
    assert (stopped.outcome, stopped.run_status) == (RunStartOutcome.STOP, RunStatus.CANCELED)
    assert stopped.canceled is not None
    assert stopped.canceled.inserted
    store.record_run_terminal(
        first.run.run_id, RunStatus.COMPLETED, terminal_record(first.run, RunStatus.COMPLETED)
    )
    store.purge_session(session.id)
    with pytest.raises(SessionPurgedError):
        start_root(store, session.id)


def test_a_terminal_write_and_its_retry_are_one_round_trip_on_postgresql(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id, labels={"k": "v"}).run
    store.append_run_record(record(run, event_key="e1"))
    terminal = terminal_record(run, RunStatus.COMPLETED)

    result, messages = _sent(
        single_connection,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, terminal),
    )
    again, retry_messages = _sent(
        single_connection,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, terminal),
    )

    assert (result.id, result.inserted, result.session_status) == ("3", True, SessionStatus.ACTIVE)
    assert (again.id, again.inserted) == ("3", False)
    assert _round_trips(messages) == 1, messages
    assert _round_trips(retry_messages) == 1, retry_messages
    assert "Query" not in messages + retry_messages
    assert store.load_run(run.run_id).status == RunStatus.COMPLETED
    assert [r.event_key for r in all_records(store, run.run_id)] == ["start", "e1", "terminal"]


def test_a_canceled_terminal_and_a_sessionless_one_are_one_round_trip(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id).run
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    canceled = terminal_record(run, RunStatus.CANCELED, reason="user_requested")
    sessionless = run_start(session_id="")
    store.start_one_shot_run(sessionless, started_record(sessionless))
    engine_canceled = terminal_record(sessionless, RunStatus.CANCELED, reason="engine_canceled")

    first, messages = _sent(
        single_connection,
        lambda: store.record_run_terminal(run.run_id, RunStatus.CANCELED, canceled),
    )
    second, more = _sent(
        single_connection,
        lambda: store.record_run_terminal(sessionless.run_id, RunStatus.CANCELED, engine_canceled),
    )

    assert (first.id, first.inserted) == ("3", True)
    assert (second.id, second.inserted, second.session_status) == ("2", True, None)
    assert _round_trips(messages) == 1, messages
    assert _round_trips(more) == 1, more
    assert store.load_run(sessionless.run_id).status == RunStatus.CANCELED


def test_a_terminal_write_in_one_statement_stores_what_its_transaction_stores(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    runs = [start_root(store, new_session(store).id, labels={"k": "v"}).run for _ in range(2)]
    for index, run in enumerate(runs):
        if index == 1:
            # The fast path off: every write takes its transaction.
            store = SqlStore(single_connection, fast_path=False)
        store.append_run_record(record(run, event_key="e1"))
        store.record_run_terminal(
            run.run_id, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED)
        )

    assert _rows(single_connection, runs[0].run_id) == _rows(single_connection, runs[1].run_id)
    assert _rows(single_connection, runs[0].run_id)["runs"][0]["terminal_key"] == "terminal"


def test_terminal_writes_the_statement_refuses_are_answered_by_the_transaction(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    run = start_root(store, new_session(store).id, labels={"k": "v"}).run
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))

    other_labels = terminal_record(replace(run, labels={"k": "w"}), RunStatus.COMPLETED)
    with pytest.raises(InvalidArgumentError):
        store.record_run_terminal(run.run_id, RunStatus.COMPLETED, other_labels)
    wrong_reason = terminal_record(run, RunStatus.CANCELED, reason="engine_canceled")
    with pytest.raises(InvalidArgumentError):
        store.record_run_terminal(run.run_id, RunStatus.CANCELED, wrong_reason)
    never_started = replace(run, run_id="no-such-run")
    with pytest.raises(RunNotFoundError):
        store.record_run_terminal(
            "no-such-run", RunStatus.COMPLETED, terminal_record(never_started, RunStatus.COMPLETED)
        )
    store.record_run_terminal(run.run_id, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED))
    with pytest.raises(RunTerminalConflictError):
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
    with pytest.raises(EventConflictError):
        store.record_run_terminal(
            run.run_id,
            RunStatus.FAILED,
            terminal_record(run, RunStatus.FAILED, event_key="cancel"),
        )

    stored = all_records(store, run.run_id)
    assert [r.event_key for r in stored] == ["start", "cancel", "terminal"]
    assert store.load_run(run.run_id).status == RunStatus.FAILED


def test_a_child_start_is_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    parent = start_root(store, new_session(store).id).run
    store.append_run_record(record(parent, event_key="e1"))
    child, link, started = _child_of(parent)

    result, messages = _sent(
        single_connection,
        lambda: store.start_child_run(child, link, started, canceled_record(child)),
    )

    assert (result.outcome, result.run_status) == (RunStartOutcome.PROCEED, RunStatus.RUNNING)
    assert (result.parent_record.id, result.parent_record.inserted) == ("3", True)
    assert (result.started.id, result.started.inserted) == ("1", True)
    assert result.started.session_status == SessionStatus.ACTIVE
    assert result.canceled is None
    assert _round_trips(messages) == 1, messages
    assert "Query" not in messages
    session_records = store.list_session_run_records(parent.session_id).records
    assert [(r.run_id, r.event_key) for r in session_records][-2:] == [
        (parent.run_id, link.event_key),
        (child.run_id, "start"),
    ]
    assert store.load_run(child.run_id).parent_run_id == parent.run_id


def test_one_shot_starts_are_one_round_trip_on_postgresql(single_connection: Engine) -> None:
    store = SqlStore(single_connection)
    parent = run_start(session_id="", labels={"k": "v"})
    child, link, started = _child_of(parent)

    root, messages = _sent(
        single_connection, lambda: store.start_one_shot_run(parent, started_record(parent))
    )
    linked, child_messages = _sent(
        single_connection, lambda: store.start_one_shot_child_run(child, link, started)
    )

    assert (root.record.id, root.record.inserted, root.record.session_status) == ("1", True, None)
    assert (linked.parent_record.id, linked.started.id) == ("2", "1")
    assert linked.parent_record.session_status is None
    assert _round_trips(messages) == 1, messages
    assert _round_trips(child_messages) == 1, child_messages
    assert [r.event_key for r in all_records(store, parent.run_id)] == ["start", link.event_key]
    assert store.load_run(child.run_id).labels == {"role": "sub"}


def test_child_starts_in_one_statement_store_what_their_transactions_store(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    parents = [start_root(store, new_session(store).id).run for _ in range(2)]
    one_shots = [run_start(session_id="") for _ in range(2)]
    children = []
    for index in range(2):
        if index == 1:
            # The fast path off: every write takes its transaction.
            store = SqlStore(single_connection, fast_path=False)
        child, link, started = _child_of(parents[index])
        store.start_child_run(child, link, started, canceled_record(child))
        store.start_one_shot_run(one_shots[index], started_record(one_shots[index]))
        one_shot_child, one_shot_link, one_shot_started = _child_of(one_shots[index])
        store.start_one_shot_child_run(one_shot_child, one_shot_link, one_shot_started)
        children.append((child, one_shot_child))

    # A parent's link record names its child (key and payload), a child its parent (in its
    # row and its run_started payload).
    for first, second in ((parents[0], parents[1]), (one_shots[0], one_shots[1])):
        links = ("event_key", "payload")
        assert _rows(single_connection, first.run_id, naming_others=links) == _rows(
            single_connection, second.run_id, naming_others=links
        )
    for first, second in zip(*children, strict=True):
        parent_columns = ("parent_run_id", "parent_link_key", "payload")
        assert _rows(single_connection, first.run_id, naming_others=parent_columns) == _rows(
            single_connection, second.run_id, naming_others=parent_columns
        )
    assert len(_rows(single_connection, parents[0].run_id)["run_records"]) == 2


def test_child_starts_the_statement_refuses_are_answered_by_the_transaction(
    single_connection: Engine,
) -> None:
    store = SqlStore(single_connection)
    parent = start_root(store, new_session(store).id).run
    child, link, started = _child_of(parent)
    first = store.start_child_run(child, link, started, canceled_record(child))

    retried = store.start_child_run(child, link, started, canceled_record(child))
    assert (retried.parent_record.id, retried.parent_record.inserted) == (
        first.parent_record.id,
        False,
    )
    other, other_link, other_started = _child_of(parent)
    taken = replace(other_link, event_key=link.event_key)
    with pytest.raises(EventConflictError):
        store.start_child_run(other, taken, other_started, canceled_record(other))
    sibling = start_root(store, parent.session_id).run  # its ID taken by a root
    impostor, impostor_link, impostor_started = _child_of(parent, run_id=sibling.run_id)
    with pytest.raises(RunConflictError):
        store.start_child_run(impostor, impostor_link, impostor_started, canceled_record(impostor))
    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )
    with pytest.raises(RunNotActiveError):
        store.start_child_run(other, other_link, other_started, canceled_record(other))
    stranger = start_root(store, new_session(store).id).run
    orphan = run_start(session_id=parent.session_id, parent_run_id=stranger.run_id)
    with pytest.raises(RunRecordOwnerMismatchError):
        store.start_child_run(
            orphan, link_record(stranger, orphan), started_record(orphan), canceled_record(orphan)
        )

    assert [r.event_key for r in all_records(store, parent.run_id)] == [
        "start",
        link.event_key,
        "terminal",
    ]
    assert store.search_runs(parent_run_id=parent.run_id).runs[0].run_id == child.run_id
