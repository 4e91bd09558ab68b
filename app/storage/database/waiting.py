"""How a store call waits: on its own thread, or in a greenlet on the service's event loop.

The store's operations are written once, as blocking code over a SQLAlchemy ``Connection``.
An embedder (and the service's background and bulk work) calls them on threads, over
blocking connections. The service awaits them instead (``app/api/store_calls.py``): each
call runs in a greenlet on the worker's event loop (SQLAlchemy's ``greenlet_spawn``),
over psycopg's asynchronous connections, and every statement it sends is awaited on the
loop, not on a thread. The two differ only where a call waits for something other than
its own statements; those waits are here, and pick the one that fits the caller:

* ``pause``: a retry's backoff, a purge's breather;
* ``Signal``: one call waiting for another to finish its work (a group commit's members
  for their leader).

A greenlet must never block its thread (every other request of the worker would stop),
so nothing here holds a lock while waiting.
"""

from __future__ import annotations

import asyncio
import threading
import time

from sqlalchemy.util import await_, greenlet_spawn
from sqlalchemy.util.concurrency import in_greenlet

__all__ = ["Signal", "greenlet_spawn", "in_greenlet", "pause"]


def pause(seconds: float) -> None:
    """Wait ``seconds``: the thread sleeps, a greenlet gives the event loop back."""
    if in_greenlet():
        await_(asyncio.sleep(seconds))
    else:
        time.sleep(seconds)


class Signal:
    """Fired once by one call, waited for by another (made by the waiter, in its mode)."""

    __slots__ = ("_future", "_lock")

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None
        self._lock: threading.Lock | None = None
        if in_greenlet():
            self._future = asyncio.get_running_loop().create_future()
        else:
            self._lock = threading.Lock()
            self._lock.acquire()

    def wait(self) -> None:
        """Until ``fire`` (at once if it was fired already)."""
        if self._future is not None:
            await_(asyncio.shield(self._future))
        else:
            assert self._lock is not None
            self._lock.acquire()

    def fire(self) -> None:
        """Wake the waiter (called on the waiter's thread, or its event loop's)."""
        if self._future is not None:
            if not self._future.done():
                self._future.set_result(None)
        else:
            assert self._lock is not None
            self._lock.release()
