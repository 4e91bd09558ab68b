"""The webhook dispatcher (CONTRACT.md 13.3): one per service worker, in background threads.

It claims due deliveries (``SqlStore.webhook_queue.claim``: a lease per delivery,
``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so replicas and workers claim disjoint rows and
each delivery has one attempt in flight), sends each outside any transaction, and stores
the outcome (delivered on a 2xx within 10 s; else retried with backoff and jitter until
the retry window closes, then failed). A claim never holds a delivery whose ordering
(its session, or its sessionless run) has an earlier one pending, so one subscription
receives one session's events in commit order.

Sending guards against server-side request forgery at the moment of sending too: the
host is resolved, every address must be public unless the host is on the allow list,
and the connection goes to an address that was checked (the URL's host stays in the
``Host`` header and in TLS's server name), so a name re-pointed at an internal address
after the check is not followed. Redirects are not followed; the response body is never
read.

The database may go away (a restart, a failover, connections cut): a failed poll is
logged once, and polls back off (doubling up to ``MAX_BACKOFF_SECONDS``) until one
succeeds, which is logged too. An attempt whose outcome cannot be stored retries storing
it while its lease holds, so a short outage costs no second send; past the lease the
delivery is sent again (at least once). Settled deliveries are pruned by a thread of
their own (``webhooks/settled_pruning.py``), one process of all replicas at a time.
"""

from __future__ import annotations

import concurrent.futures
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

import httpx

from runtime_store_client import DeliveryStatus

from .domain import webhooks as rules
from .observability.metrics import WEBHOOK_DELIVERIES, WEBHOOK_OLDEST_PENDING
from .storage import Claimed, SqlStore, WebhookConfig

log = logging.getLogger("runtime_store.webhooks")

USER_AGENT: Final = "runtime-store-webhooks/1"
#: How long a claimed delivery stays leased: one attempt (10 s) and a margin. A worker
#: killed mid-attempt delays that delivery by at most this much.
LEASE_SECONDS: Final = 15.0
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


def _host_for_url(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def send(config: WebhookConfig, claimed: Claimed, client: httpx.Client) -> int | None:
    """One attempt: the receiver's status code, or ``None`` when nothing was answered (a
    refused address, no connection, a timeout)."""
    target = rules.parse_url(claimed.url)
    addresses = list(config.resolve(target.host))
    refused = rules.refused_addresses(target, config.allowed_hosts, lambda _host: addresses)
    if refused or not addresses:
        log.warning(
            "webhook %s: not sent to %s: %s resolves to a refused address (%s)",
            claimed.event_id,
            claimed.webhook_id,
            target.host,
            ", ".join(refused) or "none",
        )
        return None
    body = claimed.body.encode()
    timestamp = int(time.time())
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": claimed.event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": rules.sign(claimed.secret, claimed.event_id, timestamp, body),
    }
    parts = urlsplit(claimed.url)
    headers["host"] = parts.netloc
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    for address in addresses:  # each one checked above
        pinned = parts._replace(netloc=f"{_host_for_url(address)}:{target.port}").geturl()
        try:
            with client.stream(
                "POST", pinned, content=body, headers=headers, extensions=extensions
            ) as response:
                return response.status_code  # the body is never read
        except httpx.ConnectError:
            continue
        except httpx.HTTPError as exc:
            log.info("webhook %s: attempt failed: %s", claimed.event_id, exc)
            return None
    return None


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
    """Claims and sends due deliveries until stopped; prunes settled ones older than
    ``keep_settled_seconds``."""

    store: SqlStore
    retry_hours: float
    keep_settled_seconds: float = 3 * 86_400.0
    poll_seconds: float = 0.5
    concurrency: int = 4
    prune_seconds: float = PRUNE_SECONDS
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _pool: concurrent.futures.ThreadPoolExecutor | None = None

    def start(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(
            self.concurrency, thread_name_prefix="webhook-send"
        )
        self._threads = [
            threading.Thread(target=self._loop, name="webhooks", daemon=True),
            threading.Thread(target=self._prune_loop, name="webhook-prune", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Stop claiming; attempts in flight finish (at most 10 s each)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _client(self) -> httpx.Client:
        return httpx.Client(
            follow_redirects=False,
            trust_env=False,  # never through a proxy from the environment
            timeout=httpx.Timeout(rules.ATTEMPT_TIMEOUT_SECONDS),
        )

    def _loop(self) -> None:
        assert self._pool is not None
        gauge_due = 0.0
        backoff = Backoff(self.poll_seconds)
        with self._client() as client:
            delay = 0.0
            while not self._stop.wait(delay):
                delay = self.poll_seconds
                try:
                    if time.monotonic() >= gauge_due:
                        self._measure()
                        gauge_due = time.monotonic() + _GAUGE_SECONDS
                    leased_at = time.monotonic()
                    claimed = self.store.webhook_queue.claim(
                        self.concurrency, int(LEASE_SECONDS * 1000)
                    )
                except Exception:  # the database went away: StoreError, sqlalchemy's, OSError
                    delay = backoff.failed("dispatch")
                    continue
                backoff.succeeded("dispatch")
                if claimed:
                    lease_ends = leased_at + LEASE_SECONDS
                    futures = [
                        self._pool.submit(self._attempt, c, client, lease_ends) for c in claimed
                    ]
                    concurrent.futures.wait(futures)
                    delay = 0.0

    def _measure(self) -> None:
        oldest = self.store.webhook_queue.oldest_pending_ms()
        WEBHOOK_OLDEST_PENDING.set(0 if oldest is None else max(0.0, time.time() - oldest / 1000))

    def _attempt(self, claimed: Claimed, client: httpx.Client, lease_ends: float) -> None:
        try:
            status_code = send(self.store.webhook_queue.config, claimed, client)
        except Exception:
            log.exception("webhook %s: attempt broke", claimed.event_id)
            status_code = None
        outcome = self._store_outcome(claimed, status_code, lease_ends)
        if outcome is not None:
            WEBHOOK_DELIVERIES.labels(_OUTCOME_LABEL[outcome]).inc()

    def _store_outcome(
        self, claimed: Claimed, status_code: int | None, lease_ends: float
    ) -> DeliveryStatus | None:
        """The attempt's outcome, stored; ``None`` when it is not this attempt's to store
        (its lease was lost) or the database stayed away until the lease ended (the
        delivery is then claimed and sent again)."""
        backoff = Backoff(self.poll_seconds)
        while True:
            try:
                outcome = self.store.webhook_queue.record_attempt(
                    claimed, status_code, self.retry_hours * 3600
                )
            except Exception:
                pause = backoff.failed(f"outcome of {claimed.event_id}")
                if time.monotonic() + pause >= lease_ends or self._stop.wait(pause):
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
