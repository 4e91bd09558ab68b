"""Reads from PostgreSQL streaming replicas, with read-your-writes (CONTRACT.md 14).

One primary takes every write; ``RUNTIME_STORE_READ_DATABASE_URLS`` names hot standbys
that may serve reads. A *position* is a WAL location (an LSN, as an integer of bytes):

* Every write answers the primary's position after its commit (``positions.note_write``);
  the clients keep the highest they have seen and send it with their reads.
* A read of a request that carries a position is served by a replica only once that
  replica has replayed past it (``pg_last_wal_replay_lsn()``), else by the primary.
* A read without one may be served by a replica whose lag is under ``max_lag_seconds``:
  the replica has replayed everything the primary had ``max_lag_seconds`` ago. The set
  keeps samples of the primary's position, taken at most every quarter of that window, and
  asks the replica for the oldest sample still inside the window: a replica that replays
  nothing while the primary writes (replay paused, stream broken) drops out within the
  window, and one that has caught up with an idle primary stays in.
* A list page carries in its cursor the position of the database that served it
  (``Tx.read_position``): the next page is served by a database at least as far, so a row
  that matched during the whole paging is seen exactly once, whichever database serves it.

A replica's replay position only grows, so a known one is a safe lower bound: a read
whose position is below it goes to that replica without asking it again. A replica that
fails is skipped for ``DOWN_SECONDS`` and its read is served by the primary: a replica
never changes an answer, only who served it. Live tails, waits, writes and everything
outside an HTTP read (the CLI, the background sweeps, tokens) use the primary.

What a replica was last found to be is its *state*: ``ok`` (a hot standby that answers),
``unreachable`` (no connection: refused, timed out, shutting down or starting up),
``not_in_recovery`` (it answers but is a primary, e.g. the primary itself or a promoted
standby: ``pg_last_wal_replay_lsn()`` is null), ``failing`` (it connects but its reads
fail: a recovery conflict cancelled one, an error), or ``unknown`` before it is asked. A
skipped replica's state is the reason of its skip in the metrics; ``serve`` prints each
replica's state at start (``probe``) and ``/readyz`` reports them (``check_stale``).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine

from app.observability import metrics
from app.storage.database.engines import create_engine, normalize_url
from app.storage.database.positions import current, primary_position
from runtime_store_client import StoreError

log = logging.getLogger("runtime_store.replicas")

#: Seconds a replica that failed is left out before it is tried again.
DOWN_SECONDS: Final = 5.0
#: Least seconds between two questions to one replica about its replay position.
REFRESH_SECONDS: Final = 0.005
#: Seconds a replica has to accept a connection: a replica that is down costs its read
#: this long once, then ``DOWN_SECONDS`` of being skipped.
CONNECT_TIMEOUT_SECONDS: Final = 2

#: A replica's states (module docstring); the last three are also why it is skipped.
UNKNOWN: Final = "unknown"
OK: Final = "ok"
UNREACHABLE: Final = "unreachable"
NOT_IN_RECOVERY: Final = "not_in_recovery"
FAILING: Final = "failing"
#: Why a replica that answers is skipped: it has not replayed far enough.
BEHIND: Final = "behind"
#: SQLSTATEs of a server that is shutting down or starting up: no connection to be had.
_GOING_AWAY: Final = ("57P01", "57P02", "57P03")

T = TypeVar("T")
R = TypeVar("R")

PRIMARY: Final = "primary"
#: What ``ReplicaSet.serve`` answers when the primary is to serve the read.
NOT_SERVED: Final = object()
_REPLAYED_SQL: Final = "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint"
_MAX_POSITION: Final = 2**64 - 1


class NotInRecovery(RuntimeError):
    """The replica answers but replays nothing: it is a primary, not a standby."""


def database_of(url: URL) -> str:
    """``host:port/database`` of a URL: what the banner, the logs and ``/readyz`` name a
    replica by (never its user or password)."""
    host = url.host or str(url.query.get("host") or "local socket")
    if ":" in host and not host.startswith("["):  # an IPv6 address
        host = f"[{host}]"
    return f"{host}:{url.port or 5432}/{url.database or ''}"


def database_of_url(url: str) -> str:
    """``database_of`` a URL given as text."""
    return database_of(normalize_url(url))


def state_of(exc: BaseException) -> str:
    """The state a replica is in when asking it failed with ``exc``."""
    if isinstance(exc, NotInRecovery):
        return NOT_IN_RECOVERY
    if isinstance(exc, sa.exc.DBAPIError):
        # No SQLSTATE: the server never answered (refused, timed out, cut off).
        sqlstate = getattr(exc.orig, "sqlstate", None) or ""
        if not sqlstate or sqlstate.startswith("08") or sqlstate in _GOING_AWAY:
            return UNREACHABLE
    return FAILING


def _detail(exc: BaseException) -> str:
    """The first line of why asking a replica failed."""
    cause = exc.orig if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None else exc
    text = str(cause).strip()
    return text.splitlines()[0].strip() if text else type(cause).__name__


class Replica:
    """One read replica, with what is known of its replay position and its state."""

    def __init__(self, name: str, engine: Engine) -> None:
        self.name = name
        self.engine = engine
        #: ``host:port/database``, no password (``database_of``).
        self.database = database_of(engine.url)
        self.replayed = 0
        self.checked_at = float("-inf")
        self.down_until = float("-inf")
        #: What it was last found to be (module docstring), why, and when.
        self.state = UNKNOWN
        self.detail = ""
        self.found_at = float("-inf")
        self._lock = threading.Lock()

    def found(self, state: str, detail: str = "") -> None:
        """Note what the replica was just found to be."""
        self.found_at = time.monotonic()
        if state != self.state or detail != self.detail:
            self.state, self.detail = state, detail
            metrics.replica_found(self.name, state)

    def refresh(self) -> None:
        """Ask the replica how far it has replayed (a connection error propagates;
        ``NotInRecovery`` if it is a primary)."""
        self.checked_at = time.monotonic()
        with self.engine.connect() as conn:
            value = conn.exec_driver_sql(_REPLAYED_SQL).scalar()
        if value is None:  # not in recovery: a primary is not a replica of this one
            raise NotInRecovery("pg_last_wal_replay_lsn() is null: a primary, not a standby")
        with self._lock:
            self.replayed = max(self.replayed, int(value))
        self.found(OK)

    def read_position(self, conn: Connection) -> int:
        """How far this replica has replayed, asked on ``conn`` after a read: an upper
        bound of what the read saw."""
        value = int(conn.exec_driver_sql(_REPLAYED_SQL).scalar_one())
        with self._lock:
            self.replayed = max(self.replayed, value)
        return value


class ReplicaSet:
    """The read replicas of one store and the routing of its reads (module docstring)."""

    def __init__(
        self, primary: Engine, replicas: Sequence[Engine], *, max_lag_seconds: float
    ) -> None:
        self.primary = primary
        self.replicas = [Replica(f"replica-{i}", engine) for i, engine in enumerate(replicas, 1)]
        self.max_lag_seconds = max_lag_seconds
        self._samples: deque[tuple[float, int]] = deque()
        self._samples_lock = threading.Lock()
        self._next = itertools.count()
        self._checking: set[str] = set()
        self._checking_lock = threading.Lock()
        metrics.report_replicas(self)  # /readyz names them and their states

    def choose(self, at_least: int) -> Replica | None:
        """A replica fit to serve a read needing ``at_least`` (0: any within the lag), or
        ``None``: the primary serves it. Counted in the metrics either way."""
        needed = at_least if at_least > 0 else self._lag_floor()
        now = time.monotonic()
        start = next(self._next)
        count = len(self.replicas)
        for i in range(count):
            replica = self.replicas[(start + i) % count]
            if replica.down_until > now:
                metrics.replica_skipped(replica.name, _left_out_because(replica))
                continue
            if replica.replayed < needed and now - replica.checked_at >= REFRESH_SECONDS:
                try:
                    replica.refresh()
                except Exception as exc:
                    self.failed(replica, exc)
                    continue
            if replica.replayed >= needed:
                return replica
            metrics.replica_skipped(replica.name, BEHIND)
        return None

    def serve(
        self,
        operation: Callable[[T], R],
        at_least: int,
        run_on: Callable[[Callable[[T], R], Replica], R],
    ) -> R | object:
        """``run_on(operation, replica)`` on a replica fit for this read, if the read is
        an HTTP request's that allows one; ``NOT_SERVED``: the primary serves it, also
        when the replica's read failed (a value the database refuses fails there the same
        way, and is mapped to its contract error as every primary read's is)."""
        request = current()
        if request is None or not request.routed:
            return NOT_SERVED
        replica = self.choose(max(at_least, request.min_position))
        if replica is not None:
            try:
                result = run_on(operation, replica)
            except StoreError:
                raise
            except Exception as exc:
                if is_replica_failure(exc):
                    self.failed(replica, exc)
            else:
                replica.found(OK)
                metrics.read_served(replica.name)
                return result
        metrics.read_served(PRIMARY)
        return NOT_SERVED

    def failed(self, replica: Replica, exc: BaseException) -> None:
        """Leave ``replica`` out for a while; its read goes to the primary."""
        self._leave_out(replica, exc)
        metrics.replica_skipped(replica.name, _left_out_because(replica))

    def _leave_out(self, replica: Replica, exc: BaseException) -> None:
        """Note why asking ``replica`` failed, and skip it for ``DOWN_SECONDS``."""
        state, detail = state_of(exc), _detail(exc)
        if replica.down_until < time.monotonic():
            log.warning(
                "read replica %s (%s) is %s, left out for %.0f s: %s",
                replica.name,
                replica.database,
                state.replace("_", " "),
                DOWN_SECONDS,
                detail,
            )
        replica.found(state, detail)
        replica.down_until = time.monotonic() + DOWN_SECONDS

    def check_stale(self) -> None:
        """Ask each replica not asked for ``DOWN_SECONDS`` (and not left out) again, one
        check of a replica at a time: ``/readyz`` reports what they are now. A replica that
        does not answer costs this call up to its connect timeout."""
        now = time.monotonic()
        for replica in self.replicas:
            if replica.down_until > now or now - replica.found_at < DOWN_SECONDS:
                continue
            with self._checking_lock:
                if replica.name in self._checking:
                    continue
                self._checking.add(replica.name)
            try:
                replica.refresh()
            except Exception as exc:
                self._leave_out(replica, exc)
            finally:
                with self._checking_lock:
                    self._checking.discard(replica.name)

    def statuses(self) -> list[dict[str, str]]:
        """What each replica was last found to be (``metrics.ReplicaStates``)."""
        return [
            {
                "replica": replica.name,
                "database": replica.database,
                "state": replica.state,
                "detail": replica.detail,
            }
            for replica in self.replicas
        ]

    def _lag_floor(self) -> int:
        """The position a replica must have replayed to be within the lag: the oldest
        sample of the primary's position taken inside the window (module docstring)."""
        now = time.monotonic()
        window_start = now - self.max_lag_seconds
        with self._samples_lock:
            while self._samples and self._samples[0][0] < window_start:
                self._samples.popleft()
            fresh = bool(self._samples) and (now - self._samples[-1][0] < self.max_lag_seconds / 4)
            floor = self._samples[0][1] if self._samples else None
        if fresh and floor is not None:
            return floor
        try:
            taken_at = time.monotonic()  # before asking: the answer is at least as far
            with self.primary.connect() as conn:
                position = primary_position(conn)
        except Exception:
            return _MAX_POSITION if floor is None else floor
        with self._samples_lock:
            self._samples.append((taken_at, position))
            return self._samples[0][1]


