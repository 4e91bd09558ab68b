"""The webhook dispatcher (CONTRACT.md 13.3): one per service worker, an asyncio loop in a
thread of its own, and a pruning thread.

It claims due deliveries (``SqlStore.webhook_queue.claim``: a lease per delivery,
``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so replicas and workers claim disjoint rows and
each delivery has one attempt in flight), sends each outside any transaction, and stores
the outcome (delivered on a whole 2xx answer within 10 s; else retried with backoff and
jitter until the retry window closes, then failed). A claim never holds a delivery whose
ordering (its session, or its sessionless run) has an earlier one pending, so one
subscription receives one session's events in commit order.

**Subscriptions never wait for each other.** Every claimed delivery is an attempt of its
own (an asyncio task); the loop claims again as soon as it has room (up to
``concurrency`` attempts in flight per worker, at most ``per_subscription`` of them for one
subscription, so a slow subscriber holds at most that many and never all), never waiting
for a batch. Attempts of one ordering never run at once: the claim is what orders them.

Each attempt, its deadline and its address checks, is ``sending.send``.

**An attempt never outlives its lease.** A claim leases its deliveries for
``LEASE_SECONDS`` (15 s); an attempt's deadline is also at most ``LEASE_SECONDS -
LEASE_MARGIN_SECONDS`` after the moment before the claim began, on this process's
monotonic clock, so its connection is closed at least 4 s before another dispatcher
(another worker or replica, whose clock may disagree by less than that) may claim the
delivery again: two dispatchers never send one delivery at the same time. The lease's end
is the fencing token of the outcome: an attempt whose lease was lost (expired and claimed
again) never stores its outcome.

The database may go away (a restart, a failover, connections cut): a failed poll is
logged once, and polls back off (doubling up to ``MAX_BACKOFF_SECONDS``) until one
succeeds, which is logged too. An attempt whose outcome cannot be stored retries storing
it while its lease holds, so a short outage costs no second send; past the lease the
delivery is sent again (at least once). Settled deliveries are pruned by a thread of
their own (``webhooks/settled_pruning.py``), one process of all replicas at a time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Final

import httpx

from app.domain import webhooks as rules
from app.observability.metrics import WEBHOOK_DELIVERIES, WEBHOOK_OLDEST_PENDING
from app.storage import Claimed, SqlStore
from app.webhook_delivery.sending import send
from runtime_store_client import DeliveryStatus

log = logging.getLogger("runtime_store.webhooks")

#: How long a claimed delivery stays leased: one attempt (10 s) and a margin. A worker
#: killed mid-attempt delays that delivery by at most this much.
LEASE_SECONDS: Final = 15.0
#: An attempt's connection is closed at least this long before its lease ends (measured
#: from before the claim began): room for clocks of replicas that disagree by less, and
#: for storing the outcome while the lease still holds.
LEASE_MARGIN_SECONDS: Final = 4.0
#: Attempts in flight at once per worker, and for one subscription.
CONCURRENCY: Final = 32
PER_SUBSCRIPTION: Final = 4
#: Threads of the dispatcher's database calls (claims, outcomes, the gauge).
DATABASE_THREADS: Final = 2
#: The longest pause between polls while the database fails.
MAX_BACKOFF_SECONDS: Final = 5.0
#: How often settled deliveries are pruned.
PRUNE_SECONDS: Final = 60.0
_GAUGE_SECONDS: Final = 5.0
_OUTCOME_LABEL: Final = {
    DeliveryStatus.DELIVERED: "delivered",
    DeliveryStatus.PENDING: "retried",
    DeliveryStatus.FAILED: "failed",
}


def attempt_seconds(now: float, leased_at: float) -> float:
    """How long an attempt starting at ``now`` may take, its lease claimed from
    ``leased_at`` on (both monotonic): 10 s, or less when the lease would end sooner than
    its margin allows."""
    return min(
        rules.ATTEMPT_TIMEOUT_SECONDS, leased_at + LEASE_SECONDS - LEASE_MARGIN_SECONDS - now
    )


@dataclass
class Backoff:
    """Pauses between polls while they fail: the poll interval, doubling up to a cap; the
    first failure of a run and the recovery are logged, the failures between are not."""

    poll_seconds: float
    failures: int = 0
    since: float = 0.0

    def failed(self, what: str) -> float:
        if self.failures == 0:
            self.since = time.monotonic()
            log.warning(
                "webhook %s failed; backing off until the database answers", what, exc_info=True
            )
        self.failures += 1
        return float(min(MAX_BACKOFF_SECONDS, self.poll_seconds * 2.0**self.failures))

    def succeeded(self, what: str) -> None:
        if self.failures:
            log.info(
                "webhook %s resumed after %d failed attempts (%.1f s)",
                what,
                self.failures,
                time.monotonic() - self.since,
            )
            self.failures = 0


@dataclass
class WebhookDispatcher:
    """Claims and sends due deliveries until stopped, each attempt on its own (see the
    module); prunes settled ones older than ``keep_settled_seconds``."""

    store: SqlStore
    retry_hours: float
    keep_settled_seconds: float = 3 * 86_400.0
    poll_seconds: float = 0.5
    concurrency: int = CONCURRENCY
    per_subscription: int = PER_SUBSCRIPTION
    prune_seconds: float = PRUNE_SECONDS
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None
    _stopping: asyncio.Event | None = None
    _ready: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self._threads = [
            threading.Thread(target=self._run, name="webhooks", daemon=True),
            threading.Thread(target=self._prune_loop, name="webhook-prune", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self._ready.wait(5.0)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop claiming; attempts in flight finish (at most 10 s each) and store their
        outcomes."""
        self._stop.set()
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(self._signal_stop)
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _signal_stop(self) -> None:
        if self._stopping is not None and self._wake is not None:
            self._stopping.set()
            self._wake.set()

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,  # never through a proxy from the environment
            # Each read is bounded too; the attempt's deadline bounds all of it.
            timeout=httpx.Timeout(rules.ATTEMPT_TIMEOUT_SECONDS),
            # Attempts in flight are bounded by ``concurrency``: none waits for the pool.
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=self.concurrency),
        )

    def _run(self) -> None:
        try:
            asyncio.run(self._dispatch())
        except Exception:
            log.exception("webhook dispatcher stopped")
        finally:
            self._ready.set()

    async def _dispatch(self) -> None:
        loop = asyncio.get_running_loop()
        self._wake, self._stopping = asyncio.Event(), asyncio.Event()
        self._loop = loop
        self._ready.set()
        if self._stop.is_set():
            return
        database = concurrent.futures.ThreadPoolExecutor(
            DATABASE_THREADS, thread_name_prefix="webhook-db"
        )
        # Resolving a host blocks a thread: one per attempt in flight, so a receiver whose
        # name resolves slowly delays no other's.
        resolver = concurrent.futures.ThreadPoolExecutor(
            self.concurrency, thread_name_prefix="webhook-resolve"
        )
        try:
            async with self._client() as client:
                await self._claim_loop(client, database, resolver)
        finally:
            database.shutdown(wait=False, cancel_futures=True)
            resolver.shutdown(wait=False, cancel_futures=True)

    async def _claim_loop(
        self,
        client: httpx.AsyncClient,
        database: concurrent.futures.Executor,
        resolver: concurrent.futures.Executor,
    ) -> None:
        """Claims while there is room, starts each claimed delivery's attempt, and waits for
        the poll interval or for an attempt to end (which may make the next of its ordering
        due), never for a batch."""
        assert self._wake is not None
        assert self._stopping is not None
        loop = asyncio.get_running_loop()
        wake = self._wake
        in_flight: dict[str, int] = {}  # attempts per subscription
        tasks: set[asyncio.Task[None]] = set()
        backoff = Backoff(self.poll_seconds)
        gauge_due = 0.0

        def ended(task: asyncio.Task[None], webhook_id: str) -> None:
            tasks.discard(task)
            in_flight[webhook_id] -= 1
            if not in_flight[webhook_id]:
                del in_flight[webhook_id]
            wake.set()

        while not self._stop.is_set():
            wake.clear()  # an attempt ending from here on wakes the wait below
            room = self.concurrency - len(tasks)
            if room <= 0:
                await _wait(wake, self.poll_seconds)
                continue
            try:
                if loop.time() >= gauge_due:
                    await loop.run_in_executor(database, self._measure)
                    gauge_due = loop.time() + _GAUGE_SECONDS
                leased_at = loop.time()
                claimed = await loop.run_in_executor(
                    database,
                    functools.partial(
                        self.store.webhook_queue.claim,
                        room,
                        int(LEASE_SECONDS * 1000),
                        per_webhook=self.per_subscription,
                        busy=dict(in_flight),
                    ),
                )
            except Exception:  # the database went away: StoreError, sqlalchemy's, OSError
                await _wait(self._stopping, backoff.failed("dispatch"))
                continue
            backoff.succeeded("dispatch")
            for item in claimed:
                in_flight[item.webhook_id] = in_flight.get(item.webhook_id, 0) + 1
                task = asyncio.create_task(
                    self._attempt(item, client, database, resolver, leased_at),
                    name=f"webhook {item.event_id}",
                )
                tasks.add(task)
                task.add_done_callback(functools.partial(ended, webhook_id=item.webhook_id))
            if not claimed:
                await _wait(wake, self.poll_seconds)
        if tasks:  # stopping: attempts in flight end by their deadlines, then store
            await asyncio.wait(set(tasks))

    def _measure(self) -> None:
        oldest = self.store.webhook_queue.oldest_pending_ms()
        WEBHOOK_OLDEST_PENDING.set(0 if oldest is None else max(0.0, time.time() - oldest / 1000))

    async def _attempt(
        self,
        claimed: Claimed,
        client: httpx.AsyncClient,
        database: concurrent.futures.Executor,
        resolver: concurrent.futures.Executor,
        leased_at: float,
    ) -> None:
        loop = asyncio.get_running_loop()
        seconds = attempt_seconds(loop.time(), leased_at)
        try:
            status_code = await send(
                self.store.webhook_queue.config, claimed, client, seconds, resolver=resolver
            )
        except Exception:
            log.exception("webhook %s: attempt broke", claimed.event_id)
            status_code = None
        outcome = await self._store_outcome(
            claimed, status_code, leased_at + LEASE_SECONDS, database
        )
        if outcome is not None:
            WEBHOOK_DELIVERIES.labels(_OUTCOME_LABEL[outcome]).inc()

    async def _store_outcome(
        self,
        claimed: Claimed,
        status_code: int | None,
        lease_ends: float,
        database: concurrent.futures.Executor,
    ) -> DeliveryStatus | None:
        """The attempt's outcome, stored; ``None`` when it is not this attempt's to store
        (its lease was lost) or the database stayed away until the lease ended (the
        delivery is then claimed and sent again)."""
        assert self._stopping is not None
        loop = asyncio.get_running_loop()
        backoff = Backoff(self.poll_seconds)

        def record() -> DeliveryStatus | None:
            return self.store.webhook_queue.record_attempt(
                claimed, status_code, self.retry_hours * 3600
            )

        while True:
            try:
                outcome = await loop.run_in_executor(database, record)
            except Exception:
                pause = backoff.failed(f"outcome of {claimed.event_id}")
                if loop.time() + pause >= lease_ends or await _wait(self._stopping, pause):
                    log.warning(
                        "webhook %s: outcome not stored; sent again after its lease",
                        claimed.event_id,
                    )
                    return None
                continue
            backoff.succeeded(f"outcome of {claimed.event_id}")
            if outcome is None:
                log.info("webhook %s: lease lost; another attempt decides", claimed.event_id)
            return outcome

    def _prune_loop(self) -> None:
        """Settled deliveries older than ``keep_settled_seconds``, every ``prune_seconds``
        (the first after a random part of it, so replicas started together spread out)."""
        delay = random.uniform(0, self.prune_seconds)
        backoff = Backoff(self.prune_seconds)
        while not self._stop.wait(delay):
            delay = self.prune_seconds
            try:
                pruned = self.store.webhook_queue.prune(
                    int(self.keep_settled_seconds * 1000), self._stop.is_set
                )
            except Exception:
                backoff.failed("pruning")
                continue
            backoff.succeeded("pruning")
            if pruned is not None and pruned.deliveries:
                log.info(
                    "webhooks: pruned %d settled deliveries and %d events",
                    pruned.deliveries,
                    pruned.events,
                )


async def _wait(event: asyncio.Event, seconds: float) -> bool:
    """Wait until ``event`` is set or ``seconds`` passed; whether it was set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)
    return event.is_set()
