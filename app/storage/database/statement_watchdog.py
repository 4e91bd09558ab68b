"""How a statement past its deadline, or of a call whose client went away, is stopped:
``RunningStatement`` (one read or write in progress on one connection) and ``WATCHDOG``
(one thread per process that sends PostgreSQL's cancel requests). SQLite needs no
thread: its progress handler, on the reading thread, checks ``RunningStatement.sqlite_check``.
``read_deadlines`` decides which statements are watched and how a stop is answered.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final

import psycopg

from app.storage.database.server_probes import answers, sever_connection

log = logging.getLogger("runtime_store.interrupts")

#: Longest the watchdog waits for PostgreSQL to take a cancel request (its server has
#: just answered a probe).
_CANCEL_TIMEOUT_SECONDS: Final = 5.0

TIMEOUT: Final = "timeout"
CANCELED: Final = "canceled"
#: The server did not answer a probe: the connection was cut.
UNRESPONSIVE: Final = "unresponsive"


class RunningStatement:
    """One read in progress on one DBAPI connection."""

    __slots__ = ("_dbapi", "_lock", "deadline", "done", "patience", "reason", "sqlite", "write")

    def __init__(
        self, dbapi: Any, deadline: float | None, *, sqlite: bool, write: bool = False
    ) -> None:
        self._dbapi = dbapi
        self._lock = threading.Lock()
        self.deadline = deadline
        #: Seconds until a write whose server still answers is looked at again.
        self.patience = 0.0 if deadline is None else max(0.05, deadline - time.monotonic())
        self.sqlite = sqlite
        #: A write is never stopped for its deadline, only cut when its server is gone.
        self.write = write
        self.done = False
        #: Why it was stopped (``TIMEOUT``, ``CANCELED``); ``None`` while it may run.
        self.reason: str | None = None

    def stop(self, reason: str) -> None:
        """Stop the statement running (any thread)."""
        if self.sqlite:  # the progress handler, on the reading thread, sees it
            if self.reason is None:
                self.reason = reason
            return
        if self.done:
            return
        if threading.current_thread() is not WATCHDOG.thread:
            WATCHDOG.stop_now(self, reason)  # a cancel request may block: not here
            return
        # Probed outside the lock: a read that ends meanwhile never waits for the probe.
        answering = self.reason != UNRESPONSIVE and answers(self._dbapi)
        with self._lock:  # the read cannot end (and free its connection) meanwhile
            if self.done:
                return
            if not answering:
                # A frozen server takes no cancel request either: cut the connection.
                self.reason = UNRESPONSIVE
                sever_connection(self._dbapi)
                return
            if self.write:
                return  # the server answers: the write runs on, watched again later
            if self.reason is None:
                self.reason = reason
            self._cancel()

    def _cancel(self) -> None:
        try:
            if isinstance(self._dbapi, psycopg.AsyncConnection):
                # The service's connection, in use on its event loop: libpq's blocking
                # cancel request, sent from this thread (its server just answered).
                self._dbapi.cancel()
            else:
                self._dbapi.cancel_safe(timeout=_CANCEL_TIMEOUT_SECONDS)
        except Exception as exc:  # the statement runs on; its own end frees it
            log.warning("could not cancel a read statement: %s", exc)

    def finish(self) -> None:
        with self._lock:
            self.done = True

    def sqlite_check(self) -> int:
        """SQLite's progress handler: non-zero stops the statement."""
        if self.reason is not None:
            return 1
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.reason = TIMEOUT
            return 1
        return 0


class Watchdog:
    """One thread per process that sends PostgreSQL's cancel requests: when a running
    read's deadline passes, and at once for a cancelled call.

    It knows the reads running now (at most one per database thread) and wakes at the
    earliest of their deadlines, or every ``TICK`` seconds while any runs: a read that
    starts only tells it when its deadline comes before that wake-up (never, with the
    service's one timeout above ``TICK``), so reads cost it a set insertion and removal.
    Idle for ``PARK`` seconds, it sleeps until the next read starts."""

    TICK: Final = 0.05
    PARK: Final = 1.0
    #: Seconds between cancel requests for a stopped read that is still running.
    RESEND: Final = 0.05

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running: set[RunningStatement] = set()
        self._urgent: list[tuple[RunningStatement, str]] = []
        #: When the thread wakes next (``inf``: parked until a read starts).
        self._wakes = float("inf")
        self.thread: threading.Thread | None = None

    def watch(self, read: RunningStatement) -> None:
        if read.deadline is None:
            return
        with self._cond:
            self._running.add(read)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="read-deadlines", daemon=True)
                self.thread.start()
            elif read.deadline < self._wakes:
                self._cond.notify()

    def forget(self, read: RunningStatement) -> None:
        with self._cond:
            self._running.discard(read)

    def stop_now(self, read: RunningStatement, reason: str) -> None:
        with self._cond:
            self._urgent.append((read, reason))
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="read-deadlines", daemon=True)
                self.thread.start()
            else:
                self._cond.notify()

    def _due(self) -> list[tuple[RunningStatement, str]]:
        """Wait for the next deadline or cancel; the reads to stop then."""
        idle_since = time.monotonic()
        with self._cond:
            while True:
                now = time.monotonic()
                due = self._urgent
                self._urgent = []
                for read in self._running:
                    if read.deadline is not None and read.deadline <= now:
                        due.append((read, TIMEOUT))
                self._running.difference_update(read for read, _ in due)
                if due:
                    return due
                if self._running:
                    idle_since = now
                    earliest = min(r.deadline for r in self._running if r.deadline is not None)
                    self._wakes = min(earliest, now + self.TICK)
                elif now - idle_since < self.PARK:
                    self._wakes = now + self.TICK
                else:
                    self._wakes = float("inf")
                    self._cond.wait()
                    idle_since = time.monotonic()
                    continue
                self._cond.wait(max(0.0, self._wakes - now))

    def _run(self) -> None:
        while True:
            for read, reason in self._due():
                try:
                    read.stop(reason)
                except Exception:  # the watchdog never dies
                    log.exception("could not stop a statement past its deadline")
                if not read.done:
                    # PostgreSQL drops a cancel request that finds no statement running (the
                    # read was between two, or had not sent its first yet on a busy
                    # machine): ask again until the read has ended. A write whose server
                    # answers is looked at again a deadline later.
                    again = self.RESEND if read.reason is not None else read.patience
                    self.watch_again(read, time.monotonic() + again)

    def watch_again(self, read: RunningStatement, deadline: float) -> None:
        with self._cond:
            if not read.done:
                read.deadline = deadline
                self._running.add(read)


WATCHDOG: Final = Watchdog()
