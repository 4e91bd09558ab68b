"""``python -m bench.batch_growth``: a batch's PostgreSQL CPU as its run grows.

For each path (the fast path's one statement, and the Python path's transaction), one
``SqlStore`` on a new database appends batches of 16 records of 1 KB to one run, and prints
PostgreSQL's CPU per batch for each block of batches. A flat row is what a user expects;
a rising one is a statement whose cached plan reads the whole run (docs/performance.md,
"A batch's cost and its run's length").
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from app.storage import SqlStore, create_engine, upgrade_schema

from .config import postgres_admin_url
from .servers import cpu_delta, create_postgres_database, drop_postgres_database, postgres_cpu
from .workloads import Database, ordinary, start_in_new_session

BATCH = 16
#: The paths measured: (name, whether the fast path is on).
PATHS = (("one statement (fast path)", True), ("transaction (Python path)", False))


def measure(database_url: str, fast: bool, blocks: int, block: int) -> list[float]:
    """PostgreSQL CPU ms per batch in each block of ``block`` batches, on a new database
    (its tables empty when the store's statements are first planned)."""
    name = database_url.rsplit("/", 1)[1]
    engine = create_engine(database_url)
    store = SqlStore(engine, fast_path=fast)
    figures: list[float] = []
    try:
        run = start_in_new_session(Database(name, database_url, engine, store, 0), "s", "r")
        sent = 0
        for _ in range(blocks):
            before = postgres_cpu(name)
            for _ in range(block):
                store.append_run_records(
                    run.run_id, [ordinary(run, f"b{sent}-{n}") for n in range(BATCH)]
                )
                sent += 1
            figures.append(cpu_delta(before, postgres_cpu(name)) * 1000 / block)
    finally:
        engine.dispose()
    return figures


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_growth", description=__doc__)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--block", type=int, default=250, help="batches per block")
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    args = parser.parse_args(argv)
    started = time.strftime("%H:%M UTC", time.gmtime())
    figures: dict[str, list[float]] = {}
    for label, fast in PATHS:
        database_url = create_postgres_database(args.postgres_url)
        try:
            upgrade_schema(database_url)
            figures[label] = measure(database_url, fast, args.blocks, args.block)
        finally:
            drop_postgres_database(args.postgres_url, database_url)
    table = Table(
        title=(
            f"PostgreSQL CPU ms per batch of {BATCH} as one run grows, "
            f"blocks of {args.block} batches ({started})"
        )
    )
    table.add_column("path")
    for index in range(args.blocks):
        records = (index + 1) * args.block * BATCH
        table.add_column(f"to {records:,}", justify="right")
    for label, values in figures.items():
        table.add_row(label, *(f"{value:.2f}" for value in values))
    Console(width=160).print(table)
    return figures


if __name__ == "__main__":
    main()
