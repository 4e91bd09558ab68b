"""``python -m bench.terminal_paths``: a terminal write, one statement against its transaction.

On PostgreSQL a terminal write (CONTRACT.md 3.10) of a running run is one statement,
``runtime_store_finish_run``, when the fast path is on; off, it is the ordinary
transaction (the session's row lock, the run and the record under the key, the update,
the ``run_completed`` record and its outbox event). This runs ``SqlStore``'s terminal
writes with the fast path on and off, in alternating cells of one sitting. Each thread
finishes runs of a session of its own, started before its cell (the starts are not timed).

Printed: terminal writes per second and the process's CPU per write (``time.process_time``:
the store's Python and the driver, not PostgreSQL's backend), per path and thread count.
"""

from __future__ import annotations

import argparse
import threading
import time

from app.storage import SqlStore, create_engine
from runtime_store_client import RunStart, RunStatus
from tests.contract.builders import new_session, start_root, terminal_record

from .config import postgres_admin_url
from .paths import on_scratch_database, print_ways

PATHS = ("transaction", "one statement")


def _runs(store: SqlStore, count: int) -> list[RunStart]:
    session_id = new_session(store).id
    return [start_root(store, session_id).run for _ in range(count)]


def _cell(store: SqlStore, runs: list[list[RunStart]], seconds: float) -> tuple[float, float]:
    """Terminal writes per second and CPU ms per write, one thread per list of runs."""
    counts = [0] * len(runs)
    deadline = time.monotonic() + seconds

    def work(index: int) -> None:
        for run in runs[index]:
            if time.monotonic() >= deadline:
                return
            store.record_run_terminal(
                run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
            )
            counts[index] += 1

    cpu = time.process_time()
    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    calls = max(sum(counts), 1)
    return calls / elapsed, (time.process_time() - cpu) / calls * 1000


def measure(
    database_url: str, threads: list[int], seconds: float, rounds: int, runs: int
) -> dict[tuple[str, int], list[tuple[float, float]]]:
    """(path, threads) → one (writes/s, CPU ms per write) per round."""
    engine = create_engine(database_url, pool_size=max(threads), max_overflow=0)
    stores = {path: SqlStore(engine, fast_path=path == "one statement") for path in PATHS}
    figures: dict[tuple[str, int], list[tuple[float, float]]] = {}
    try:
        for _ in range(rounds):
            for count in threads:
                for path in PATHS:
                    store = stores[path]
                    prepared = [_runs(store, runs) for _ in range(count)]
                    figures.setdefault((path, count), []).append(_cell(store, prepared, seconds))
    finally:
        engine.dispose()
    return figures


def main(argv: list[str] | None = None) -> dict[tuple[str, int], list[tuple[float, float]]]:
    parser = argparse.ArgumentParser(prog="python -m bench.terminal_paths", description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0, help="most seconds per cell")
    parser.add_argument("--threads", default="1,8", help="thread counts, e.g. 1,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=600, help="runs started per thread and cell")
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    args = parser.parse_args(argv)
    threads = [int(count) for count in args.threads.split(",")]
    figures, started = on_scratch_database(
        args.postgres_url,
        lambda url: measure(url, threads, args.seconds, args.rounds, args.runs),
    )
    rows = [((str(count),), [figures[(path, count)] for path in PATHS]) for count in threads]
    print_ways(
        f"SqlStore terminal writes on PostgreSQL ({started})",
        ("threads",),
        rows,
        PATHS,
        unit="writes",
    )
    return figures


if __name__ == "__main__":
    main()
