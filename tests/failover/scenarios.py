"""One failover under load, and what it is judged by (CONTRACT.md 16): the test
(test_patroni_failover.py) asserts it, the bench (bench/failover.py) prints it.

A scenario owns a fresh database on the Patroni cluster, migrated over the multi-host
URL, and one ``runtime-store serve`` on that URL with the webhook dispatcher on and a
subscription to a real receiver on loopback. The reliability load (tests/reliability/
load.py: workers living whole run lifecycles with exact retries, a host creating and
ending sessions, a reader paging a session) runs through the real ``HttpStore`` with
retries enough to outlast a failover; ``lossy``: a write cut at its commit may come back
from its retry as ``inserted = false`` with its original ID. A few seconds in, the blow
lands on the leader; the load goes on until the cluster is whole again.

The workers send batches too (``append_run_records``). Across the blow a live tail
follows the reader's session (``tail_session_run_records``, on a client of its own) and a
``wait_for_run`` waits for a run of that session that finishes only once the cluster is
whole again (``Watch``).

Afterwards: every acknowledged write stored exactly once with its ID and nothing else
(the ledger; batch records included), ``db verify`` clean (the CLI, over the multi-host
URL), every webhook event delivered, each session's (and sessionless run's) events first
reached the receiver in commit order (13.3: duplicates are redeliveries of the same event,
byte for byte), the live tail saw the session's records exactly as a paged read gives them
(each once, in commit order), the wait answered the finished run soon after its terminal
write. Every HTTP answer of the load is timed (a recording transport), which gives the
unavailable window (the longest time without an acknowledged write after the blow), the
503s, the longest answer while no primary took writes, and the time to full throughput
again.
"""

from __future__ import annotations

import itertools
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx
import psycopg
import sqlalchemy as sa

from app.storage import create_engine, upgrade_schema
from app.storage.database.tables import webhook_deliveries, webhook_events
from runtime_store_client import (
    HttpStore,
    Record,
    RunMeta,
    RunStart,
    RunStartOutcome,
    RunStatus,
    WebhookEventType,
)
from tests.conftest import LiveServer, start_server, stop_server
from tests.contract.builders import at, canceled_record, run_start, started_record, terminal_record
from tests.delivery.receiver import Receiver, receiving
from tests.reliability import cluster as reliability_cluster
from tests.reliability.load import (
    Expected,
    Ledger,
    LoadShape,
    Written,
    check_load,
    guarded,
    run_load,
)

from .cluster import Member, PatroniCluster

BLOWS: Final = ("kill", "stop", "freeze")
#: Seconds of load before the blow, and after the cluster is whole again.
BEFORE_BLOW: Final = 3.0
AFTER_WHOLE: Final = 3.0
#: How long a frozen leader stays frozen after another member took over.
FROZEN_AFTER_FAILOVER: Final = 3.0
ENV: Final = {
    "RUNTIME_STORE_WEBHOOK_DISPATCH": "on",
    "RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
}
#: Clients patient enough to outlast a failover (a frozen leader: ttl + a few seconds);
#: the load runs until the cluster is whole again and ``AFTER_WHOLE`` more, at most twice
#: ``duration``.
SHAPE: Final = LoadShape(
    workers=4,
    duration=14.0,
    max_episodes=1000,
    lossy=True,
    retries=100,
    deadline=120.0,
    batches=True,
)
#: The waited run's terminal write is answered (to its wait) within this many seconds:
#: the wake-ups (LISTEN) follow the primary; a wait that missed them would answer only at
#: its server's timeout.
WAIT_WITHIN: Final = 5.0
#: How long the live tail may take after the load to yield what a paged read gives.
TAIL_CATCH_UP: Final = 20.0


# --- every answer, timed -----------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    sent: float
    answered: float
    method: str
    status: int  # 0: no answer (a transport error)

    @property
    def write(self) -> bool:
        return self.method != "GET"

    @property
    def acknowledged(self) -> bool:
        return self.write and 200 <= self.status < 300


