"""Concurrent writers on real databases: the database is the only arbiter.

Each test runs on both backends; PostgreSQL is the one that matters (row locks, READ
COMMITTED, several connections at once), SQLite proves the same rules under its single
write lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import (
    OneShotRunStartResult,
    Record,
    RootRunStartResult,
    RunStartOutcome,
)
from tests.contract.builders import (
    all_session_records,
    canceled_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
)

T = TypeVar("T")

THREADS = 16


def run_at_once(count: int, call: Callable[[], T]) -> list[T]:
    """Run ``call`` from ``count`` threads released together by a barrier."""
    barrier = threading.Barrier(count)

    def worker() -> T:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(worker) for _ in range(count)]
        return [future.result() for future in futures]


def test_same_root_start_from_16_threads_inserts_once_and_retries_get_equal_ids(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    session = new_session(store)
    run = run_start(session_id=session.id, labels={"site": "one"})
    started, canceled = started_record(run), canceled_record(run)

    results: list[RootRunStartResult] = run_at_once(
        THREADS, lambda: store.start_root_run(run, started, canceled)
    )

    assert sum(result.started.inserted for result in results) == 1
    assert {result.started.id for result in results} == {"1"}
    assert {result.outcome for result in results} == {RunStartOutcome.PROCEED}
    assert all(result.canceled is None for result in results)
    assert [r.type for r in all_session_records(store, session.id)] == ["run_started"]


def test_same_one_shot_start_from_16_threads_inserts_once_and_retries_get_equal_ids(
    engine: Engine,
) -> None:
    # No session row to lock: the run's primary key decides, and losers retry as exact retries.
    store = SqlStore(engine)
    run = run_start()
    started = started_record(run)

    results: list[OneShotRunStartResult] = run_at_once(
        THREADS, lambda: store.start_one_shot_run(run, started)
    )

    assert sum(result.record.inserted for result in results) == 1
    assert {result.record.id for result in results} == {"1"}
    assert [r.id for r in store.list_run_records(run.run_id).records] == ["1"]


@pytest.mark.parametrize("batch", [1, 6], ids=["one_by_one", "in_batches_of_6"])
def test_session_list_reader_sees_every_record_once_in_commit_order_while_4_writers_append(
    engine: Engine, batch: int
) -> None:
    store = SqlStore(engine)
    session = new_session(store)
    writers = [start_root(store, session.id).run for _ in range(4)]
    per_writer = 60
    done = threading.Event()
    seen: list[Record] = []
    pages = 0

    def write(index: int) -> None:
        run = writers[index]
        records = [
            record(run, event_key=f"w{index}-{n}", payload=b'{"n":%d}' % n)
            for n in range(per_writer)
        ]
        for start in range(0, per_writer, batch):
            if batch == 1:
                store.append_run_record(records[start])
            else:
                store.append_run_records(run.run_id, records[start : start + batch])

    def read() -> None:
        # A tailing reader: a short last page has no next cursor, so it asks again from
        # the same cursor and keeps only what follows the records it already has.
        nonlocal pages
        cursor, known = "", 0
        while True:
            finished = done.is_set()
            page = store.list_session_run_records(session.id, cursor=cursor, limit=7)
            pages += 1
            assert page.records[:known] == seen[len(seen) - known :]
            fresh = page.records[known:]
            seen.extend(fresh)
            if page.next_cursor:
                cursor, known = page.next_cursor, 0
            else:
                known = len(page.records)
                if finished and not fresh:
                    return

    reader = threading.Thread(target=read)
    reader.start()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, range(4)))
    done.set()
    reader.join(timeout=60)
    assert not reader.is_alive()

    final = all_session_records(store, session.id)
    assert len(final) == 4 + 4 * per_writer
    identities = [(r.run_id, r.id) for r in seen]
    assert len(identities) == len(set(identities)), "a record was seen twice"
    assert identities == [(r.run_id, r.id) for r in final], "skipped or out of commit order"
    assert pages > 1
    for run in writers:
        ids = [int(r.id) for r in seen if r.run_id == run.run_id]
        assert ids == list(range(1, per_writer + 2))
