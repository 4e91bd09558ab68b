"""The store the service awaits (``app/storage/database/waiting.py``, ``app/api/store_calls.py``).

On PostgreSQL the service runs each ``SqlStore`` call in a greenlet on its event loop over
psycopg's asynchronous connections: the same operation code as on a thread. These tests
hold that path to what the thread path does: its statements go out on the loop's thread
and asynchronous connections, concurrent appends meet in the one group commit with their
own answers, a call that waits (a retry's backoff, a group's leader) gives the loop back
instead of blocking it, and a read past its deadline is stopped in the database.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from app.api.store_calls import StoreCalls
from app.storage import SqlStore, create_async_engine, greenlet_spawn
from app.storage.database.waiting import Signal, in_greenlet, pause
from runtime_store_client import EventConflictError, UnavailableError
from tests.contract.builders import all_records, new_session, record, start_root

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(postgres_engine: Engine) -> Engine:
    from tests.conftest import wipe

    wipe(postgres_engine)
    return postgres_engine


@pytest.fixture
def awaited(postgres_url: str) -> Iterator[AsyncEngine]:
    engine = create_async_engine(postgres_url, pool_size=8, max_overflow=0)
    yield engine
    asyncio.run(engine.dispose())


@pytest.fixture
def async_store(awaited: AsyncEngine) -> SqlStore:
    return SqlStore(awaited.sync_engine)


def test_a_call_in_a_greenlet_sends_its_statements_on_the_loops_thread(
    engine: Engine, awaited: AsyncEngine, async_store: SqlStore
) -> None:
    run = start_root(SqlStore(engine), new_session(SqlStore(engine)).id).run
    seen: list[tuple[str, type[Any]]] = []

    def before(conn: Any, *_args: Any) -> None:
        seen.append((threading.current_thread().name, type(conn.connection.driver_connection)))

    event.listen(awaited.sync_engine, "before_cursor_execute", before)
    try:

        async def main() -> str:
            meta = await greenlet_spawn(async_store.load_run, run.run_id)
            page = await greenlet_spawn(async_store.list_run_records, run.run_id, "", 10)
            assert [r.event_key for r in page.records] == ["start"]
            return meta.run_id

        assert asyncio.run(main()) == run.run_id
    finally:
        event.remove(awaited.sync_engine, "before_cursor_execute", before)
    loop_thread = threading.current_thread().name
    assert seen, "no statement was sent"
    assert {thread for thread, _ in seen} == {loop_thread}
    assert {driver for _, driver in seen} == {psycopg.AsyncConnection}


def test_concurrent_appends_in_greenlets_meet_in_one_group_commit_each_with_its_answer(
    engine: Engine, awaited: AsyncEngine, async_store: SqlStore
) -> None:
    setup = SqlStore(engine)
    runs = [start_root(setup, new_session(setup).id).run for _ in range(4)]
    sizes: list[int] = []

    def before(_conn: Any, _cursor: Any, sql: str, params: Any, *_rest: Any) -> None:
        if "unnest" in sql and "runtime_store_append_record" in sql:
            sizes.append(len(params["run_ids"]))

    per_run = 25
    event.listen(awaited.sync_engine, "before_cursor_execute", before)
    try:

        async def appends(index: int) -> list[str]:
            ids = []
            for n in range(per_run):
                appended = record(runs[index], event_key=f"e-{n}")
                answer = await greenlet_spawn(async_store.append_run_record, appended)
                assert answer.inserted
                ids.append(answer.id)
            return ids

        async def main() -> list[list[str]]:
            return await asyncio.gather(*(appends(i) for i in range(len(runs))))

        answered = asyncio.run(main())
    finally:
        event.remove(awaited.sync_engine, "before_cursor_execute", before)
    assert sizes, "no appends were grouped"
    assert max(sizes) > 1
    for run, ids in zip(runs, answered, strict=True):
        # Each run's records in order, each answered with the ID it was stored under.
        assert ids == [str(n) for n in range(2, per_run + 2)]
        stored = all_records(setup, run.run_id)
        assert [r.id for r in stored[1:]] == ids
        assert [r.event_key for r in stored[1:]] == [f"e-{n}" for n in range(per_run)]


def test_a_refused_append_in_a_greenlet_raises_the_contracts_error(
    engine: Engine, async_store: SqlStore
) -> None:
    setup = SqlStore(engine)
    run = start_root(setup, new_session(setup).id).run
    setup.append_run_record(record(run, event_key="taken"))
    changed = record(run, event_key="taken", payload=b'{"other":true}')

    async def main() -> None:
        await greenlet_spawn(async_store.append_run_record, changed)

    with pytest.raises(EventConflictError):
        asyncio.run(main())


def test_a_pause_in_a_greenlet_gives_the_event_loop_back() -> None:
    ticks: list[float] = []

    async def ticker() -> None:
        for _ in range(5):
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    def waits() -> bool:
        pause(0.1)
        return in_greenlet()

    async def main() -> bool:
        ticking = asyncio.ensure_future(ticker())
        started = time.monotonic()
        greenlet = await greenlet_spawn(waits)
        await ticking
        assert time.monotonic() - started >= 0.1
        return greenlet

    assert asyncio.run(main()) is True
    assert len(ticks) == 5  # the ticker ran while the greenlet paused
    assert not in_greenlet()


def test_a_signal_wakes_its_waiter_in_a_greenlet_and_on_a_thread() -> None:
    async def in_greenlets() -> str:
        box: dict[str, Signal] = {}

        def waiter() -> str:
            box["signal"] = Signal()
            box["signal"].wait()
            return "woken"

        waiting = asyncio.ensure_future(greenlet_spawn(waiter))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # waiting, and the loop still runs this coroutine
        box["signal"].fire()
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(in_greenlets()) == "woken"

    signal = Signal()
    woken = threading.Event()

    def thread_waiter() -> None:
        signal.wait()
        woken.set()

    thread = threading.Thread(target=thread_waiter)
    thread.start()
    assert not woken.wait(0.05)
    signal.fire()
    thread.join(5)
    assert woken.is_set()


def test_a_read_in_a_greenlet_past_its_deadline_is_stopped_in_the_database(
    engine: Engine, postgres_url: str
) -> None:
    setup = SqlStore(engine)
    run = start_root(setup, new_session(setup).id).run
    awaited = create_async_engine(postgres_url, pool_size=2, read_timeout_seconds=0.3)
    store = SqlStore(awaited.sync_engine)
    with engine.connect() as blocker, blocker.begin():
        blocker.execute(sa.text("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE"))

        async def main() -> float:
            started = time.monotonic()
            try:
                with pytest.raises(UnavailableError, match="timeout"):
                    await greenlet_spawn(store.load_run, run.run_id)
                return time.monotonic() - started
            finally:
                await awaited.dispose()

        took = asyncio.run(main())
        waiting = blocker.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
        ).scalar_one()
    assert took < 3
    assert waiting == 0  # nothing of the read is left waiting in the database


def test_store_calls_run_at_most_their_slots_at_once_in_greenlets() -> None:
    running = 0
    most = 0

    def call() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        pause(0.02)
        running -= 1

    async def main() -> None:
        slots = StoreCalls(2, greenlets=True)
        try:
            await asyncio.gather(*(slots(call) for _ in range(8)))
        finally:
            slots.close()

    asyncio.run(main())
    assert most == 2
