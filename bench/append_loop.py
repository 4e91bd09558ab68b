"""A focused loop: in-process ``SqlStore`` appends on PostgreSQL, one session per worker.

``python -m bench.append_loop [WORKERS ...]`` prints ops/s per worker count (5 s each). It
isolates the storage layer's own cost, for quick before/after figures of a change to it.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid

import sqlalchemy as sa

from app.storage import SqlStore, create_engine, upgrade_schema
from tests.contract.builders import new_session, record, start_root

SECONDS = 5.0
PAYLOAD = b'{"text":"' + b"x" * 1000 + b'"}'


def measure(url: str, workers: int) -> float:
    engine = create_engine(url, pool_size=workers, max_overflow=0)
    store = SqlStore(engine)
    runs = [start_root(store, new_session(store).id).run for _ in range(workers)]
    counts = [0] * workers
    deadline = time.monotonic() + SECONDS

    def work(index: int) -> None:
        n = 0
        while time.monotonic() < deadline:
            store.append_run_record(record(runs[index], event_key=f"e{n}", payload=PAYLOAD))
            n += 1
        counts[index] = n

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    engine.dispose()
    return sum(counts) / SECONDS


def main(argv: list[str]) -> None:
    levels = [int(arg) for arg in argv] or [1, 4, 16]
    name = f"bench_loop_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(
        "postgresql+psycopg://postgres@127.0.0.1/postgres", isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = f"postgresql://postgres@127.0.0.1/{name}"
    try:
        upgrade_schema(url)
        for workers in levels:
            print(f"SqlStore append, {workers} workers: {measure(url, workers):.0f} ops/s")
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.dispose()


if __name__ == "__main__":
    main(sys.argv[1:])
