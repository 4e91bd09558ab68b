"""How the dispatcher shares its attempts among subscriptions (CONTRACT.md 13.3), on each
database: a claim gives no subscription more than its share of attempts in flight and
never two deliveries of one ordering at once; a dispatcher whose every slot but one a
slow subscriber could take still delivers another subscriber's events at once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore, WebhookConfig, create_engine, upgrade_schema
from app.webhook_delivery.dispatcher import WebhookDispatcher
from runtime_store_client import DeliveryStatus, RunStatus
from tests.contract.builders import T0, new_session, start_root, terminal_record
from tests.delivery.receiver import receiving
from tests.reliability.cluster import fresh_database

LEASE_MS = 15_000
UNUSED_URL = "http://127.0.0.1:9/hook"  # never sent to: the tests claim by hand


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A database of this test's own: the session's shared ones may be served by a live
    service of another module, whose dispatcher would claim these deliveries too."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'dispatch.db'}"
        upgrade_schema(url)
        private = create_engine(url)
        yield private
        private.dispose()
        return
    with fresh_database(request.getfixturevalue("postgres_url")) as database:
        private = create_engine(database.url)
        yield private
        private.dispose()


def _store(engine: Engine) -> SqlStore:
    return SqlStore(engine, webhooks=WebhookConfig(allowed_hosts=("127.0.0.1",)))


def test_a_claim_gives_no_subscription_more_than_its_share(engine: Engine) -> None:
    store = _store(engine)
    slow = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    fast = store.create_webhook(UNUSED_URL, ["run.finished"]).webhook_id
    for _ in range(5):
        store.end_session(new_session(store).id, T0)
    run = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    queue = store.webhook_queue
    first = queue.claim(4, LEASE_MS, per_webhook=2)
    assert [item.webhook_id for item in first] == [slow, slow]
    # The slow one is at its share: the next claim passes over it.
    second = queue.claim(4, LEASE_MS, per_webhook=2, busy={slow: 2})
    assert [item.webhook_id for item in second] == [fast]
    # One of its attempts ended: room for one more of its deliveries, not two.
    third = queue.claim(4, LEASE_MS, per_webhook=2, busy={slow: 1, fast: 1})
    assert [item.webhook_id for item in third] == [slow]
    # Without a share, a claim takes what is due.
    assert len(queue.claim(10, LEASE_MS)) == 2


def test_a_claim_never_holds_two_deliveries_of_one_ordering(engine: Engine) -> None:
    store = _store(engine)
    hook = store.create_webhook(UNUSED_URL, ["run.finished", "session.ended"]).webhook_id
    session = new_session(store).id
    run = start_root(store, session).run
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(session, T0)
    queue = store.webhook_queue
    (finished,) = queue.claim(10, LEASE_MS, per_webhook=4)
    assert queue.claim(10, LEASE_MS, per_webhook=4, busy={hook: 1}) == []
    assert queue.record_attempt(finished, 200, 3600) is DeliveryStatus.DELIVERED
    (ended,) = queue.claim(10, LEASE_MS, per_webhook=4)
    assert ended.seq > finished.seq


def test_a_slow_subscriber_holds_its_share_of_the_dispatcher_and_no_more(
    engine: Engine,
) -> None:
    """Two slots, one each at most: a receiver dripping its answer for 30 s holds one
    (its other events wait), and the healthy receiver's events go through the other at
    once."""
    store = _store(engine)
    with (
        receiving(drip="body", drip_bytes=30) as dripping,
        receiving() as healthy,
    ):
        store.create_webhook(dripping.url, ["session.ended"])
        store.create_webhook(healthy.url, ["session.ended"])
        for _ in range(3):
            store.end_session(new_session(store).id, T0)
        dispatcher = WebhookDispatcher(
            store, retry_hours=1, poll_seconds=0.05, concurrency=2, per_subscription=1
        )
        started = time.monotonic()
        dispatcher.start()
        try:
            healthy.wait_for(3, timeout=10)
            took = time.monotonic() - started
            time.sleep(0.3)
            assert len(dripping.received) == 1  # its share: one attempt in flight
        finally:
            dripping.closed.set()  # the dripping answer ends: the dispatcher stops at once
            dispatcher.stop()
        assert took < 10.0, took  # behind the dripping answer it would take 30 s
