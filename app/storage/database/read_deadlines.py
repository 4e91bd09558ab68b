"""Bounded reads (CONTRACT.md 2.10): a deadline on every read, and reads that end when
their caller no longer wants them.

Every ``UnitOfWork.read`` runs under a deadline, ``RUNTIME_STORE_READ_TIMEOUT_SECONDS``
after it got its connection (``create_engine(read_timeout_seconds=…)`` keeps it on the
engine as the execution option ``READ_TIMEOUT_OPTION``). A read is a few statements (a
page, a load), so the deadline of the read bounds each of them. Past it the statement
running is stopped in the database and the read fails with ``unavailable`` at once: a
stopped statement is not a transient failure, so the unit of work does not run it again.
Writes are not stopped at their deadline, only cut when their server no longer
answers (below).

A server that stops answering (a frozen machine: its kernel still takes the bytes, so
TCP never notices) is found the same way: a statement past its deadline first probes
its server (``_answers``: an SSL request, which any live postmaster answers at once, on a
connection of its own). One that does not answer within ``PROBE_TIMEOUT_SECONDS`` has its
connection cut (the socket shut down): the statement fails at once, SQLAlchemy drops the
pool's connections to it, and the next connection of a multi-host URL finds the new
primary (CONTRACT.md 16). Writes are watched too (``unanswered_bound``): past the
deadline a write whose server still answers runs on (it waits for a lock, it is long),
a write whose server does not is cut the same way and answered ``unavailable``; its exact
retry answers its original IDs.

A caller may also give up on its reads (``Canceler``, set for a call with ``calling``):
the HTTP layer cancels the store call of a request whose client disconnected
(``app/api/calls.py``). Its running statement is stopped the same way, and any read
it would start afterwards fails at once.

How a statement is stopped differs by database:

* PostgreSQL: a cancel request for the backend (psycopg's ``cancel_safe``), sent by one
  watchdog thread per process when a deadline passes or a caller cancels. The server
  ends the statement (SQLSTATE 57014); nothing of it keeps running. A cancel request that
  finds no statement running (the read was between two, or had not sent its first) is
  dropped by the server, so the watchdog asks again until the read has ended. A connection
  whose statement was cancelled is not returned to the pool: a cancel request that reached the
  server late must never meet another caller's statement.
* SQLite: a progress handler, installed on the connection for the read, checked every
  ``SQLITE_CHECK_OPS`` virtual-machine instructions: past the deadline or once cancelled
  it stops the statement (``interrupted``). It runs on the reading thread, so no other
  thread ever touches the connection.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, TypeVar

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.observability import metrics
from app.storage.database.statement_watchdog import (
    CANCELED,
    TIMEOUT,
    UNRESPONSIVE,
    WATCHDOG,
    RunningStatement,
)
from runtime_store_client import UnavailableError

T = TypeVar("T")

#: Engine execution option holding the read deadline in seconds (``None``: no deadline).
READ_TIMEOUT_OPTION: Final = "runtime_store_read_timeout"
DEFAULT_READ_TIMEOUT_SECONDS: Final = 5.0
#: SQLite virtual-machine instructions between two checks of a read's deadline: about
#: 0.1 ms of work, so a check costs well under 1 % of a read and stops it within 1 ms.
SQLITE_CHECK_OPS: Final = 10_000


class DatabaseUnresponsive(UnavailableError):
    """A statement's server stopped answering: its connection was cut (``unavailable``,
    not retried by the service: the request answers within its bound, the client
    retries)."""


def read_timeout_of(engine: Engine) -> float | None:
    """The engine's read deadline in seconds; ``None``: reads are not bounded."""
    value = engine.get_execution_options().get(READ_TIMEOUT_OPTION, DEFAULT_READ_TIMEOUT_SECONDS)
    return None if value is None else float(value)


def is_interrupted(exc: BaseException) -> bool:
    """Whether a database error says a statement was stopped: cancelled or timed out on
    PostgreSQL (57014 ``query_canceled``), interrupted on SQLite. Not transient."""
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if getattr(exc.orig, "sqlstate", None) == "57014":
        return True
    return (
        isinstance(exc, sa.exc.OperationalError)
        and type(exc.orig).__module__.startswith("sqlite3")
        and "interrupted" in str(exc.orig).lower()
    )


# --- who may cancel -----------------------------------------------------------------------


class Canceler:
    """The reads of one call: ``cancel`` stops the one running and refuses later ones.
    Thread-safe: cancelled from the event loop, read on a database thread."""

    __slots__ = ("_lock", "_running", "canceled", "started")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[RunningStatement] = set()
        self.canceled = False
        #: When the call began (monotonic): its retries end a read deadline later.
        self.started = time.monotonic()

    def cancel(self) -> None:
        with self._lock:
            self.canceled = True
            running = list(self._running)
        for read in running:
            read.stop(CANCELED)

    def _add(self, read: RunningStatement) -> bool:
        with self._lock:
            if self.canceled:
                return False
            self._running.add(read)
            return True

    def _remove(self, read: RunningStatement) -> None:
        with self._lock:
            self._running.discard(read)


_CALL: ContextVar[Canceler | None] = ContextVar("runtime_store_canceler", default=None)


def calling(canceler: Canceler | None) -> None:
    """Make ``canceler`` the one of the reads of this context (``contextvars``: run it in
    the context the call runs in)."""
    _CALL.set(canceler)