def _left_out_because(replica: Replica) -> str:
    """The reason a replica left out is skipped: the state it was found in."""
    return replica.state if replica.state in (UNREACHABLE, NOT_IN_RECOVERY) else FAILING


@dataclass(frozen=True)
class Probed:
    """What ``probe`` found a replica to be."""

    database: str  # host:port/database, no password
    state: str  # ok, unreachable, not_in_recovery or failing
    detail: str


def probe(url: str) -> Probed:
    """Connect to the replica at ``url`` once and say what it is (``serve``'s banner)."""
    engine = create_engine(
        url, pool_size=1, max_overflow=0, connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS}
    )
    database = database_of(engine.url)
    try:
        with engine.connect() as conn:
            if conn.exec_driver_sql(_REPLAYED_SQL).scalar() is None:
                raise NotInRecovery("pg_last_wal_replay_lsn() is null: a primary, not a standby")
    except Exception as exc:
        return Probed(database, state_of(exc), _detail(exc))
    finally:
        engine.dispose()
    return Probed(database, OK, "")


class PrimaryReads:
    """The reads of a store with no replica of its own beside a store with replicas (the
    service's blocking store: transcripts, exports): the primary serves each, and a routed
    HTTP read is counted as the primary's, as ``ReplicaSet.serve`` counts it."""

    def serve(
        self,
        operation: Callable[[T], R],  # noqa: ARG002
        at_least: int,  # noqa: ARG002
        run_on: Callable[[Callable[[T], R], Replica], R],  # noqa: ARG002
    ) -> R | object:
        request = current()
        if request is not None and request.routed:
            metrics.read_served(PRIMARY)
        return NOT_SERVED


def replica_set(
    primary: Engine,
    replicas: Sequence[Engine],
    *,
    max_lag_seconds: float,
    counted: bool = False,
) -> ReplicaSet | PrimaryReads | None:
    """The replica set of a store on ``primary``; without replicas ``None``, or with
    ``counted`` a ``PrimaryReads`` (its reads counted as the primary's)."""
    if not replicas:
        return PrimaryReads() if counted else None
    if primary.dialect.name != "postgresql":
        raise ValueError("read replicas need a PostgreSQL primary")
    return ReplicaSet(primary, replicas, max_lag_seconds=max_lag_seconds)


def is_replica_failure(exc: BaseException) -> bool:
    """Whether a replica's read failed for a reason the primary does not share: the
    replica is down or restarting, or replay cancelled the read (a recovery conflict,
    SQLSTATE 40001). Invalid values and the read deadline fail the same everywhere."""
    if isinstance(exc, sa.exc.TimeoutError):
        return True
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    sqlstate = getattr(exc.orig, "sqlstate", None) or ""
    return exc.connection_invalidated or sqlstate == "40001" or not sqlstate.startswith("22")
