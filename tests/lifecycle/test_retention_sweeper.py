"""The service's retention sweeper asks its lock again before each step: a lock lost
with its connection (the primary failed over, CONTRACT.md 16) stops the sweep, so two
replicas never sweep at once on the new primary."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from app.retention_sweeper import RetentionSweeper
from app.storage import Exclusive, Sweep


def test_a_sweep_stops_once_its_lock_is_lost() -> None:
    steps: list[int] = []
    held = iter([True, True, False])  # lost before the third step
    swept = threading.Event()

    def run_sweep(should_stop: Callable[[], bool]) -> Sweep:
        for step in range(10):
            if should_stop():
                break
            steps.append(step)
        swept.set()
        return Sweep()

    @contextmanager
    def exclusive() -> Iterator[Exclusive]:
        yield Exclusive(True, lambda: next(held, False))

    sweeper = RetentionSweeper(run_sweep, exclusive, timedelta(milliseconds=10))
    sweeper.start()
    try:
        assert swept.wait(90)
    finally:
        sweeper.stop()
    assert steps == [0, 1]  # and no later sweep took a step: the lock was never got again


def test_a_lock_not_got_is_never_held() -> None:
    lock = Exclusive(False, lambda: True)
    assert not lock
    assert not lock.still_held()
