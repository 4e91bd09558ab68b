"""Webhook delivery end to end (CONTRACT.md 13.1-13.3): a live ``runtime-store serve`` on
each database, a real receiver on loopback, signatures checked with the Standard Webhooks
library."""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import standardwebhooks
from sqlalchemy.engine import Engine

from app.storage import SqlStore, WebhookConfig
from app.webhook_delivery.dispatcher import WebhookDispatcher
from runtime_store_client import (
    AppendResult,
    DeliveryStatus,
    HttpStore,
    InvalidArgumentError,
    RunStart,
    RunStatus,
    RunTerminalConflictError,
    WebhookDelivery,
    WebhookEventType,
)
from tests.conftest import LiveServer, start_server, stop_server, wipe
from tests.contract.builders import (
    T0,
    checkpoint,
    new_session,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)
from tests.delivery.receiver import Received, Receiver, receiving

T = TypeVar("T")

ALL_EVENTS = [event.value for event in WebhookEventType]
#: Loopback receivers need the allow list; a short retry window for the failure tests.
ENV = {
    "RUNTIME_STORE_WEBHOOK_DISPATCH": "on",
    "RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "RUNTIME_STORE_WEBHOOK_RETRY_HOURS": "0.002",
}


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> tuple[str, Engine]:
    engine: Engine = request.getfixturevalue(f"{request.param}_engine")
    wipe(engine)
    return str(engine.url.render_as_string(hide_password=False)), engine


@pytest.fixture
def server(database: tuple[str, Engine], tmp_path: Path) -> Iterator[LiveServer]:
    live = start_server(database[0], tmp_path / "server.log", env=ENV)
    try:
        yield live
    finally:
        stop_server(live)


def _verified(secret: str, item: Received) -> dict[str, Any]:
    verified: dict[str, Any] = standardwebhooks.Webhook(secret).verify(item.body, item.headers)
    return verified


def _finish(
    store: HttpStore, run: RunStart, status: RunStatus = RunStatus.COMPLETED, key: str = "terminal"
) -> AppendResult:
    return store.record_run_terminal(
        run.run_id, status, terminal_record(run, status, event_key=key)
    )


def test_every_event_of_a_workload_arrives_signed_once_in_commit_order(server: LiveServer) -> None:
    with receiving() as receiver, HttpStore(server.base_url) as store:
        hook = store.create_webhook(receiver.url, ALL_EVENTS)
        session = new_session(store).id
        finished = start_root(store, session).run
        _finish(store, finished)
        suspended = start_root(store, session).run
        store.record_run_suspension(suspended.run_id, checkpoint(), suspended_record(suspended))
        canceled = start_root(store, session).run
        _finish(store, canceled, RunStatus.FAILED)
        store.end_session(session, T0)
        stopped = start_root(store, session)
        assert stopped.result.run_status is RunStatus.CANCELED
        one_shot = run_start()
        store.start_one_shot_run(one_shot, started_record(one_shot))
        _finish(store, one_shot)
        store.purge_session(session)
        received = receiver.wait_for(7)
        time.sleep(0.5)
        assert len(receiver.received) == 7  # each once
        bodies = [_verified(hook.secret, item) for item in received]
        assert all(
            item.headers["webhook-id"] == body["event_id"]
            for item, body in zip(received, bodies, strict=True)
        )
        in_session = [
            (body["type"], body["run"] and body["run"]["run_id"])
            for body in bodies
            if body["session_id"] == session
        ]
        assert in_session == [
            ("run.finished", finished.run_id),
            ("run.suspended", suspended.run_id),
            ("run.finished", canceled.run_id),
            ("session.ended", None),
            ("run.finished", stopped.run.run_id),
            ("session.purged", None),
        ]
        sessionless = [body for body in bodies if body["session_id"] == ""]
        assert [(b["type"], b["run"]["status"]) for b in sessionless] == [
            ("run.finished", "completed")
        ]
        page = store.list_webhook_deliveries(hook.webhook_id)
        assert [d.status for d in page.deliveries] == [DeliveryStatus.DELIVERED] * 7
        assert {d.event_id for d in page.deliveries} == {b["event_id"] for b in bodies}