class Recorder:
    """Times every request of the reliability clients (their balancing transport)."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self._lock = threading.Lock()

    @contextmanager
    def recording(self) -> Iterator[Recorder]:
        balancer = reliability_cluster.Balancer
        original = balancer.handle_request
        recorder = self

        def handle_request(self: Any, request: httpx.Request) -> httpx.Response:
            sent = time.monotonic()
            try:
                response = original(self, request)
            except httpx.TransportError:
                recorder._add(Answer(sent, time.monotonic(), request.method, 0))
                raise
            recorder._add(Answer(sent, time.monotonic(), request.method, response.status_code))
            return response

        balancer.handle_request = handle_request  # type: ignore[method-assign]
        try:
            yield self
        finally:
            balancer.handle_request = original  # type: ignore[method-assign]

    def _add(self, answer: Answer) -> None:
        with self._lock:
            self.answers.append(answer)


# --- a live tail and a wait across the blow ----------------------------------------------


class Watch:
    """A live tail of one session and a wait for one of its runs, both across the blow,
    each on a client of its own (outside the recorded load); the runs it writes go into
    its ledger, checked with the load's.

    ``start`` (before the blow): the waited run starts, a thread tails the session from
    its beginning, another waits for the run to finish. ``finish_waited_run`` (the
    cluster whole again): its terminal write. ``end`` (after the load): a paged read of
    the session; once the tail has yielded as many records (or ``TAIL_CATCH_UP`` seconds
    passed) it is closed, and its records must be the paged read's, each once, in
    order; then the wait's answer."""

    def __init__(self, base_url: str, session_id: str, seed: int) -> None:
        self.session_id = session_id
        self.stores = [
            HttpStore(base_url, retries=SHAPE.retries, deadline=SHAPE.deadline) for _ in range(3)
        ]
        self.writer, tail_store, self.wait_store = self.stores
        self.tail = tail_store.tail_session_run_records(session_id)
        self.ledger = Ledger()
        self.waited = run_start(
            run_id=f"waited-{seed}", agent_id="agent-watch", session_id=session_id, started_at=at(1)
        )
        self.tailed: list[Record] = []
        self.closing = threading.Event()
        self.threads: list[threading.Thread] = []
        self.wait_answer: RunMeta | None = None
        self.wait_answered_at = 0.0
        self.finished_at = 0.0

    def start(self) -> None:
        self._start_run(self.waited)
        self.threads = [
            threading.Thread(target=guarded(self.ledger, "live tail", self._follow), name="tail"),
            threading.Thread(target=guarded(self.ledger, "wait", self._wait), name="wait"),
        ]
        for thread in self.threads:
            thread.start()

    def _start_run(self, run: RunStart) -> None:
        started = started_record(run)
        result = self.writer.start_root_run(run, started, canceled_record(run))
        if result.outcome is not RunStartOutcome.PROCEED or result.started is None:
            raise AssertionError(f"{run.run_id} did not start: {result}")
        self.ledger.written.append(Written(started, result.started.id))
        self.ledger.expected[run.run_id] = Expected(self.session_id, RunStatus.RUNNING)

    def _follow(self) -> None:
        try:
            for rec in self.tail:
                self.tailed.append(rec)
        except Exception:
            if not self.closing.is_set():
                raise  # else: closed under it once it had caught up, or given up on

    def _wait(self) -> None:
        meta = self.wait_store.wait_for_run(self.waited.run_id, timeout=SHAPE.deadline + 60)
        self.wait_answered_at = time.monotonic()
        self.wait_answer = meta

    def finish_waited_run(self) -> None:
        status = RunStatus.COMPLETED
        rec = terminal_record(self.waited, status)
        result = self.writer.record_run_terminal(self.waited.run_id, status, rec)
        self.finished_at = time.monotonic()
        self.ledger.written.append(Written(rec, result.id))
        self.ledger.expected[self.waited.run_id] = Expected(self.session_id, status)

    def end(self, outcome: Outcome) -> None:
        if not self.threads:
            outcome.problems.append("the live tail and the wait never started")
            return
        paged = list(self.writer.iter_session_run_records(self.session_id, limit=50))
        follow, wait = self.threads
        deadline = time.monotonic() + TAIL_CATCH_UP
        while len(self.tailed) < len(paged) and follow.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        time.sleep(0.2)  # a repeat after the last record would show now
        self.closing.set()
        self.tail.close()
        for thread in (follow, wait):
            thread.join(timeout=30)
            if thread.is_alive():
                outcome.problems.append(f"the {thread.name} thread did not end")
        outcome.problems += self.ledger.problems
        self.ledger.problems = []
        outcome.tailed = len(self.tailed)
        if self.tailed != paged:
            keys = [(r.run_id, r.id) for r in self.tailed]
            outcome.problems.append(
                f"live tail: {len(keys)} records ({len(keys) - len(set(keys))} repeated, "
                f"{len({(r.run_id, r.id) for r in paged} - set(keys))} missing), a paged read "
                f"{len(paged)}, or the order differs"
            )
        meta = self.wait_answer
        if meta is None or meta.status is not RunStatus.COMPLETED:
            outcome.problems.append(f"wait_for_run answered {meta}, not the finished run")
        elif self.finished_at:
            outcome.wait_answered_after = max(0.0, self.wait_answered_at - self.finished_at)
            if outcome.wait_answered_after > WAIT_WITHIN:
                outcome.problems.append(
                    f"wait_for_run answered {outcome.wait_answered_after:.2f} s after the "
                    "terminal write"
                )

    def close(self) -> None:
        self.closing.set()
        self.tail.close()
        for thread in self.threads:
            thread.join(timeout=10)
        for store in self.stores:
            store.close()