@contextmanager
def reads_of(canceler: Canceler | None) -> Iterator[None]:
    """Make ``canceler`` the one of the reads of this context for the block (a call
    awaited in its caller's own context: a greenlet runs in it)."""
    token = _CALL.set(canceler)
    try:
        yield
    finally:
        _CALL.reset(token)


def current() -> Canceler | None:
    """The canceler of the call running in this context, if any."""
    return _CALL.get()


@contextmanager
def uncancelable() -> Iterator[None]:
    """A block of the current call that runs to its end whatever its caller does (the
    cleanup of an import that failed because its client went away)."""
    token = _CALL.set(None)
    try:
        yield
    finally:
        _CALL.reset(token)


def check_not_canceled() -> None:
    """``unavailable`` when the caller of this call has given up (long jobs check between
    their steps: an import between its slices)."""
    canceler = _CALL.get()
    if canceler is not None and canceler.canceled:
        raise UnavailableError("the request was cancelled: its client went away")


# --- one read -----------------------------------------------------------------------------


@contextmanager
def _watched(
    conn: Connection,
    timeout: float | None,
    canceler: Canceler | None,
    *,
    write: bool = False,
    transaction: bool = True,
) -> Iterator[None]:
    """The statements sent on ``conn`` in the block, stopped past the deadline or on
    cancel (a write: cut only when its server stops answering). A ``transaction`` of the
    unit of work stopped so (past its deadline, or its server cut) is answered 503 at
    once, not retried: counted in ``runtime_store_db_transactions_unavailable_total``
    (not when its caller went away: nobody is answered)."""
    sqlite = conn.dialect.name == "sqlite"
    deadline = None if timeout is None else time.monotonic() + timeout
    dbapi = conn.connection.driver_connection
    read = RunningStatement(dbapi, deadline, sqlite=sqlite, write=write)
    if canceler is not None and not canceler._add(read):
        raise UnavailableError("the request was cancelled: its client went away")
    if sqlite:
        dbapi.set_progress_handler(read.sqlite_check, SQLITE_CHECK_OPS)  # type: ignore[union-attr]
    else:
        WATCHDOG.watch(read)
    failed = False
    try:
        yield
    except (sa.exc.DBAPIError, psycopg.Error) as exc:
        failed = True
        if read.reason is None and not is_interrupted(exc):
            raise
        if transaction and read.reason != CANCELED:
            metrics.transaction_unavailable()
        raise _stopped(read.reason, timeout) from exc
    except BaseException:
        failed = True
        raise
    finally:
        read.finish()
        if canceler is not None:
            canceler._remove(read)
        if sqlite:
            dbapi.set_progress_handler(None, SQLITE_CHECK_OPS)  # type: ignore[union-attr]
        else:
            WATCHDOG.forget(read)
            if failed and read.reason is not None:
                # A cancel request may still be on its way to this backend: never pool it.
                conn.invalidate()


def _run_bounded(
    operation: Callable[[Any], T], tx: Any, timeout: float | None, canceler: Canceler | None
) -> T:
    """``operation(tx)`` with its statements stopped past the deadline or on cancel."""
    with _watched(tx.conn, timeout, canceler):
        return operation(tx)


@contextmanager
def bounded_statements(conn: Connection, engine: Engine) -> Iterator[None]:
    """The statements sent on ``conn`` in the block (reads outside the unit of work: a
    readiness check) under the engine's read deadline; its server cut when it stops
    answering."""
    with _watched(conn, read_timeout_of(engine), None, transaction=False):
        yield


@contextmanager
def unanswered_bound(conn: Connection, engine: Engine) -> Iterator[None]:
    """A write on ``conn`` (its statements and its commit) whose server stops answering is
    cut once it has run for the engine's read deadline (``DatabaseUnresponsive``); a slow
    write on a server that answers runs to its end. PostgreSQL only; else as it is."""
    timeout = read_timeout_of(engine)
    if timeout is None or conn.dialect.name == "sqlite":
        yield
        return
    with _watched(conn, timeout, None, write=True):
        yield


def _stopped(reason: str | None, timeout: float | None) -> UnavailableError:
    if reason == CANCELED:
        return UnavailableError("the read was stopped: its client went away")
    if reason == UNRESPONSIVE:
        return DatabaseUnresponsive(
            "the database stopped answering"
            + (f" for {timeout:g} s" if timeout is not None else "")
            + "; its connection was cut: retry"
        )
    if reason == TIMEOUT and timeout is not None:
        return timed_out(timeout)
    return UnavailableError("the database stopped the read's statement; retry")


def timed_out(timeout: float) -> UnavailableError:
    """The error of a read stopped at its deadline."""
    return UnavailableError(
        f"the read ran longer than its {timeout:g} s timeout "
        "(RUNTIME_STORE_READ_TIMEOUT_SECONDS); it was stopped"
    )


def bounded(operation: Callable[[Any], T], engine: Engine) -> Callable[[Any], T]:
    """``operation`` (a read of the unit of work, given its ``Tx``) under the engine's
    read deadline and the current call's canceler; as it is when it has neither."""
    timeout = read_timeout_of(engine)
    canceler = _CALL.get()
    if timeout is None and canceler is None:
        return operation

    return functools.partial(_run_bounded, operation, timeout=timeout, canceler=canceler)