def test_the_run_in_an_event_is_the_run_as_get_answers_it(server: LiveServer) -> None:
    with receiving() as receiver, HttpStore(server.base_url) as store:
        store.create_webhook(receiver.url, ["run.finished"])
        session = new_session(store).id
        run = start_root(store, session, labels={"site": "one"}).run
        _finish(store, run)
        (item,) = receiver.wait_for(1)
        answered = httpx.get(f"{server.base_url}/v1/runs/{run.run_id}").json()
        assert item.event["run"] == answered
        assert item.event["occurred_at"] == answered["updated_at"]


def test_an_exact_retry_or_a_refused_write_adds_no_event(server: LiveServer) -> None:
    with receiving() as receiver, HttpStore(server.base_url) as store:
        hook = store.create_webhook(receiver.url, ALL_EVENTS)
        session = new_session(store).id
        run = start_root(store, session).run
        _finish(store, run)
        _finish(store, run)  # exact retry
        with pytest.raises(RunTerminalConflictError):
            _finish(store, run, RunStatus.FAILED, key="other")  # refused
        store.end_session(session, T0)
        store.end_session(session, T0)  # already ended
        store.purge_session(session)
        store.purge_session(session)  # already purged
        receiver.wait_for(3)
        time.sleep(1.5)
        assert [e["type"] for e in receiver.events()] == [
            "run.finished",
            "session.ended",
            "session.purged",
        ]
        assert len(store.list_webhook_deliveries(hook.webhook_id).deliveries) == 3


def test_a_receiver_answering_500_then_200_gets_the_event_on_a_later_attempt(
    server: LiveServer,
) -> None:
    with receiving(script=[500, 503]) as receiver, HttpStore(server.base_url) as store:
        hook = store.create_webhook(receiver.url, ["session.ended"])
        store.end_session(new_session(store).id, T0)
        received = receiver.wait_for(3, timeout=20)
        assert len({item.headers["webhook-id"] for item in received}) == 1
        (delivery,) = store.list_webhook_deliveries(hook.webhook_id).deliveries
        deadline = time.monotonic() + 5
        while delivery.status is not DeliveryStatus.DELIVERED and time.monotonic() < deadline:
            time.sleep(0.1)
            (delivery,) = store.list_webhook_deliveries(hook.webhook_id).deliveries
        assert delivery.status is DeliveryStatus.DELIVERED
        assert delivery.attempts == 3
        assert delivery.last_status_code == 200


def test_a_receiver_that_never_answers_is_failed_after_the_retry_window(server: LiveServer) -> None:
    # The window is 0.002 h (7.2 s); one attempt waits 10 s for an answer, then fails.
    with receiving(delay=12) as receiver, HttpStore(server.base_url) as store:
        hook = store.create_webhook(receiver.url, ["session.ended"])
        store.end_session(new_session(store).id, T0)
        deadline = time.monotonic() + 25
        failed: list[WebhookDelivery] = []
        while not failed and time.monotonic() < deadline:
            time.sleep(0.5)
            failed = store.list_webhook_deliveries(hook.webhook_id, ["failed"]).deliveries
        assert failed, "the delivery did not fail within the window"
        assert failed[0].last_status_code is None
        assert failed[0].next_attempt_at is None
        # Queued again by hand: pending once more.
        again = store.retry_webhook_delivery(hook.webhook_id, failed[0].event_id)
        assert again.status is DeliveryStatus.PENDING
        assert receiver.received