# --- one scenario ------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one scenario measured and found (``problems`` must be empty)."""

    blow: str
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    unavailable: int = 0
    transport_errors: int = 0
    #: Blow -> another member accepts writes (Patroni's own failover), seconds.
    patroni_failover: float = 0.0
    #: The longest time without an acknowledged write from the blow until the cluster is
    #: whole again (killed or frozen leader: the blow to the first write acknowledged
    #: after it), seconds.
    window: float = 0.0
    #: Blow -> the end of the first second of writes at 80 % of the throughput before it.
    full_throughput: float = 0.0
    #: Longest answer (any) while no primary took writes, seconds.
    longest_answer: float = 0.0
    readyz_during: int = 0
    readyz_seconds: float = 0.0
    healthz_during: int = 0
    events: int = 0
    events_delivered: int = 0
    #: Deliveries received more than once (redeliveries), and the orderings (sessions,
    #: sessionless runs) whose order was checked, the longest of them in events.
    redeliveries: int = 0
    orderings: int = 0
    longest_ordering: int = 0
    writes_seen: int = 0
    #: Acknowledged records sent in batches.
    batch_records: int = 0
    #: Records the live tail yielded; the wait's answer after the terminal write, seconds.
    tailed: int = 0
    wait_answered_after: float = float("inf")
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.blow}: writes acknowledged {self.acknowledged}, lost {self.lost}, "
            f"duplicated {self.duplicated}, 503s {self.unavailable}, "
            f"unavailable window {self.window:.2f} s (Patroni's failover "
            f"{self.patroni_failover:.2f} s), full throughput after {self.full_throughput:.2f} s, "
            f"longest answer meanwhile {self.longest_answer:.2f} s, /readyz "
            f"{self.readyz_during} in {self.readyz_seconds:.2f} s, /healthz {self.healthz_during}, "
            f"webhook events {self.events_delivered}/{self.events} ({self.redeliveries} "
            f"redelivered, order checked in {self.orderings} orderings, the longest "
            f"{self.longest_ordering}), batch records {self.batch_records}, live tail "
            f"{self.tailed} records, wait answered {self.wait_answered_after:.2f} s after "
            "the terminal write"
        )


@dataclass
class _Service:
    """What the reliability load needs of a replica: its port and base URL."""

    port: int
    base_url: str


def _create_database(cluster: PatroniCluster, name: str) -> str:
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return cluster.url(name)


