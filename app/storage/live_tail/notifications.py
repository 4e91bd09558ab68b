"""Wake-ups for the live tail (CONTRACT.md 11.3): which runs and sessions just got records.

A wake-up only says "read again"; the stream itself is always read from the log, from the
subscriber's cursor, so a lost, duplicated or early wake-up costs a read and never a record.
Each worker process has one ``Notifications``: its subscribers, woken by this process's own
commits (``committed``) and by its database's one wake-up source (``app.storage.live_tail.wakeups``:
PostgreSQL's ``LISTEN`` connection, SQLite's poll of other processes' commits).

Subscribers also re-read on their own every ``safety_seconds``: the bound on what any
missed wake-up (a dropped listener, a purge by another SQLite process) can cost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterable

from sqlalchemy.engine import Engine

from app.awaiting import first_of
from app.storage.live_tail.wakeups import WakeUpSource, wake_up_source

Key = tuple[str, str]


class Subscription:
    """One stream's wake-up; ``close`` it when the stream ends."""

    def __init__(self, hub: Notifications, keys: tuple[Key, ...]) -> None:
        self._hub = hub
        self.keys = keys
        self._event = asyncio.Event()
        #: The hub's ``generation`` when this subscription was last woken.
        self.woken = 0
        #: Whether the last ``wait`` ended because the subscription was woken.
        self.was_woken = False

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
            # Both waits are cancelled and awaited however this ends: a stream whose client
            # left is cancelled right here.
            await first_of(timeout, self._event.wait(), stop)
        self.was_woken = self._event.is_set()
        woken = self.woken if self.was_woken else self._hub.generation
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
        self._source: WakeUpSource = wake_up_source(
            engine, poll_seconds=poll_seconds, idle_seconds=idle_seconds
        )
        self.max_streams = max_streams
        self.safety_seconds = safety_seconds
        self._subscribers: dict[Key, set[Subscription]] = {}
        self._count = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        #: When the last stream ended (a listener stops some time later).
        self._idle_since = 0.0
        self.stopping = False
        #: Counts wake-ups: a read started at generation ``g`` sees every commit whose
        #: wake-up came at ``g`` or before (``Subscription.wait``).
        self.generation = 0

    @property
    def streams(self) -> int:
        return self._count

    @property
    def idle_since(self) -> float:
        return self._idle_since

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
        self._source.wanted()
        return subscription

    async def ready(self, timeout: float) -> None:
        """Until the wake-up source hears every commit from now on, at most ``timeout``
        seconds; a subscriber awaits it between subscribing and its first read, so no
        commit falls between the two (SQLite's poller and this process's own commits need
        no wait)."""
        if self._task is not None:
            await self._source.ready(timeout)

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
        self._task = asyncio.create_task(self._source.run(self), name=self._source.name)

    async def stop(self) -> None:
        """End every stream (their clients reconnect elsewhere) and the listener."""
        self.stopping = True
        self.wake_all()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
