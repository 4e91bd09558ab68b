"""Database pool gauges, kept by SQLAlchemy's pool events.

A collector that asks the pool at scrape time cannot work with several workers (only the
scraped worker would answer), so every checkout and checkin moves the gauges of this
process instead; prometheus-client adds the live workers up.
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from .metrics import POOL_IN_USE, POOL_MAX_OVERFLOW, POOL_OVERFLOW, POOL_SIZE


class PoolWatch:
    """The gauges of one engine's pool, from ``start`` until ``close``."""

    def __init__(self, engine: Engine, *, size: int, max_overflow: int) -> None:
        self.engine = engine
        self.size = size
        self.max_overflow = max_overflow
        self._lock = threading.Lock()
        self._in_use = 0
        self._overflow = 0
        self._closed = False

    def start(self) -> PoolWatch:
        POOL_SIZE.inc(self.size)
        POOL_MAX_OVERFLOW.inc(self.max_overflow)
        event.listen(self.engine, "checkout", self._checked_out)
        event.listen(self.engine, "checkin", self._checked_in)
        return self

    def close(self) -> None:
        """Stop watching; this pool's share leaves the gauges."""
        if self._closed:
            return
        self._closed = True
        event.remove(self.engine, "checkout", self._checked_out)
        event.remove(self.engine, "checkin", self._checked_in)
        with self._lock:
            POOL_IN_USE.dec(self._in_use)
            POOL_OVERFLOW.dec(self._overflow)
            self._in_use = self._overflow = 0
        POOL_SIZE.dec(self.size)
        POOL_MAX_OVERFLOW.dec(self.max_overflow)

    def _checked_out(self, *_args: Any) -> None:
        self._move(1)

    def _checked_in(self, *_args: Any) -> None:
        self._move(-1)

    def _move(self, delta: int) -> None:
        with self._lock:
            self._in_use += delta
            POOL_IN_USE.inc(delta)
            overflow = max(0, self._in_use - self.size)
            if overflow != self._overflow:  # rare: the pool works beyond its size
                POOL_OVERFLOW.inc(overflow - self._overflow)
                self._overflow = overflow


def watch_pool(engine: Engine, *, size: int, max_overflow: int) -> PoolWatch:
    """Keep the pool gauges for ``engine``; ``close()`` the result with the engine."""
    return PoolWatch(engine, size=size, max_overflow=max_overflow).start()