def run_scenario(cluster: PatroniCluster, blow: str, seed: int, log_dir: Path) -> Outcome:
    """One blow on the leader under load; the cluster whole again afterwards."""
    outcome = Outcome(blow)
    url = _create_database(cluster, f"rs_failover_{blow}_{uuid.uuid4().hex[:8]}")
    upgrade_schema(url)  # over the multi-host URL: migrations find the primary
    with receiving() as receiver:
        server = start_server(url, log_dir / f"serve-{blow}.log", env=ENV)
        try:
            with HttpStore(server.base_url) as store:
                store.create_webhook(receiver.url, [e.value for e in WebhookEventType])
            timings: dict[str, float] = {}
            disrupted = threading.Event()
            watch = Watch(server.base_url, f"reader-{seed}", seed)

            def disrupt(_workers_done: threading.Event) -> None:
                watch.start()
                time.sleep(BEFORE_BLOW)
                _blow(cluster, blow, server, outcome, timings)
                watch.finish_waited_run()
                time.sleep(AFTER_WHOLE)
                disrupted.set()

            try:
                with Recorder().recording() as recorder:
                    load = run_load(
                        [_Service(int(server.base_url.rsplit(":", 1)[1]), server.base_url)],  # type: ignore[list-item]
                        seed=seed,
                        shape=SHAPE,
                        disrupt=disrupt,
                        disrupted=disrupted,
                    )
                watch.end(outcome)
            finally:
                watch.close()
            load.ledger.merge(watch.ledger)
            _measure(outcome, recorder.answers, timings)
            engine = create_engine(url)
            try:
                findings = check_load(engine, load)
                outcome.problems += findings.problems
                outcome.writes_seen = len(load.ledger.written)
                outcome.batch_records = sum(
                    w.record.event_key.startswith("batch-") for w in load.ledger.written
                )
                outcome.lost = sum("but is not stored" in p for p in findings.problems)
                outcome.duplicated = sum("more than once" in p for p in findings.problems)
                _check_webhooks(engine, receiver, outcome)
            finally:
                engine.dispose()
            _db_verify(url, outcome)
            if server.process.poll() is not None:
                outcome.problems.append("the service exited during the failover")
        finally:
            stop_server(server)
    return outcome


def _blow(
    cluster: PatroniCluster,
    blow: str,
    server: LiveServer,
    outcome: Outcome,
    timings: dict[str, float],
) -> None:
    old = cluster.leader()
    timings["blow"] = time.monotonic()
    if blow == "kill":
        cluster.kill_postgres(old)
    elif blow == "stop":
        cluster.stop_patroni(old)
    else:
        cluster.freeze(old)
    # While no primary takes writes: /readyz answers 503 within its bound, /healthz 200.
    time.sleep(0.3)
    _probe_health(server, outcome, old, cluster)
    new, accepted = cluster.wait_for_new_primary(old)
    timings["new_primary"] = accepted
    outcome.patroni_failover = accepted - timings["blow"]
    if blow == "stop":
        cluster.start_member(old)
    elif blow == "freeze":
        time.sleep(FROZEN_AFTER_FAILOVER)
        cluster.thaw(old)
    cluster.wait_healthy()
    roles = cluster.roles()
    if roles.get(old.name, ("",))[0] == "leader" or new.name not in roles:
        outcome.problems.append(f"{old.name} came back as {roles.get(old.name)}, not a standby")
    timings["whole"] = time.monotonic()


def _probe_health(
    server: LiveServer, outcome: Outcome, old: Member, cluster: PatroniCluster
) -> None:
    if any(m.accepts_writes(timeout=1) for m in cluster.members if m is not old):
        return  # already failed over: nothing to see
    started = time.monotonic()
    try:
        outcome.readyz_during = httpx.get(f"{server.base_url}/readyz", timeout=30).status_code
    except httpx.TransportError:
        outcome.readyz_during = 0
    outcome.readyz_seconds = time.monotonic() - started
    outcome.healthz_during = httpx.get(f"{server.base_url}/healthz", timeout=5).status_code
    if any(m.accepts_writes(timeout=1) for m in cluster.members if m is not old):
        outcome.readyz_during = 0  # another member took over meanwhile: inconclusive


