"""The retention sweeper: sweeps every interval in a background thread of a service
worker, one replica at a time (CONTRACT.md 11.4; the sweep itself is storage's)."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import timedelta

import sqlalchemy as sa

from runtime_store_client import StoreError

from .storage import Exclusive, Sweep

log = logging.getLogger("runtime_store.retention")


@dataclass
class RetentionSweeper:
    """Sweeps every ``interval`` in a background thread of a service worker, one replica
    at a time; the first sweep comes after a random part of the interval (at most a
    minute), so replicas started together do not all try at once.

    The lock is asked again before each step of a sweep: one held on a primary that failed
    over is gone (another replica may sweep on the new primary), and the sweep stops
    there; the next interval tries again."""

    run_sweep: Callable[[Callable[[], bool]], Sweep]
    exclusive: Callable[[], AbstractContextManager[Exclusive]]
    interval: timedelta
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="retention", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop between two sessions or batches, waiting at most ``timeout`` seconds."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        seconds = self.interval.total_seconds()
        delay = random.uniform(0, min(seconds, 60.0))
        while not self._stop.wait(delay):
            delay = seconds
            try:
                with self.exclusive() as mine:
                    if not mine:
                        log.debug("retention: another replica is sweeping; skipped")
                        continue
                    done = self.run_sweep(lambda: self._stop.is_set() or not mine.still_held())
                    if mine.lost:
                        log.warning(
                            "retention: the sweep's lock was lost (the database failed over?);"
                            " stopped, the next sweep goes on"
                        )
                level = logging.INFO if done.items else logging.DEBUG
                log.log(level, "retention: %s", done.summary())
            except (StoreError, sa.exc.SQLAlchemyError, OSError):
                log.exception("retention sweep failed; the next one retries")
