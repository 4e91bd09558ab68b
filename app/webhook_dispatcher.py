"""The webhook dispatcher (CONTRACT.md 13.3): one per service worker, in background threads.

It claims due deliveries (``SqlStore.claim_webhook_deliveries``: a lease per delivery,
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
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

import httpx

from runtime_store_client import DeliveryStatus, StoreError

from .domain import webhooks as rules
from .observability.metrics import WEBHOOK_DELIVERIES, WEBHOOK_OLDEST_PENDING
from .storage import Claimed, SqlStore, WebhookConfig

log = logging.getLogger("runtime_store.webhooks")

USER_AGENT: Final = "runtime-store-webhooks/1"
#: How long a claimed delivery stays leased: one attempt (10 s) and a margin. A worker
#: killed mid-attempt delays that delivery by at most this much.
LEASE_SECONDS: Final = 15.0
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
class WebhookDispatcher:
    """Claims and sends due deliveries until stopped."""

    store: SqlStore
    retry_hours: float
    poll_seconds: float = 0.5
    concurrency: int = 4
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _pool: concurrent.futures.ThreadPoolExecutor | None = None

    def start(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(
            self.concurrency, thread_name_prefix="webhook-send"
        )
        self._thread = threading.Thread(target=self._loop, name="webhooks", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Stop claiming; attempts in flight finish (at most 10 s each)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
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
        with self._client() as client:
            delay = 0.0
            while not self._stop.wait(delay):
                delay = self.poll_seconds
                try:
                    if time.monotonic() >= gauge_due:
                        gauge_due = time.monotonic() + _GAUGE_SECONDS
                        self._measure()
                    claimed = self.store.claim_webhook_deliveries(
                        self.concurrency, int(LEASE_SECONDS * 1000)
                    )
                    if claimed:
                        futures = [self._pool.submit(self._attempt, c, client) for c in claimed]
                        concurrent.futures.wait(futures)
                        delay = 0.0
                except (StoreError, OSError, RuntimeError):
                    log.exception("webhook dispatch failed; retrying")
                except Exception:  # the database went away: sqlalchemy's errors
                    log.exception("webhook dispatch failed; retrying")

    def _measure(self) -> None:
        oldest = self.store.oldest_pending_webhook_ms()
        WEBHOOK_OLDEST_PENDING.set(0 if oldest is None else max(0.0, time.time() - oldest / 1000))

    def _attempt(self, claimed: Claimed, client: httpx.Client) -> None:
        try:
            status_code = send(self.store.webhook_config, claimed, client)
        except Exception:
            log.exception("webhook %s: attempt broke", claimed.event_id)
            status_code = None
        try:
            outcome = self.store.record_webhook_attempt(
                claimed, status_code, self.retry_hours * 3600
            )
        except Exception:
            log.exception(
                "webhook %s: outcome not stored; retried after its lease", claimed.event_id
            )
            return
        WEBHOOK_DELIVERIES.labels(_OUTCOME_LABEL[outcome]).inc()