def _measure(outcome: Outcome, answers: list[Answer], timings: dict[str, float]) -> None:
    blow, new_primary = timings["blow"], timings["new_primary"]
    outcome.acknowledged = sum(a.acknowledged for a in answers)
    outcome.unavailable = sum(a.status == 503 for a in answers)
    outcome.transport_errors = sum(a.status == 0 for a in answers)
    # The longest stretch without an acknowledged write from the blow on: a killed or
    # frozen leader's starts at the blow; a cleanly stopped one's once its PostgreSQL
    # stopped taking writes (Patroni shuts it down first).
    after = [
        blow,
        *sorted(
            a.answered for a in answers if a.acknowledged and blow < a.answered <= timings["whole"]
        ),
    ]
    outcome.window = max(
        (later - earlier for earlier, later in itertools.pairwise(after)),
        default=float("inf"),
    )
    # Answers of requests in flight while no primary took writes.
    during = [a for a in answers if a.answered >= blow and a.sent <= new_primary]
    outcome.longest_answer = max((a.answered - a.sent for a in during), default=0.0)
    acks = sorted(a.answered for a in answers if a.acknowledged)
    before = sum(blow - 3.0 <= t < blow for t in acks) / 3.0
    outcome.full_throughput = float("inf")
    start = blow
    while start < (acks[-1] if acks else blow):
        if sum(start <= t < start + 1.0 for t in acks) >= 0.8 * before:
            outcome.full_throughput = start + 1.0 - blow
            break
        start += 0.1


def _check_webhooks(engine: sa.Engine, receiver: Receiver, outcome: Outcome) -> None:
    """Every event of the outbox is delivered and reached the receiver."""
    deadline = time.monotonic() + 90
    while True:
        with engine.connect() as conn:
            events = set(conn.execute(sa.select(webhook_events.c.event_id)).scalars())
            pending = conn.execute(
                sa.select(sa.func.count()).where(webhook_deliveries.c.status != "delivered")
            ).scalar_one()
        with receiver.lock:
            received = {item.event["event_id"] for item in receiver.received}
        if (not pending and events <= received) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    outcome.events = len(events)
    outcome.events_delivered = len(events & received)
    if pending or not events <= received:
        outcome.problems.append(
            f"webhooks: {pending} deliveries pending, "
            f"{len(events - received)} events never received"
        )
    _check_webhook_order(engine, receiver, outcome)


def _check_webhook_order(engine: sa.Engine, receiver: Receiver, outcome: Outcome) -> None:
    """13.3: the events of one session (or sessionless run) reached the receiver in commit
    order (a delivery's ``seq`` within its ``ordering``), at least once: an event received
    again is a redelivery of the same body, and only its first arrival is ordered."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(webhook_deliveries.c.ordering, webhook_deliveries.c.event_id).order_by(
                webhook_deliveries.c.seq
            )
        ).all()
    with receiver.lock:
        arrivals = [(item.event["event_id"], item.body) for item in receiver.received]
    first: dict[str, bytes] = {}
    for event_id, body in arrivals:
        if first.setdefault(event_id, body) != body:
            outcome.problems.append(f"webhooks: event {event_id} redelivered with another body")
    outcome.redeliveries = len(arrivals) - len(first)
    position = {event_id: index for index, event_id in enumerate(first)}
    committed: dict[str, list[str]] = {}
    for ordering, event_id in rows:
        committed.setdefault(ordering, []).append(event_id)
    outcome.orderings = len(committed)
    outcome.longest_ordering = max((len(ids) for ids in committed.values()), default=0)
    for ordering, ids in committed.items():
        arrived = sorted((i for i in ids if i in position), key=position.__getitem__)
        if arrived != [i for i in ids if i in position]:
            outcome.problems.append(
                f"webhooks: the events of {ordering} first arrived out of commit order"
            )


def _db_verify(url: str, outcome: Outcome) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "db", "verify", "--database-url", url],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        outcome.problems.append(f"db verify: {done.stdout[-800:]}{done.stderr[-800:]}")


def summary(rounds: list[Outcome], pick: Callable[[Outcome], float]) -> tuple[float, float]:
    """Median and max of a figure over rounds."""
    values = [pick(r) for r in rounds]
    return statistics.median(values), max(values)
