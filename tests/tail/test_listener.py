"""PostgreSQL's live-tail listener runs only while its worker has streams (issue 18).

Every commit NOTIFYs; a worker that listens is woken by every append, stream or not. The
listener starts with the first stream, which waits until it listens before its first read
(so no commit falls between the two), and stops ``idle_seconds`` after the last one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from app.storage import SqlStore, create_engine
from app.storage.live_tail.listener import LISTENER_NAME
from app.storage.live_tail.notifications import Notifications, Subscription
from runtime_store_client import RunStart
from tests.contract.builders import new_session, record, start_root

IDLE = 0.3


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    engine = create_engine(postgres_url)
    yield engine
    engine.dispose()


def _listeners(engine: Engine) -> int:
    """This process's listener connections, as the server sees them."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE application_name = :name AND datname = current_database()"
                ),
                {"name": LISTENER_NAME.format(pid=os.getpid())},
            ).scalar_one()
        )


async def _eventually(engine: Engine, listeners: int, within: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while (count := await asyncio.to_thread(_listeners, engine)) != listeners:
        assert loop.time() < deadline, f"{count} listeners, expected {listeners}"
        await asyncio.sleep(0.05)


async def _listening(
    hub: Notifications, engine: Engine, subscription: Subscription | None
) -> Subscription:
    """``subscription``, once ``ready``: the worker's one listener is connected."""
    assert subscription is not None
    await hub.ready(5)
    assert await asyncio.to_thread(_listeners, engine) == 1
    return subscription


async def _append(store: SqlStore, run: RunStart) -> None:
    await asyncio.to_thread(store.append_run_record, record(run))


async def _append_wakes(store: SqlStore, run: RunStart, subscription: Subscription) -> bool:
    """Whether an append committed now wakes ``subscription`` (within 5 s)."""
    await subscription.wait(0)  # forget earlier wake-ups
    before = subscription.woken
    await _append(store, run)
    await subscription.wait(5)
    return subscription.woken > before


def test_a_worker_listens_only_while_it_has_streams_and_hears_every_commit_then(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    run = start_root(store, new_session(store).id).run

    async def scenario() -> None:
        hub = Notifications(
            engine, max_streams=10, safety_seconds=60, poll_seconds=1, idle_seconds=IDLE
        )
        await hub.start()
        try:
            # No stream: no listener, and a commit wakes nothing.
            await asyncio.sleep(0.2)
            assert await asyncio.to_thread(_listeners, engine) == 0
            generation = hub.generation
            await _append(store, run)
            await asyncio.sleep(0.2)
            assert hub.generation == generation

            # The first stream: listening once ``ready`` returns, so the next commit wakes it.
            first = await _listening(hub, engine, hub.subscribe_run(run.run_id, run.session_id))
            assert await _append_wakes(store, run, first)

            # A second stream shares the listener.
            second = await _listening(hub, engine, hub.subscribe_session(run.session_id))
            first.close()
            assert await _append_wakes(store, run, second)

            # The last stream ends: the listener stops after ``idle_seconds``.
            second.close()
            await _eventually(engine, 0)
            generation = hub.generation
            await _append(store, run)
            await asyncio.sleep(0.2)
            assert hub.generation == generation

            # And starts again for the next stream.
            third = await _listening(hub, engine, hub.subscribe_run(run.run_id, run.session_id))
            assert await _append_wakes(store, run, third)
            third.close()
        finally:
            await hub.stop()

    asyncio.run(scenario())


def test_a_stream_that_comes_back_within_the_idle_time_keeps_the_listener(
    engine: Engine,
) -> None:
    async def scenario() -> None:
        hub = Notifications(engine, max_streams=10, safety_seconds=60, poll_seconds=1)
        await hub.start()
        try:
            for _ in range(3):
                subscription = hub.subscribe_session("s")
                assert subscription is not None
                await hub.ready(5)
                subscription.close()
            assert await asyncio.to_thread(_listeners, engine) == 1
        finally:
            await hub.stop()
        await _eventually(engine, 0)

    asyncio.run(scenario())


def test_a_stream_does_not_wait_for_a_listener_that_cannot_connect(postgres_url: str) -> None:
    """With the database gone the first read answers at once (503 over HTTP); waiting for
    the listener would only delay that answer."""
    gone = (
        make_url(postgres_url)
        .set(database="rs_no_such_database")
        .render_as_string(hide_password=False)
    )
    engine = create_engine(gone)

    async def scenario() -> float:
        hub = Notifications(engine, max_streams=10, safety_seconds=60, poll_seconds=1)
        await hub.start()
        try:
            subscription = hub.subscribe_session("s")
            assert subscription is not None
            loop = asyncio.get_running_loop()
            started = loop.time()
            await hub.ready(30)
            return loop.time() - started
        finally:
            await hub.stop()

    try:
        waited = asyncio.run(scenario())
    finally:
        engine.dispose()
    assert waited < 10, f"waited {waited:.1f} s for a listener that cannot connect"
