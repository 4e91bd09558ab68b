"""Blocking store calls, run on the service's database threads.

The store is synchronous (SQLAlchemy Core over psycopg or sqlite3). Endpoints are async and
hand each store call to a ``ThreadPoolExecutor`` whose size is the connection pool's, so a
call never waits for a connection while holding a thread. This replaces FastAPI's hand-off
of sync endpoints to anyio's worker threads, which costs a capacity limiter, a cancel scope
and a condition-variable queue per call (benchmark figures in docs/performance.md).

A call that has started runs to its end even when the client goes away: a transaction is
never cut short by a disconnect. Expensive calls (a transcript validation reads up to a
bounded number of pages) go through ``heavy``, which lets them hold at most a quarter of the
threads, so cheap reads and writes always find one free.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


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
        loop = asyncio.get_running_loop()
        # In a copy of the caller's context, as ``asyncio.to_thread`` does: the call's log
        # lines carry the request ID, and its trace spans nest in the request's.
        context = contextvars.copy_context()
        call = functools.partial(fn, *args, **kwargs)
        return await loop.run_in_executor(self._executor, context.run, call)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
