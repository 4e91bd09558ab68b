"""No webhook event is lost when, during delivery, the service is SIGKILLed and restarted
and the database goes away and comes back (CONTRACT.md 13.3: at least once, across
restarts, kills and database outages; commit order per session and sessionless run).

The machine's PostgreSQL cluster is shared with other test runs, so it is never restarted:
the first test owns a database on it, the service logs in as a non-superuser role, and for
the outage ``CONNECT`` is revoked and every backend of the database terminated, then
granted back (the technique and helpers of tests/reliability). The second test restarts
a PostgreSQL server for real: a private cluster (tests/replicas/cluster.py) crashed with
``pg_ctl restart -m immediate`` while attempts are in flight, then restarted cleanly. The
receiver is a real server on loopback that answers slowly, so attempts are in flight when
each blow lands.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlalchemy as sa
import standardwebhooks

from app.storage import create_engine, upgrade_schema
from app.storage.database.tables import webhook_deliveries
from runtime_store_client import HttpStore, RunStatus, WebhookEventType
from tests.conftest import LiveServer, start_server, stop_server
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
from tests.delivery.receiver import Receiver, receiving
from tests.reliability.cluster import Database, fresh_database, service_role
from tests.replicas.cluster import StreamingPair, server_binaries, start_cluster

pytestmark = [pytest.mark.serial, pytest.mark.postgres]

ENV = {
    "RUNTIME_STORE_WEBHOOK_DISPATCH": "on",
    "RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
}
#: Seconds the receiver takes to answer: attempts are in flight when the blows land.
ANSWER_DELAY = 0.8
OUTAGE_SECONDS = 3.0

#: (ordering, event type, run ID or "" for session events), in commit order.
Expected = list[tuple[str, str, str]]


def _workload(store: HttpStore, sessions: int) -> Expected:
    """Per session: a finished run, a suspended one, a failed one, the session's end; and
    one sessionless run finished."""
    events: Expected = []
    for _ in range(sessions):
        session = new_session(store).id
        ordering = f"session:{session}"
        done = start_root(store, session).run
        store.record_run_terminal(
            done.run_id, RunStatus.COMPLETED, terminal_record(done, RunStatus.COMPLETED)
        )
        paused = start_root(store, session).run
        store.record_run_suspension(paused.run_id, checkpoint(), suspended_record(paused))
        broken = start_root(store, session).run
        store.record_run_terminal(
            broken.run_id, RunStatus.FAILED, terminal_record(broken, RunStatus.FAILED)
        )
        store.end_session(session, T0)
        events += [
            (ordering, "run.finished", done.run_id),
            (ordering, "run.suspended", paused.run_id),
            (ordering, "run.finished", broken.run_id),
            (ordering, "session.ended", ""),
        ]
    solo = run_start()
    store.start_one_shot_run(solo, started_record(solo))
    store.record_run_terminal(
        solo.run_id, RunStatus.COMPLETED, terminal_record(solo, RunStatus.COMPLETED)
    )
    return [*events, (f"run:{solo.run_id}", "run.finished", solo.run_id)]


@dataclass
class Arrivals:
    """What the receiver got, verified, grouped by ordering in arrival order."""

    by_ordering: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    duplicates: int = 0


def _arrivals(receiver: Receiver, secret: str) -> Arrivals:
    found = Arrivals()
    seen: set[str] = set()
    verify = standardwebhooks.Webhook(secret)
    with receiver.lock:
        received = list(receiver.received)
    for item in received:
        body = verify.verify(item.body, item.headers)  # raises unless signed with the secret
        run_id = body["run"]["run_id"] if body["run"] else ""
        ordering = f"session:{body['session_id']}" if body["session_id"] else f"run:{run_id}"
        found.by_ordering.setdefault(ordering, []).append((body["event_id"], body["type"], run_id))
        found.duplicates += body["event_id"] in seen
        seen.add(body["event_id"])
    return found


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        time.sleep(0.1)


def _undelivered(database_url: str) -> int:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count()).where(webhook_deliveries.c.status != "delivered")
                ).scalar_one()
            )
    finally:
        engine.dispose()


def _drained(database_url: str, receiver: Receiver, events: int) -> None:
    _wait(
        lambda: _undelivered(database_url) == 0 and len(receiver.received) >= events,
        90,
        "every delivery was not delivered",
    )


def _outage(database: Database) -> None:
    """No connection to the database for ``OUTAGE_SECONDS``; every open one is cut."""
    database.allow_connections(False)
    try:
        assert database.terminate_connections() > 0
        time.sleep(OUTAGE_SECONDS)
    finally:
        database.allow_connections(True)


def test_no_event_is_lost_across_a_kill_a_restart_and_a_database_outage(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        fresh_database(postgres_url) as database,
        service_role(database) as (user, password),
        receiving(delay=ANSWER_DELAY) as receiver,
    ):
        url = database.url_for(user, password)
        live: LiveServer = start_server(url, tmp_path / "one.log", env=ENV)
        try:
            with HttpStore(live.base_url) as store:
                hook = store.create_webhook(receiver.url, [e.value for e in WebhookEventType])
                expected = _workload(store, sessions=3)
            receiver.wait_for(2, timeout=20)
            os.kill(live.process.pid, signal.SIGKILL)  # attempts in flight, answers pending
            live.process.wait(10)

            live = start_server(url, tmp_path / "two.log", env=ENV)
            with HttpStore(live.base_url) as store:
                expected += _workload(store, sessions=3)
            got = len(receiver.received)
            receiver.wait_for(got + 2, timeout=30)  # phase two is being delivered
            _outage(database)  # attempts in flight: their outcomes wait for the database
            _drained(database.url, receiver, len(expected))

            _outage(database)  # nothing in flight: the dispatcher's polls fail
            with HttpStore(live.base_url, retries=10) as store:
                expected += _workload(store, sessions=1)
            _drained(database.url, receiver, len(expected))
            assert live.process.poll() is None, "the service died in an outage"
            log = live.log()
        finally:
            stop_server(live)

    arrivals = _every_event_arrived_in_order(receiver, hook.secret, expected)
    # The dispatcher noticed each outage, backed off, and resumed by itself.
    for what in ("outcome of evt_", "dispatch"):
        assert re.search(f'webhook {what}[^"]* failed; backing off', log), what
        assert re.search(f'webhook {what}[^"]* resumed after', log), what
    print(f"\n{len(expected)} events, {arrivals.duplicates} sent again after the faults")


def _every_event_arrived_in_order(receiver: Receiver, secret: str, expected: Expected) -> Arrivals:
    """Every expected event arrived, signed, in commit order per ordering; a repeat comes
    only right after itself (a resend), never after a later event."""
    arrivals = _arrivals(receiver, secret)
    wanted: dict[str, list[tuple[str, str]]] = {}
    for ordering, event_type, run_id in expected:
        wanted.setdefault(ordering, []).append((event_type, run_id))
    assert set(arrivals.by_ordering) == set(wanted)
    for ordering, items in arrivals.by_ordering.items():
        collapsed = [item for n, item in enumerate(items) if n == 0 or item != items[n - 1]]
        assert len({event_id for event_id, _, _ in collapsed}) == len(collapsed), ordering
        assert [(t, r) for _, t, r in collapsed] == wanted[ordering], ordering
    return arrivals


@pytest.fixture
def private_cluster() -> Iterator[StreamingPair]:
    """A PostgreSQL server of this test's own, which it may crash and restart."""
    binaries = server_binaries()
    if binaries is None:
        if os.environ.get("RUNTIME_STORE_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL's server binaries (initdb, pg_ctl) are required")
        pytest.skip("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
    cluster = start_cluster(binaries)
    try:
        yield cluster
    finally:
        cluster.remove()


def test_no_event_is_lost_across_a_postgresql_crash_and_restart(
    private_cluster: StreamingPair, tmp_path: Path
) -> None:
    private_cluster.create_database("deliveries")
    url = private_cluster.primary_url("deliveries")
    upgrade_schema(url)
    with receiving(delay=ANSWER_DELAY) as receiver:
        live = start_server(url, tmp_path / "server.log", env=ENV)
        try:
            with HttpStore(live.base_url) as store:
                hook = store.create_webhook(receiver.url, [e.value for e in WebhookEventType])
                expected = _workload(store, sessions=3)
            receiver.wait_for(2, timeout=20)
            # The server crashes with attempts in flight and recovers from its WAL.
            private_cluster.restart_primary("immediate")
            _drained(url, receiver, len(expected))

            private_cluster.restart_primary("fast")  # nothing in flight: polls are cut
            with HttpStore(live.base_url, retries=10) as store:
                expected += _workload(store, sessions=1)
            _drained(url, receiver, len(expected))
            assert live.process.poll() is None, "the service died when PostgreSQL restarted"
        finally:
            stop_server(live)

    arrivals = _every_event_arrived_in_order(receiver, hook.secret, expected)
    print(f"\n{len(expected)} events, {arrivals.duplicates} sent again after the restarts")
