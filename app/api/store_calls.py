"""The store calls of the service: awaited on the event loop, and ended with their client.

The store's operations are blocking code over a SQLAlchemy connection, written once
(``app/storage``). The service awaits each call (``StoreCalls``):

* on PostgreSQL in a greenlet on the worker's event loop, over psycopg's asynchronous
  connections (``app/storage/database/waiting.py``): each statement is awaited on the loop, so no
  call waits for a thread, and concurrent appends meet in one group commit;
* on SQLite on one of the worker's database threads: the database has one writer and
  ``sqlite3`` no asynchronous driver; a thread per call costs less than a hop to a driver
  thread per statement (docs/performance.md, "One path").

At most ``slots`` calls run at once (the connection pool's size), so a burst waits here,
not in the pool. Expensive calls (an export, an import, a transcript validation) go
through ``heavy``: on a database thread, with the blocking store, and at most a quarter of
the slots, so cheap reads and writes always find one free.

A client that disconnects ends its request's database work (CONTRACT.md 2.10).
``CancelOnDisconnect`` (pure ASGI, innermost) makes each HTTP request's ``receive``
watchable; a store call of that request that is still running ``WATCH_AFTER_SECONDS``
after it began listens for the client's ``http.disconnect`` and, when it comes, cancels
the call's reads (``app.storage.database.read_deadlines``: the running statement is stopped in the
database, later reads of the call are refused, an import stops between its slices).
Writes run to their end: a transaction is never cut short by a disconnect. Calls that
serve no one request in particular (the live tail's shared reads) use ``unbound``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.awaiting import cancel_and_wait
from app.storage import Canceler, calling, greenlet_spawn, reads_of

P = ParamSpec("P")
T = TypeVar("T")

#: A call that ends sooner (nearly all) costs no disconnect watch at all.
WATCH_AFTER_SECONDS: Final = 0.05


class _RequestWatch:
    """One HTTP request's ``receive``, as its app sees it, with a way to wait for the
    client to go away while the app is not reading (it awaits a store call)."""

    __slots__ = ("_held", "_receive", "disconnected")

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        #: Messages read while watching, kept for the app's next ``receive``.
        self._held: list[Message] = []
        self.disconnected = False

    async def receive(self) -> Message:
        if self._held:
            return self._held.pop(0)
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self.disconnected = True
        return message

    async def until_disconnected(self) -> None:
        """Returns once the client has disconnected (any body still unread is kept)."""
        while not self.disconnected:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
            else:
                self._held.append(message)

    def cancel_when_gone(self, canceler: Canceler, watchers: list[asyncio.Task[None]]) -> None:
        """Cancel ``canceler`` if the client disconnects; the watching task, if one is
        needed, goes to ``watchers`` (its call cancels and awaits it when it ends)."""
        if self.disconnected:
            canceler.cancel()
            return

        async def watch() -> None:
            await self.until_disconnected()
            canceler.cancel()

        watchers.append(asyncio.ensure_future(watch()))


_REQUEST: contextvars.ContextVar[_RequestWatch | None] = contextvars.ContextVar(
    "runtime_store_request_watch", default=None
)


class CancelOnDisconnect:
    """Pure ASGI middleware: the store calls of an HTTP request may see its client leave."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        watch = _RequestWatch(receive)
        token = _REQUEST.set(watch)
        try:
            await self.app(scope, watch.receive, send)
        finally:
            _REQUEST.reset(token)


class StoreCalls:
    """Runs store calls on the event loop (``greenlets``) or on database threads;
    ``close`` at shutdown."""

    def __init__(self, slots: int, *, greenlets: bool) -> None:
        self.slots = slots
        self.greenlets = greenlets
        # Threads for SQLite's calls, and everywhere for heavy and other blocking work.
        self._executor = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="store")
        self._slots = asyncio.Semaphore(slots)
        self.heavy_slots = max(1, slots // 4)
        self._heavy = asyncio.Semaphore(self.heavy_slots)

    async def heavy(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """An expensive call of the blocking store: it waits for one of ``heavy_slots``,
        then runs on a database thread (it may take seconds of CPU: never on the loop)."""
        async with self._heavy:
            return await self._watched(self._on_thread, functools.partial(fn, *args, **kwargs))

    async def blocking(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A blocking function that is no call of the store's (a readiness check)."""
        return await self._on_thread(None, functools.partial(fn, *args, **kwargs))

    async def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """The call, awaited; its reads are cancelled if its request's client leaves."""
        return await self._watched(self._start, functools.partial(fn, *args, **kwargs))

    async def unbound(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A call that serves no one request (shared by several): never cancelled."""
        return await self._start(None, functools.partial(fn, *args, **kwargs))

    async def _watched(
        self,
        start: Callable[[Canceler | None, Callable[[], T]], Awaitable[T]],
        call: Callable[[], T],
    ) -> T:
        watch = _REQUEST.get()
        if watch is None:
            return await start(None, call)
        canceler = Canceler()
        loop = asyncio.get_running_loop()
        # A disconnect cancels the call's reads in the database, never the call itself:
        # a write runs to its end, and the call answers for its reads.
        watchers: list[asyncio.Task[None]] = []
        timer = loop.call_later(WATCH_AFTER_SECONDS, watch.cancel_when_gone, canceler, watchers)
        try:
            return await start(canceler, call)
        finally:
            timer.cancel()
            if watchers:  # never left pending, also when this request is cancelled
                await cancel_and_wait(*watchers)

    async def _start(self, canceler: Canceler | None, call: Callable[[], T]) -> T:
        if not self.greenlets:
            return await self._on_thread(canceler, call)
        async with self._slots:
            # In the caller's own context (the greenlet runs in it): the call's log lines
            # carry the request ID, its trace spans nest in the request's, its reads see
            # its canceler.
            with reads_of(canceler):
                return await greenlet_spawn(call)

    def _on_thread(self, canceler: Canceler | None, call: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        # In a copy of the caller's context, as ``asyncio.to_thread`` does.
        context = contextvars.copy_context()
        context.run(calling, canceler)
        return loop.run_in_executor(self._executor, context.run, call)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
