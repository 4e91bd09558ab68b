"""Blocking store calls, run on the service's database threads, and ended with their client.

The store is synchronous (SQLAlchemy Core over psycopg or sqlite3). Endpoints are async and
hand each store call to a ``ThreadPoolExecutor`` whose size is the connection pool's, so a
call never waits for a connection while holding a thread. This replaces FastAPI's hand-off
of sync endpoints to anyio's worker threads, which costs a capacity limiter, a cancel scope
and a condition-variable queue per call (benchmark figures in docs/performance.md).
Expensive calls (a transcript validation reads up to a bounded number of pages) go through
``heavy``, which lets them hold at most a quarter of the threads, so cheap reads and
writes always find one free.

A client that disconnects ends its request's database work (CONTRACT.md 2.10).
``CancelOnDisconnect`` (pure ASGI, innermost) makes each HTTP request's ``receive``
watchable; a store call of that request that is still running ``WATCH_AFTER_SECONDS``
after it began listens for the client's ``http.disconnect`` and, when it comes, cancels
the call's reads (``app.storage.interrupts``: the running statement is stopped in the
database, later reads of the call are refused, an import stops between its slices).
Writes run to their end: a transaction is never cut short by a disconnect. Calls that
serve no one request in particular (the live tail's shared reads) use ``unbound``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, ParamSpec, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.storage import Canceler, calling

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

    def cancel_when_gone(self, canceler: Canceler, call: asyncio.Future[Any]) -> None:
        """Cancel ``canceler`` if the client disconnects before ``call`` is done."""
        if call.done():
            return
        if self.disconnected:
            canceler.cancel()
            return

        async def watch() -> None:
            await self.until_disconnected()
            canceler.cancel()

        watcher = asyncio.ensure_future(watch())
        call.add_done_callback(lambda _: watcher.cancel())


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


class Offload:
    """Runs blocking calls on ``threads`` database threads; ``close`` at shutdown."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="store")
        self.heavy_slots = max(1, threads // 4)
        self._heavy = asyncio.Semaphore(self.heavy_slots)

    async def heavy(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """An expensive call: it waits for one of ``heavy_slots`` before taking a thread."""
        async with self._heavy:
            return await self(fn, *args, **kwargs)

    async def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """The call, on a database thread; cancelled if its request's client leaves."""
        call = functools.partial(fn, *args, **kwargs)
        watch = _REQUEST.get()
        if watch is None:
            return await self._start(None, call)
        canceler = Canceler()
        future = self._start(canceler, call)
        loop = asyncio.get_running_loop()
        timer = loop.call_later(WATCH_AFTER_SECONDS, watch.cancel_when_gone, canceler, future)
        try:
            return await future
        finally:
            timer.cancel()

    async def unbound(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """A call that serves no one request (shared by several): never cancelled."""
        return await self._start(None, functools.partial(fn, *args, **kwargs))

    def _start(self, canceler: Canceler | None, call: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        # In a copy of the caller's context, as ``asyncio.to_thread`` does: the call's log
        # lines carry the request ID, and its trace spans nest in the request's.
        context = contextvars.copy_context()
        if canceler is not None:
            context.run(calling, canceler)
        return loop.run_in_executor(self._executor, context.run, call)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
