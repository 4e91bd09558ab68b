"""``python -m bench.start_paths``: every start kind, one statement against its transaction.

On PostgreSQL a new run of any of the four starts (CONTRACT.md 3.3-3.6) is one statement,
``runtime_store_start_run`` (migration 0012); anything it refuses takes the ordinary
transaction. This runs ``SqlStore``'s starts in one process with the statement switched
on and off (``SqlStore(fast_path=…)``), in alternating cells of the same
sitting, so the two paths meet the same machine. Each thread starts runs in a session of
its own, children under a running parent of its own.

Printed: calls per second and the process's CPU per call (``time.process_time``: the
store's Python and the driver, not PostgreSQL's backend) for each start, path and thread
count.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable

from app.storage import SqlStore, create_engine
from tests.contract.builders import (
    canceled_record,
    link_record,
    new_session,
    run_start,
    start_root,
    started_record,
)

from .config import postgres_admin_url
from .paths import on_scratch_database, print_ways

KINDS = ("root", "child", "one-shot", "one-shot child")
PATHS = ("transaction", "one statement")


def _starters(store: SqlStore) -> dict[str, Callable[[], object]]:
    """One thread's start of each kind, in its own session and under its own parents."""
    session_id = new_session(store).id
    parent = start_root(store, session_id).run
    sessionless = run_start(session_id="")
    store.start_one_shot_run(sessionless, started_record(sessionless))

    def root() -> object:
        run = run_start(session_id=session_id, labels={"team": "bench"})
        return store.start_root_run(run, started_record(run), canceled_record(run))

    def child() -> object:
        run = run_start(session_id=session_id, parent_run_id=parent.run_id)
        return store.start_child_run(
            run, link_record(parent, run), started_record(run), canceled_record(run)
        )

    def one_shot() -> object:
        run = run_start(session_id="")
        return store.start_one_shot_run(run, started_record(run))

    def one_shot_child() -> object:
        run = run_start(session_id="", parent_run_id=sessionless.run_id)
        return store.start_one_shot_child_run(
            run, link_record(sessionless, run), started_record(run)
        )

    return dict(zip(KINDS, (root, child, one_shot, one_shot_child), strict=True))


def _cell(starters: list[Callable[[], object]], seconds: float) -> tuple[float, float]:
    """Calls per second and CPU ms per call of ``starters`` run together for ``seconds``."""
    counts = [0] * len(starters)
    deadline = time.monotonic() + seconds

    def work(index: int) -> None:
        start = starters[index]
        while time.monotonic() < deadline:
            start()
            counts[index] += 1

    cpu = time.process_time()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(starters))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    calls = max(sum(counts), 1)
    return calls / seconds, (time.process_time() - cpu) / calls * 1000


def measure(
    database_url: str, threads: list[int], seconds: float, rounds: int
) -> dict[tuple[str, str, int], list[tuple[float, float]]]:
    """(kind, path, threads) → one (calls/s, CPU ms per call) per round."""
    engine = create_engine(database_url, pool_size=max(threads), max_overflow=0)
    stores = {path: SqlStore(engine, fast_path=path == "one statement") for path in PATHS}
    figures: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    try:
        for _ in range(rounds):
            for path in PATHS:
                store = stores[path]
                for count in threads:
                    per_thread = [_starters(store) for _ in range(count)]
                    for kind in KINDS:
                        cell = _cell([starters[kind] for starters in per_thread], seconds)
                        figures.setdefault((kind, path, count), []).append(cell)
    finally:
        engine.dispose()
    return figures


def main(argv: list[str] | None = None) -> dict[tuple[str, str, int], list[tuple[float, float]]]:
    parser = argparse.ArgumentParser(prog="python -m bench.start_paths", description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="measured seconds per cell")
    parser.add_argument("--threads", default="1,8", help="thread counts, e.g. 1,8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    args = parser.parse_args(argv)
    threads = [int(count) for count in args.threads.split(",")]
    figures, started = on_scratch_database(
        args.postgres_url, lambda url: measure(url, threads, args.seconds, args.rounds)
    )
    rows = [
        ((kind, str(count)), [figures[(kind, path, count)] for path in PATHS])
        for kind in KINDS
        for count in threads
    ]
    print_ways(
        f"SqlStore starts on PostgreSQL, {args.seconds:g} s a cell ({started})",
        ("start", "threads"),
        rows,
        PATHS,
    )
    return figures


if __name__ == "__main__":
    main()
