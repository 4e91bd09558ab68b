"""Retention of webhook deliveries (CONTRACT.md 13.3) on each database: delivered and
failed deliveries older than the retention go, with their events once no delivery needs
them; pending ones never go, however old; an outcome is stored only under its lease."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.engine import Engine

from app.settings import Settings
from app.storage import Claimed, SqlStore, WebhookConfig
from app.storage.database.tables import webhook_deliveries, webhook_events, webhooks
from app.webhook_delivery.dispatcher import WebhookDispatcher
from runtime_store_client import DeliveryStatus, WebhookNotFoundError
from tests.contract.builders import T0, new_session
from tests.delivery.receiver import receiving

DAY_MS = 86_400_000
KEEP_MS = 3 * DAY_MS
LEASE_MS = 15_000
UNUSED_URL = "http://127.0.0.1:9/hook"  # never sent to: the tests settle deliveries by hand


class Clock:
    def __init__(self) -> None:
        self.now_ms = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now_ms


def _store(engine: Engine, clock: Callable[[], int]) -> SqlStore:
    return SqlStore(engine, clock=clock, webhooks=WebhookConfig(allowed_hosts=("127.0.0.1",)))


def _claim_all(store: SqlStore) -> dict[tuple[str, str], Claimed]:
    """Every due delivery, by (subscription, session)."""
    claimed: dict[tuple[str, str], Claimed] = {}
    while batch := store.webhook_queue.claim(100, LEASE_MS):
        for item in batch:
            claimed[item.webhook_id, json.loads(item.body)["session_id"]] = item
    return claimed


def _rows(engine: Engine) -> tuple[list[tuple[str, str]], set[str]]:
    with engine.connect() as conn:
        deliveries = conn.execute(
            sa.select(webhook_deliveries.c.event_id, webhook_deliveries.c.status)
        ).all()
        events = set(conn.execute(sa.select(webhook_events.c.event_id)).scalars())
    return sorted((row.event_id, row.status) for row in deliveries), events


def test_settled_deliveries_older_than_the_retention_go_and_pending_ones_stay(
    engine: Engine,
) -> None:
    clock = Clock()
    store = _store(engine, clock)
    first = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    second = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    both, split, waiting, recent = (new_session(store).id for _ in range(4))
    for session in (both, split, waiting):
        store.end_session(session, T0)
    claimed = _claim_all(store)
    for key, code in {
        (first, both): 200,
        (second, both): 204,
        (first, split): 200,
        (second, split): 500,  # the window is 0 s: failed at once
        (first, waiting): 200,
        # (second, waiting) stays pending: its receiver never answered
    }.items():
        assert store.webhook_queue.record_attempt(claimed[key], code, 0) is not None
    clock.now_ms += KEEP_MS - 1000
    store.end_session(recent, T0)
    for key, item in _claim_all(store).items():
        if key[1] == recent:
            store.webhook_queue.record_attempt(item, 200, 0)
    clock.now_ms += 2000  # the first settlements are now older than the retention

    pruned = store.webhook_queue.prune(KEEP_MS, batch=2)  # several batches

    assert pruned is not None
    assert (pruned.deliveries, pruned.events) == (5, 2)  # the events of `both` and `split`
    deliveries, events = _rows(engine)
    waiting_event = claimed[second, waiting].event_id
    assert (waiting_event, DeliveryStatus.PENDING.value) in deliveries
    assert len(deliveries) == 3  # the pending one, and `recent`'s two, settled 1 s ago
    assert waiting_event in events
    assert len(events) == 2
    # What 13.3 showed of them: the pending one is listed, the pruned failed one is gone.
    listed = store.list_webhook_deliveries(second).deliveries
    assert next((d.event_id, d.status) for d in listed) == (waiting_event, DeliveryStatus.PENDING)
    with pytest.raises(WebhookNotFoundError):
        store.retry_webhook_delivery(second, claimed[second, split].event_id)
    # Much later, a pending delivery is still never pruned.
    clock.now_ms += 30 * DAY_MS
    again = store.webhook_queue.prune(KEEP_MS)
    assert again is not None
    assert again.deliveries == 2
    assert _rows(engine) == ([(waiting_event, DeliveryStatus.PENDING.value)], {waiting_event})


def test_a_failed_delivery_queued_again_is_not_pruned(engine: Engine) -> None:
    clock = Clock()
    store = _store(engine, clock)
    hook = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    store.end_session(new_session(store).id, T0)
    (item,) = _claim_all(store).values()
    assert store.webhook_queue.record_attempt(item, 500, 0) is DeliveryStatus.FAILED
    clock.now_ms += KEEP_MS + 1000
    assert store.retry_webhook_delivery(hook, item.event_id).status is DeliveryStatus.PENDING
    pruned = store.webhook_queue.prune(KEEP_MS)
    assert pruned is not None
    assert pruned.deliveries == 0
    assert _rows(engine) == ([(item.event_id, "pending")], {item.event_id})


def test_an_outcome_is_stored_only_while_its_lease_holds(engine: Engine) -> None:
    clock = Clock()
    store = _store(engine, clock)
    hook = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    store.end_session(new_session(store).id, T0)
    (late,) = _claim_all(store).values()
    clock.now_ms += LEASE_MS + 1  # the lease expired: another dispatcher claims it
    (current,) = _claim_all(store).values()
    assert current.event_id == late.event_id
    assert store.webhook_queue.record_attempt(late, 500, 3600) is None  # not its outcome any more
    assert store.webhook_queue.record_attempt(current, 200, 3600) is DeliveryStatus.DELIVERED
    (delivery,) = store.list_webhook_deliveries(hook).deliveries
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 1)


def test_the_dispatcher_prunes_what_it_delivered(engine: Engine) -> None:
    store = _store(engine, clock=lambda: int(time.time() * 1000))
    with receiving() as receiver:
        hook = store.create_webhook(receiver.url, ["session.ended"]).webhook_id
        store.end_session(new_session(store).id, T0)
        dispatcher = WebhookDispatcher(
            store, retry_hours=1, keep_settled_seconds=0.2, poll_seconds=0.05, prune_seconds=0.2
        )
        dispatcher.start()
        try:
            receiver.wait_for(1, timeout=10)
            deadline = time.monotonic() + 10
            while _rows(engine) != ([], set()) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            dispatcher.stop()
        assert _rows(engine) == ([], set())
        assert store.list_webhook_deliveries(hook).deliveries == []
        assert len(receiver.received) == 1


def test_a_pending_delivery_of_a_deleted_subscription_is_pruned(engine: Engine) -> None:
    """A writer that read the subscriber before a concurrent delete committed leaves a
    pending delivery of a subscription that no longer exists: nothing would ever send it."""
    clock = Clock()
    store = _store(engine, clock)
    kept = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    gone = store.create_webhook(UNUSED_URL, ["session.ended"]).webhook_id
    store.end_session(new_session(store).id, T0)
    with engine.begin() as conn:  # what the race leaves: the subscription row gone alone
        conn.execute(webhooks.delete().where(webhooks.c.webhook_id == gone))
    pruned = store.webhook_queue.prune(KEEP_MS)
    assert pruned is not None
    assert (pruned.deliveries, pruned.events) == (1, 0)  # the event still has `kept`'s
    (delivery,) = store.list_webhook_deliveries(kept).deliveries
    assert delivery.status is DeliveryStatus.PENDING
    deliveries, events = _rows(engine)
    assert deliveries == [(delivery.event_id, "pending")]
    assert events == {delivery.event_id}


def test_the_retention_is_an_age_of_three_days_unless_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().webhook_delivery_retention == timedelta(days=3)
    monkeypatch.setenv("RUNTIME_STORE_WEBHOOK_DELIVERY_RETENTION", "12h")
    assert Settings().webhook_delivery_retention == timedelta(hours=12)
    monkeypatch.setenv("RUNTIME_STORE_WEBHOOK_DELIVERY_RETENTION", "0s")
    with pytest.raises(ValidationError):
        Settings()
