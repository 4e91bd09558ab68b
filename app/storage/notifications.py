"""Wake-ups for the live tail (CONTRACT.md 11.3): which runs and sessions just got records.

A wake-up only says "read again"; the stream itself is always read from the log, from the
subscriber's cursor, so a lost, duplicated or early wake-up costs a read and never a record.
Each worker process has one ``Notifications``: one listener fanned out to its subscribers.

* PostgreSQL: one ``LISTEN`` connection per worker, while it has streams. Triggers
  (migration 0008) send a ``NOTIFY`` per (session, run) from the writing transaction, so
  every listening replica hears every commit, after it is visible. On a (re)connect every
  subscriber is woken (notifications may have been missed meanwhile). A worker with no
  stream does not listen (every commit would otherwise wake every worker's event loop,
  about 0.08 ms of CPU per append per worker, docs/performance.md): the first subscriber
  starts the listener and waits until it listens (``ready``) before its first read, so no
  commit falls between the two; the listener stops ``idle_seconds`` after the last
  stream ended.
* SQLite: writes of this process wake their subscribers as they commit (``committed``);
  writes of other processes are found by a short poll of ``PRAGMA data_version`` on a
  connection of its own, then of the ``run_records`` rows added since the last poll.

Subscribers also re-read on their own every ``safety_seconds``: the bound on what any
missed wake-up (a dropped listener, a purge by another SQLite process) can cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from collections.abc import Awaitable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Final

import psycopg
from sqlalchemy.engine import Engine

from .dialects import dialect_of

log = logging.getLogger("runtime_store.tail")

CHANNEL: Final = "runtime_store_records"
#: The listener connection's ``application_name`` (``pg_stat_activity``), with the pid of
#: its worker.
LISTENER_NAME: Final = "runtime-store live tail {pid}"
_SEPARATOR: Final = "\x1f"
#: Most rows one SQLite poll reads to learn which runs changed; beyond, everyone is woken.
_POLL_ROWS: Final = 10_000
_MAX_BACKOFF: Final = 5.0

Key = tuple[str, str]


class Subscription:
    """One stream's wake-up; ``close`` it when the stream ends."""

    def __init__(self, hub: Notifications, keys: tuple[Key, ...]) -> None:
        self._hub = hub
        self.keys = keys
        self._event = asyncio.Event()
        #: The hub's ``generation`` when this subscription was last woken.
        self.woken = 0

    def wake(self) -> None:
        self.woken = self._hub.generation
        self._event.set()

    @property
    def closing(self) -> bool:
        """The worker is stopping: the stream should end now (the client reconnects)."""
        return self._hub.stopping

    async def wait(self, timeout: float, stop: Awaitable[object] | None = None) -> int:
        """Until woken (at once if woken since the last wait), ``timeout`` seconds, or
        ``stop`` completes. Returns the hub generation a read must have started at (or
        after) to see every commit that woke this subscription."""
        if stop is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), timeout)
        else:
            waits = {asyncio.ensure_future(self._event.wait()), asyncio.ensure_future(stop)}
            _, pending = await asyncio.wait(
                waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            for task in pending:
                task.cancel()
        woken = self.woken if self._event.is_set() else self._hub.generation
        self._event.clear()
        return woken

    def close(self) -> None:
        self._hub.unsubscribe(self)


class Notifications:
    """The live-tail wake-ups of one worker; ``start`` and ``stop`` with the app."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_streams: int,
        safety_seconds: float,
        poll_seconds: float,
        idle_seconds: float = 30.0,
    ) -> None:
        self._engine = engine
        #: PostgreSQL's NOTIFY tells every worker what each commit wrote (a listener);
        #: SQLite's commits of other processes are found by polling.
        self._database_notifies = dialect_of(engine).notifies_commits
        self.max_streams = max_streams
        self.safety_seconds = safety_seconds
        self._poll_seconds = poll_seconds
        self._subscribers: dict[Key, set[Subscription]] = {}
        self._count = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._idle_seconds = idle_seconds
        #: PostgreSQL: set while a stream wants the listener, and while it listens.
        self._wanted = asyncio.Event()
        self._listening = asyncio.Event()
        #: Set while the listener's last connection attempt has failed: a stream then reads
        #: at once (its first read meets the same database; its safety re-reads cover the
        #: rest) instead of waiting for a listener that cannot start.
        self._failing = asyncio.Event()
        #: When the last stream ended (the listener stops ``idle_seconds`` later).
        self._idle_since = 0.0
        self.stopping = False
        #: Counts wake-ups: a read started at generation ``g`` sees every commit whose
        #: wake-up came at ``g`` or before (``Subscription.wait``).
        self.generation = 0

    @property
    def streams(self) -> int:
        return self._count

    # --- subscribers --------------------------------------------------------------------

    def subscribe_run(self, run_id: str, session_id: str) -> Subscription | None:
        """Wake-ups for a run stream (its records, its session's purge); ``None`` when the
        worker already serves ``max_streams`` streams."""
        keys: tuple[Key, ...] = (("run", run_id),)
        if session_id:
            keys += (("purge", session_id),)
        return self._subscribe(keys)

    def subscribe_session(self, session_id: str) -> Subscription | None:
        """Wake-ups for a session stream (its runs' records, its purge)."""
        return self._subscribe((("session", session_id),))

    def _subscribe(self, keys: tuple[Key, ...]) -> Subscription | None:
        if self._count >= self.max_streams or self.stopping:
            return None
        subscription = Subscription(self, keys)
        for key in keys:
            self._subscribers.setdefault(key, set()).add(subscription)
        self._count += 1
        self._wanted.set()
        return subscription

    async def ready(self, timeout: float) -> None:
        """Until the listener hears every commit from now on, at most ``timeout`` seconds
        (a database that does not answer: the stream's safety re-reads cover it). A
        subscriber awaits it between subscribing and its first read. SQLite's poller and
        this process's own commits need no wait."""
        if self._task is None or not self._database_notifies:
            return
        if self._listening.is_set() or self._failing.is_set():
            return
        waits = {
            asyncio.ensure_future(self._listening.wait()),
            asyncio.ensure_future(self._failing.wait()),
        }
        _, pending = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()

    def unsubscribe(self, subscription: Subscription) -> None:
        removed = False
        for key in subscription.keys:
            subscribers = self._subscribers.get(key)
            if subscribers is not None and subscription in subscribers:
                subscribers.discard(subscription)
                removed = True
                if not subscribers:
                    del self._subscribers[key]
        if removed:
            self._count -= 1
            if not self._count and self._loop is not None:
                self._idle_since = self._loop.time()

    # --- wake-ups -----------------------------------------------------------------------

    def wake(self, changes: Iterable[tuple[str, str]]) -> None:
        """Wake the subscribers of (session_id, run_id) pairs; run "" means a purge."""
        self.generation += 1
        for session_id, run_id in changes:
            if run_id:
                self._wake_key(("run", run_id))
                if session_id:
                    self._wake_key(("session", session_id))
            elif session_id:
                self._wake_key(("session", session_id))
                self._wake_key(("purge", session_id))

    def _wake_key(self, key: Key) -> None:
        for subscription in self._subscribers.get(key, ()):
            subscription.wake()

    def wake_all(self) -> None:
        self.generation += 1
        for subscribers in self._subscribers.values():
            for subscription in subscribers:
                subscription.wake()

    def committed(self, changes: set[tuple[str, str]]) -> None:
        """A write of this process committed (any thread): wake its subscribers."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self.wake, changes)

    # --- lifetime -----------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self._database_notifies:
            self._task = asyncio.create_task(self._listen_postgres(), name="tail-listener")
        else:
            self._task = asyncio.create_task(self._poll_sqlite(), name="tail-poller")

    async def stop(self) -> None:
        """End every stream (their clients reconnect elsewhere) and the listener."""
        self.stopping = True
        self.wake_all()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # --- PostgreSQL ---------------------------------------------------------------------

    def _conninfo(self) -> str:
        url = self._engine.url.set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    def _idle(self) -> bool:
        """No stream for ``idle_seconds``: the listener may stop. Checked and acted on with
        no ``await`` in between, so a new subscriber either kept it or sees it stopped."""
        assert self._loop is not None
        if self._count or self._loop.time() - self._idle_since < self._idle_seconds:
            return False
        self._listening.clear()
        self._failing.clear()  # the next stream waits for a fresh attempt
        self._wanted.clear()
        return True

    async def _listen_postgres(self) -> None:
        backoff = 0.05
        check = min(1.0, self._idle_seconds)
        while True:
            await self._wanted.wait()
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._conninfo(),
                    autocommit=True,
                    application_name=LISTENER_NAME.format(pid=os.getpid()),
                    # A silently dead server is noticed, so the listener reconnects.
                    keepalives=1,
                    keepalives_idle=10,
                    keepalives_interval=5,
                    keepalives_count=3,
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    backoff = 0.05
                    self._failing.clear()
                    self._listening.set()
                    self.wake_all()  # what committed while nobody listened
                    while not self._idle():
                        async for note in conn.notifies(timeout=check):
                            session_id, _, run_id = note.payload.partition(_SEPARATOR)
                            self.wake(((session_id, run_id),))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure: reconnect, never die
                self._listening.clear()
                self._failing.set()
                log.warning("live-tail listener lost its connection (%s); reconnecting", exc)
                self.wake_all()
                self._idle()  # nobody left to listen for: wait for a stream, not the server
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF)

    # --- SQLite -------------------------------------------------------------------------

    async def _poll_sqlite(self) -> None:
        database = self._engine.url.database
        if not database or database == ":memory:":
            return  # one process, one connection: ``committed`` wakes everyone
        loop = asyncio.get_running_loop()
        # sqlite3 connections belong to the thread that made them: one thread for the poll.
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tail-poll")
        poller = _SqlitePoller(database)
        try:
            while True:
                try:
                    changes = await loop.run_in_executor(executor, poller.poll)
                except sqlite3.Error as exc:
                    log.warning("live-tail poll failed (%s); retrying", exc)
                    changes = None
                    poller.close()
                    poller = _SqlitePoller(database)
                if isinstance(changes, set):
                    self.wake(changes)
                elif changes == "all":
                    self.wake_all()
                await asyncio.sleep(self._poll_seconds)
        finally:
            executor.submit(poller.close)
            executor.shutdown(wait=False)


class _SqlitePoller:
    """Finds the runs whose records other connections committed since the last poll."""

    def __init__(self, database: str) -> None:
        self._database = database
        self._conn: sqlite3.Connection | None = None
        self._version = -1
        self._last_rowid = 0

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(
                f"file:{self._database}?mode=ro", uri=True, isolation_level=None
            )
            self._version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            self._last_rowid = self._conn.execute(
                "SELECT coalesce(max(rowid), 0) FROM run_records"
            ).fetchone()[0]
        return self._conn

    def poll(self) -> set[tuple[str, str]] | str | None:
        """The (session, run) pairs with new records, ``"all"`` when too many to read,
        ``None`` when nothing committed."""
        conn = self._connect()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return None
        self._version = version
        conn.execute("BEGIN")
        try:
            rows = conn.execute(
                "SELECT rowid, coalesce(session_id, ''), run_id FROM run_records "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (self._last_rowid, _POLL_ROWS + 1),
            ).fetchall()
            top = conn.execute("SELECT coalesce(max(rowid), 0) FROM run_records").fetchone()[0]
        finally:
            conn.execute("COMMIT")
        # Purges delete rows, and a new row may then reuse a rowid at or below the last
        # one seen: when the top went down, everyone reads again.
        went_down = top < self._last_rowid
        self._last_rowid = top
        if went_down or len(rows) > _POLL_ROWS:
            return "all"
        return {(session_id, run_id) for _, session_id, run_id in rows}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
