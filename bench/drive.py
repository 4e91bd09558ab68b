"""Run a workload with N concurrent workers for a fixed time and collect latencies.

HTTP is driven from this process with one shared ``AsyncHttpStore`` and N asyncio tasks (on
uvloop when installed), sending the service's worker token (none when it serves open); the
in-process ``SqlStore`` and the psycopg ceiling with N threads. Every worker calls back to
back; calls that start during the warm-up are not counted, and throughput is the count of
calls started in the measured window over its length.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from runtime_store_client import AsyncHttpStore

from .workloads import CallFactory

T = TypeVar("T")


@dataclass
class Measurement:
    """Latencies (seconds) of the calls started in the measured window."""

    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    #: Every call made, warm-up included (CPU use is divided by it).
    calls: int = 0
    errors: int = 0
    first_error: str = ""
    exhausted: bool = False

    def error(self, exc: BaseException) -> None:
        self.errors += 1
        if not self.first_error:
            self.first_error = f"{type(exc).__name__}: {exc}"[:300]


@dataclass(frozen=True)
class Window:
    """When counting starts and when workers stop, on the ``perf_counter`` clock."""

    measure_from: float
    end: float

    @staticmethod
    def after(start: float, warmup: float, duration: float) -> Window:
        return Window(start + warmup, start + warmup + duration)


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on uvloop when it is installed, else on the default loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


async def _drive_http(
    base_url: str,
    token: str | None,
    calls: CallFactory,
    workers: int,
    warmup: float,
    duration: float,
) -> Measurement:
    result = Measurement(seconds=duration)
    # httpx keeps up to 20 connections alive: enough for every level of the grid.
    async with AsyncHttpStore(base_url, token=token, timeout=60) as store:
        window = Window.after(time.perf_counter(), warmup, duration)

        async def worker(index: int) -> None:
            i = 0
            while (call := calls(index, i)) is not None:
                started = time.perf_counter()
                if started >= window.end:
                    return
                try:
                    await getattr(store, call.method)(*call.args)
                except Exception as exc:
                    result.error(exc)
                else:
                    if started >= window.measure_from:
                        result.latencies.append(time.perf_counter() - started)
                i += 1
                result.calls += 1
            result.exhausted = True

        await asyncio.gather(*(worker(index) for index in range(workers)))
    return result


def drive_http(
    base_url: str,
    token: str | None,
    calls: CallFactory,
    workers: int,
    warmup: float,
    duration: float,
) -> Measurement:
    """``workers`` tasks sharing one ``AsyncHttpStore`` (one keep-alive pool) that sends
    ``token`` (``None``: an open service)."""
    return run_async(_drive_http(base_url, token, calls, workers, warmup, duration))


def drive_threads(
    stores: Sequence[object], calls: CallFactory, workers: int, warmup: float, duration: float
) -> Measurement:
    """``workers`` threads; worker ``w`` calls ``stores[w]`` (the same object, or its own)."""
    result = Measurement(seconds=duration)
    lock = threading.Lock()
    windows: list[Window] = []
    barrier = threading.Barrier(
        workers, action=lambda: windows.append(Window.after(time.perf_counter(), warmup, duration))
    )

    def worker(index: int) -> None:
        store = stores[index]
        latencies: list[float] = []
        barrier.wait()
        window = windows[0]
        i = 0
        while (call := calls(index, i)) is not None:
            started = time.perf_counter()
            if started >= window.end:
                break
            try:
                getattr(store, call.method)(*call.args)
            except Exception as exc:
                with lock:
                    result.error(exc)
            else:
                if started >= window.measure_from:
                    latencies.append(time.perf_counter() - started)
            i += 1
        else:
            result.exhausted = True
        with lock:
            result.latencies.extend(latencies)
            result.calls += i

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return result
