"""The service's Prometheus metrics, correct whether one process serves or several.

``runtime-store serve`` with several workers sets ``PROMETHEUS_MULTIPROC_DIR`` to a fresh
directory before the workers start (``worker_metrics_directory``): prometheus-client then
keeps every value in a memory-mapped file per worker, and ``/metrics``, whichever worker
answers it, adds up the files of all of them (counters and histograms of dead workers
included, so totals never go back; the live gauges only of the workers alive, thanks to
``forget_worker``). Without that variable (one worker, ``create_app`` in tests, uvicorn
started by hand) the values live in the process and are read from it.

The mode is fixed when prometheus-client is first imported, so the variable must be set
before a worker imports anything of the service; ``render`` asks prometheus-client which
mode it is in instead of reading the environment again.

Every label has a bounded set of values: operation IDs (or a fixed label for paths no
route serves), status classes, outcome and problem codes, fixed reasons.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, Protocol

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
    values,
)
from prometheus_client.exposition import choose_encoder

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
#: The ``operation`` label of a request no route of the API served (unknown path, static
#: asset, a body refused before routing).
OTHER: Final = "other"

#: Seconds; from a cached read to a transaction that waited for locks or a retry.
LATENCY_BUCKETS: Final = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)

# --- requests (app/observability/requests.py) --------------------------------------

REQUESTS: Final = Counter(
    "runtime_store_http_requests",
    "Requests answered, by operation ID and status class (2xx, 4xx, ...); a stream counts "
    "once, when it ends.",
    ["operation", "status"],
)
REQUEST_SECONDS: Final = Histogram(
    "runtime_store_http_request_duration_seconds",
    "Time from a request's arrival to its last response byte; for an event stream, to its "
    "first byte (a stream stays open as long as its subscriber wants).",
    ["operation"],
    buckets=LATENCY_BUCKETS,
)
OUTCOMES: Final = Counter(
    "runtime_store_outcomes",
    "What the API answered: per record written, inserted or exact_retry; per problem "
    "response, its code (event_conflict, run_conflict, unavailable, ...).",
    ["operation", "outcome"],
)

# --- the database (app/storage) ------------------------------------------------------

TRANSACTION_SECONDS: Final = Histogram(
    "runtime_store_db_transaction_duration_seconds",
    "One attempt of one database transaction, from taking a connection to its commit or "
    "rollback; mode is read or write.",
    ["mode"],
    buckets=LATENCY_BUCKETS,
)
TRANSACTION_RETRIES: Final = Counter(
    "runtime_store_db_transaction_retries",
    "Transactions attempted again: transient (connection lost, serialisation failure, "
    "deadlock, SQLite busy), pool_timeout (no pooled connection became free), integrity (a "
    "concurrent writer stored the same key first).",
    ["reason"],
)
TRANSACTIONS_UNAVAILABLE: Final = Counter(
    "runtime_store_db_transactions_unavailable",
    "Transactions given up after their last attempt: answered 503 unavailable.",
)
READS_SERVED: Final = Counter(
    "runtime_store_db_reads_served",
    "Reads of HTTP requests by the database that served them: primary, or replica-N in "
    "the order of RUNTIME_STORE_READ_DATABASE_URLS (only with read replicas configured).",
    ["database"],
)
REPLICA_SKIPS: Final = Counter(
    "runtime_store_db_replica_skips",
    "Times a read replica was passed over for a read: behind (not replayed far enough for "
    "the read's position or within the allowed lag); left out a while because it is "
    "unreachable (no connection), not_in_recovery (a primary, not a standby) or failing "
    "(its reads fail: a recovery conflict, an error).",
    ["replica", "reason"],
)
#: What a read replica may be found to be (app/storage/database/replicas.py).
REPLICA_STATES: Final = ("ok", "unreachable", "not_in_recovery", "failing")
REPLICA_STATE: Final = Gauge(
    "runtime_store_db_replica_state",
    "1 for the state each read replica was last found in, 0 for the others: ok (a hot "
    "standby that answers), unreachable, not_in_recovery (a primary, not a standby), "
    "failing; the most of the live workers.",
    ["replica", "state"],
    multiprocess_mode="livemax",
)
POOL_SIZE: Final = Gauge(
    "runtime_store_db_pool_size",
    "Connections each pool keeps, summed over the live workers.",
    multiprocess_mode="livesum",
)
POOL_MAX_OVERFLOW: Final = Gauge(
    "runtime_store_db_pool_max_overflow",
    "Connections each pool may open beyond its size, summed over the live workers.",
    multiprocess_mode="livesum",
)
POOL_IN_USE: Final = Gauge(
    "runtime_store_db_pool_in_use",
    "Connections checked out of the pools now, summed over the live workers.",
    multiprocess_mode="livesum",
)
POOL_OVERFLOW: Final = Gauge(
    "runtime_store_db_pool_overflow",
    "Connections in use beyond the pool size now (from the overflow), summed over the "
    "live workers.",
    multiprocess_mode="livesum",
)
PURGED_ROWS: Final = Counter(
    "runtime_store_purged_rows",
    "Rows deleted by purges, by table (run_records, checkpoints, memory_events).",
    ["table"],
)

# --- live streams (the live tail, CONTRACT.md 11.3) ----------------------------------

LIVE_STREAMS: Final = Gauge(
    "runtime_store_live_streams",
    "Live record streams open now, by stream (run or session), summed over the live workers.",
    ["stream"],
    multiprocess_mode="livesum",
)
STREAMS_REFUSED: Final = Counter(
    "runtime_store_streams_refused",
    "Live record streams refused because the worker served as many as it allows.",
    ["stream"],
)

# --- webhook delivery (CONTRACT.md 13.3) ----------------------------------------------

WEBHOOK_DELIVERIES: Final = Counter(
    "runtime_store_webhook_deliveries",
    "Webhook delivery attempts by outcome: delivered (a 2xx), retried (another attempt "
    "follows), failed (the retry window closed).",
    ["outcome"],
)
WEBHOOK_OLDEST_PENDING: Final = Gauge(
    "runtime_store_webhook_oldest_pending_seconds",
    "Age of the oldest pending webhook delivery (0: none), as the live workers last saw it.",
    multiprocess_mode="livemax",
)

# --- the build -------------------------------------------------------------------------

BUILD_INFO: Final = Gauge(
    "runtime_store_build_info",
    "Always 1; the labels name the running version.",
    ["version", "python"],
    multiprocess_mode="max",
)


def set_build_info(version: str) -> None:
    BUILD_INFO.labels(version, platform.python_version()).set(1)


# --- the storage layer's hooks ---------------------------------------------------------

_READ_SECONDS: Final = TRANSACTION_SECONDS.labels("read")
_WRITE_SECONDS: Final = TRANSACTION_SECONDS.labels("write")


def transaction_finished(*, write: bool, seconds: float) -> None:
    (_WRITE_SECONDS if write else _READ_SECONDS).observe(seconds)


def transaction_retried(reason: str) -> None:
    TRANSACTION_RETRIES.labels(reason).inc()


def transaction_unavailable() -> None:
    TRANSACTIONS_UNAVAILABLE.inc()


def read_served(database: str) -> None:
    READS_SERVED.labels(database).inc()


def replica_skipped(replica: str, reason: str) -> None:
    REPLICA_SKIPS.labels(replica, reason).inc()


def replica_found(replica: str, state: str) -> None:
    """``replica`` was found ``state`` (one of ``REPLICA_STATES``)."""
    for each in REPLICA_STATES:
        REPLICA_STATE.labels(replica, each).set(1 if each == state else 0)


# --- read replicas' states, for /readyz ----------------------------------------------------


class ReplicaStates(Protocol):
    """What the read replicas of a store were last found to be (the storage layer's
    ``ReplicaSet``), as ``/readyz`` reports them without importing storage."""

    def check_stale(self) -> None:
        """Ask again each replica not asked for a while (blocking: up to a connect timeout)."""

    def statuses(self) -> list[dict[str, str]]:
        """Each replica: ``replica`` (replica-N), ``database`` (host:port/name, no
        password), ``state`` (unknown, or one of ``REPLICA_STATES``), ``detail``."""


#: The replica sets of this process's stores (one per service worker), as long as they live.
_REPLICA_SETS: Final[weakref.WeakSet[Any]] = weakref.WeakSet()


def report_replicas(states: ReplicaStates) -> None:
    """Let ``/readyz`` report ``states``, for as long as they exist."""
    _REPLICA_SETS.add(states)


def replica_sets() -> list[ReplicaStates]:
    """The replica sets of this process (none without read replicas)."""
    return list(_REPLICA_SETS)


def rows_purged(table: str, count: int) -> None:
    if count > 0:
        PURGED_ROWS.labels(table).inc(count)


# --- exposition ------------------------------------------------------------------------


def multiprocess_mode() -> bool:
    """Whether values live in ``PROMETHEUS_MULTIPROC_DIR`` (fixed at prometheus-client's
    import, whatever the environment says now)."""
    return values.ValueClass is not values.MutexValue


def render(accept: str = "") -> tuple[bytes, str]:
    """The ``/metrics`` body and its content type, in the format the scraper's ``Accept``
    header asks for (Prometheus text 0.0.4 when it names none): every worker's values
    when several serve, else this process's (with its process and Python collectors)."""
    encode, content_type = choose_encoder(accept)
    if multiprocess_mode():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return encode(registry), content_type
    return encode(REGISTRY), content_type


# --- serve's workers ---------------------------------------------------------------------


@contextmanager
def worker_metrics_directory(workers: int) -> Iterator[str | None]:
    """For several workers, the directory their values are kept in, set in the environment
    they inherit: a fresh temporary one, removed on exit, unless ``PROMETHEUS_MULTIPROC_DIR``
    is already set (then it is used as it is, and must be emptied before each start). One
    worker keeps its values in itself: ``None``."""
    given = os.environ.get(MULTIPROC_ENV)
    if workers <= 1 or given:
        yield given
        return
    path = tempfile.mkdtemp(prefix="runtime-store-metrics-")
    os.environ[MULTIPROC_ENV] = path
    try:
        yield path
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(path, ignore_errors=True)


def forget_worker(pid: int | None) -> None:
    """A worker is gone: its live gauges (pool, streams) stop counting. Its counters and
    histograms stay, so totals never go back."""
    if pid is not None and os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