def test_a_subscription_to_a_loopback_host_is_refused_without_the_allow_list(
    sqlite_server: LiveServer,
) -> None:
    with HttpStore(sqlite_server.base_url) as store:
        for url in (
            "http://127.0.0.1:9/hook",
            "http://127.0.0.2/hook",
            "http://[::1]:8080/hook",
            "http://localhost/hook",
            "http://10.1.2.3/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://0.0.0.0/hook",
        ):
            with pytest.raises(InvalidArgumentError) as refused:
                store.create_webhook(url, ["run.finished"])
            # Says where the allow-list is set: the service's environment, not the caller's.
            assert "a setting of the service" in refused.value.message
            assert "restart" in refused.value.message
        assert not {hook.url for hook in store.list_webhooks()} & {"http://localhost/hook"}
        assert all("127.0.0.2" not in hook.url for hook in store.list_webhooks())


def test_events_committed_while_the_service_was_killed_mid_delivery_still_arrive(
    database: tuple[str, Engine], tmp_path: Path
) -> None:
    live = start_server(database[0], tmp_path / "one.log", env=ENV)
    try:
        with receiving(delay=3) as receiver, HttpStore(live.base_url) as store:
            hook = store.create_webhook(receiver.url, ["session.ended"])
            sessions = [new_session(store).id for _ in range(3)]
            for session in sessions:
                store.end_session(session, T0)
            receiver.wait_for(1, timeout=10)
            os.kill(live.process.pid, signal.SIGKILL)  # mid-attempt: the answer is 3 s away
            live.process.wait(10)
            receiver.delay = 0
            live = start_server(database[0], tmp_path / "two.log", env=ENV)
            with HttpStore(live.base_url) as again:
                deadline = time.monotonic() + 40
                while time.monotonic() < deadline:
                    page = again.list_webhook_deliveries(hook.webhook_id, ["delivered"])
                    if len(page.deliveries) == 3:
                        break
                    time.sleep(0.5)
            got = {e["session_id"] for e in receiver.events()}
            assert got == set(sessions)
            assert len(page.deliveries) == 3
    finally:
        stop_server(live)


def test_two_replicas_on_one_postgresql_database_deliver_each_event_once(
    postgres_engine: Engine, tmp_path: Path
) -> None:
    wipe(postgres_engine)
    url = postgres_engine.url.render_as_string(hide_password=False)
    first = start_server(url, tmp_path / "a.log", env=ENV)
    second = start_server(url, tmp_path / "b.log", env=ENV)
    try:
        with receiving() as receiver, HttpStore(first.base_url) as store:
            store.create_webhook(receiver.url, ["session.ended"])
            sessions = [new_session(store).id for _ in range(40)]
            for session in sessions:
                store.end_session(session, T0)
            receiver.wait_for(40)
            time.sleep(2)
            ids = [item.headers["webhook-id"] for item in receiver.received]
            assert len(ids) == len(set(ids)) == 40
    finally:
        stop_server(first)
        stop_server(second)


#: Sessions ended before the timed ones: more than one subscription may hold in flight.
SLOW_BACKLOG = 6
TIMED_EVENTS = 4


