"""``python -m bench.store_drivers``: the same ``SqlStore`` calls awaited two ways.

The service awaits every store call (``app/api/store_calls.py``). This compares the two
ways it could on PostgreSQL, in one process and one sitting, alternating: on a database
thread over blocking psycopg connections (``loop.run_in_executor``), and in a greenlet
on the event loop over psycopg's asynchronous connections (SQLAlchemy's
``greenlet_spawn``, what the service does). N asyncio tasks call back to back: a
``load_run``, a page of 100 records of 1 KB, or a single 1 KB append (each task its own
run; concurrent appends meet in group commit).

Printed: calls per second and the process's CPU per call (the store, the driver and the
event loop; not PostgreSQL's backend) per operation, driver and task count.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.storage import SqlStore, create_async_engine, create_engine, greenlet_spawn
from tests.contract.builders import new_session, record, start_root

from .config import postgres_admin_url
from .paths import on_scratch_database, print_ways

OPERATIONS = ("load_run", "page", "append")
DRIVERS = ("thread", "greenlet")
PAYLOAD = b'{"text":"' + b"x" * 1000 + b'"}'
POOL = 10

Call = Callable[..., Awaitable[Any]]


async def _cell(
    setup: SqlStore, store: SqlStore, call: Call, operation: str, tasks: int, seconds: float
) -> tuple[float, float]:
    """Calls per second and CPU ms per call; ``setup`` (blocking) makes the runs."""
    session_id = new_session(setup).id
    runs = [start_root(setup, session_id).run for _ in range(tasks)]
    page_run = runs[0]
    for n in range(120):
        setup.append_run_record(record(page_run, event_key=f"page-{n}", payload=PAYLOAD))
    count = 0
    deadline = time.monotonic() + seconds

    async def work(index: int) -> None:
        nonlocal count
        n = 0
        while time.monotonic() < deadline:
            if operation == "load_run":
                await call(store.load_run, runs[index].run_id)
            elif operation == "page":
                await call(store.list_run_records, page_run.run_id, "", 100)
            else:
                await call(
                    store.append_run_record,
                    record(runs[index], event_key=f"e-{index}-{n}", payload=PAYLOAD),
                )
            n += 1
            count += 1

    cpu = time.process_time()
    started = time.monotonic()
    await asyncio.gather(*(work(i) for i in range(tasks)))
    calls = max(count, 1)
    return calls / (time.monotonic() - started), (time.process_time() - cpu) / calls * 1000


async def measure(
    database_url: str, tasks: list[int], seconds: float, rounds: int
) -> dict[tuple[str, str, int], list[tuple[float, float]]]:
    """(operation, driver, tasks) → one (calls/s, CPU ms per call) per round."""
    blocking = create_engine(database_url, pool_size=POOL, max_overflow=0)
    awaited = create_async_engine(database_url, pool_size=POOL, max_overflow=0)
    threads = ThreadPoolExecutor(POOL)
    loop = asyncio.get_running_loop()

    def on_thread(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        return loop.run_in_executor(threads, fn, *args)

    stores = {"thread": SqlStore(blocking), "greenlet": SqlStore(awaited.sync_engine)}
    calls: dict[str, Call] = {"thread": on_thread, "greenlet": greenlet_spawn}
    figures: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    try:
        for _ in range(rounds):
            for operation in OPERATIONS:
                for count in tasks:
                    for driver in DRIVERS:
                        cell = await _cell(
                            stores["thread"],
                            stores[driver],
                            calls[driver],
                            operation,
                            count,
                            seconds,
                        )
                        figures.setdefault((operation, driver, count), []).append(cell)
    finally:
        threads.shutdown()
        blocking.dispose()
        await awaited.dispose()
    return figures


def main(argv: list[str] | None = None) -> dict[tuple[str, str, int], list[tuple[float, float]]]:
    parser = argparse.ArgumentParser(prog="python -m bench.store_drivers", description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="measured seconds per cell")
    parser.add_argument("--tasks", default="1,16", help="task counts, e.g. 1,16")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    args = parser.parse_args(argv)
    tasks = [int(count) for count in args.tasks.split(",")]
    figures, started = on_scratch_database(
        args.postgres_url,
        lambda url: asyncio.run(measure(url, tasks, args.seconds, args.rounds)),
    )
    rows = [
        ((operation, str(count)), [figures[(operation, driver, count)] for driver in DRIVERS])
        for operation in OPERATIONS
        for count in tasks
    ]
    print_ways(
        f"SqlStore calls awaited on PostgreSQL ({started})", ("operation", "tasks"), rows, DRIVERS
    )
    return figures


if __name__ == "__main__":
    main()