def test_dripping_receivers_delay_no_other_and_each_of_their_attempts_ends_within_10_s(
    database: tuple[str, Engine], tmp_path: Path
) -> None:
    """Two receivers that drip their 200 one byte a second, never whole within 10 s (one
    sends its status line and headers at once, then the body; the other drips the status
    line too), beside a healthy one: the healthy one gets every event within a couple of
    seconds while the dripping attempts run; each dripping attempt is cut off at 10 s
    (the real deadline), recorded as a failed attempt, not delivered, and retried. Two
    dispatchers share the database (the service's and one in this process, as another
    replica), and never send one event at the same time."""
    url, engine = database
    env = {**ENV, "RUNTIME_STORE_WEBHOOK_RETRY_HOURS": "24"}  # retried, not failed
    live = start_server(url, tmp_path / "server.log", env=env)
    replica = WebhookDispatcher(
        SqlStore(engine, webhooks=WebhookConfig(allowed_hosts=("127.0.0.1",))), retry_hours=24
    )
    drippers: list[Receiver] = []
    try:
        with (
            receiving(drip="body", drip_bytes=30) as body_dripping,
            receiving(drip="head", drip_bytes=30) as head_dripping,
            receiving() as healthy,
            HttpStore(live.base_url) as store,
        ):
            drippers = [body_dripping, head_dripping]
            slow = [store.create_webhook(r.url, ["session.ended"]) for r in drippers]
            fast = store.create_webhook(healthy.url, ["session.ended"])
            replica.start()
            for _ in range(SLOW_BACKLOG):
                store.end_session(new_session(store).id, T0)
            healthy.wait_for(SLOW_BACKLOG, timeout=5)
            first = [r.wait_for(4, timeout=5)[:4] for r in drippers]

            # While the dripping attempts run, each new event reaches the healthy one fast.
            lags = []
            for n in range(TIMED_EVENTS):
                session = new_session(store).id
                committed = time.monotonic()
                store.end_session(session, T0)
                arrived = healthy.wait_for(SLOW_BACKLOG + n + 1, timeout=10)[-1]
                assert arrived.event["session_id"] == session
                lags.append(arrived.at - committed)
                time.sleep(0.8)
            assert max(lags) < 2.0, lags
            for items in first:
                assert all(item.ended_at is None for item in items), "not dripping any more"

            # Each dripping attempt is cut off at 10 s: a failed attempt, retried.
            for receiver, items, hook in zip(drippers, first, slow, strict=True):
                _cut_off_and_retried(store, hook.webhook_id, receiver, items)
            healthy_page = store.list_webhook_deliveries(fast.webhook_id).deliveries
            assert [d.status for d in healthy_page] == [DeliveryStatus.DELIVERED] * len(
                healthy_page
            )
            assert len(healthy_page) == SLOW_BACKLOG + TIMED_EVENTS
            assert len({item.headers["webhook-id"] for item in healthy.received}) == len(
                healthy.received
            )
        for receiver in drippers:  # never two attempts of one event at once
            _never_twice_at_once(receiver)
    finally:
        replica.stop()
        stop_server(live)


def _cut_off_and_retried(
    store: HttpStore, webhook_id: str, receiver: Receiver, items: list[Received]
) -> None:
    """Each of the dripping attempts ``items`` was cut off by the sender within 10 s, is
    stored as an attempt without an answer (pending, never delivered), and some event
    was sent again."""
    _wait_until(lambda: all(item.ended_at is not None for item in items), 12)
    for item in items:
        assert item.cut
        assert item.ended_at is not None
        assert item.ended_at - item.at < 10.5, item.ended_at - item.at
    attempted = _wait_until(lambda: _attempted(store, webhook_id, len(items)), 5)
    for delivery in attempted:
        assert delivery.status is DeliveryStatus.PENDING
        assert delivery.last_status_code is None
    _wait_until(lambda: _sent_again(receiver), 6)


def _never_twice_at_once(receiver: Receiver) -> None:
    """No event reached ``receiver`` while an attempt of it was still in flight."""
    by_event: dict[str, list[Received]] = {}
    for item in receiver.received:
        by_event.setdefault(item.headers["webhook-id"], []).append(item)
    for event_id, items in by_event.items():
        for before, after in itertools.pairwise(sorted(items, key=lambda i: i.at)):
            assert before.ended_at is not None
            assert before.ended_at <= after.at, event_id


def _wait_until(condition: Callable[[], T | None], timeout: float) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


def _attempted(store: HttpStore, webhook_id: str, count: int) -> list[WebhookDelivery] | None:
    deliveries = store.list_webhook_deliveries(webhook_id).deliveries
    attempted = [delivery for delivery in deliveries if delivery.attempts]
    return attempted if len(attempted) >= count else None


def _sent_again(receiver: Receiver) -> bool:
    with receiver.lock:
        ids = [item.headers["webhook-id"] for item in receiver.received]
    return len(ids) > len(set(ids))
