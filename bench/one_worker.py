"""``python -m bench.one_worker``: one service worker's CPU per call, under N clients.

Starts ``runtime-store serve`` with one worker on a new PostgreSQL database (the service's
defaults otherwise, and whatever ``RUNTIME_STORE_*`` settings the environment gives it),
with tokens required (``--auth open``: without), then ``--clients`` ``AsyncHttpStore``
clients in this process send ``--calls`` calls in all with a worker token. Prints calls per
second and the CPU per call of this process (the clients), the service and PostgreSQL. A
focused before/after for a change to the service's hot path; the side-by-side grid
(``python -m bench --side-by-side``) is the full picture.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from app.storage import SqlStore, create_engine, upgrade_schema
from runtime_store_client import AsyncHttpStore

from . import auth
from .auth import Auth
from .config import postgres_admin_url
from .servers import (
    cpu_delta,
    create_postgres_database,
    drop_postgres_database,
    postgres_cpu,
    start_service,
    stop_service,
    tree_cpu_seconds,
)
from .workloads import BATCH, PAYLOAD, Database, ordinary, start_in_new_session

#: Records in the run a page is read from.
RUN_RECORDS = 1_000
TRANSCRIPT_TYPE = "transcript_messages_appended"
OPERATIONS = ("page", "transcript", "batch")
#: A transcript page's run: this many transcript records, each followed by an ordinary one.
TRANSCRIPT_RECORDS = 200
#: Calls each client sends before the measurement (connections, caches).
WARM_UP = 20


def _calls(
    operation: str, db: Database, clients: int
) -> Callable[[AsyncHttpStore, int, int], Awaitable[object]]:
    if operation == "page":
        run = db.fixtures().run

        async def page(store: AsyncHttpStore, _client: int, _n: int) -> object:
            return await store.list_run_records(run.run_id, "", 100)

        return page
    if operation == "transcript":
        run = start_in_new_session(db, "t", "t-run")
        body = b'["' + b"x" * (len(PAYLOAD) - 4) + b'"]'
        through = ""
        for n in range(TRANSCRIPT_RECORDS):
            message = replace(ordinary(run, f"t-{n}"), type=TRANSCRIPT_TYPE, payload=body)
            added = db.store.append_run_records(run.run_id, [message, ordinary(run, f"o-{n}")])
            through = added[-1].id

        async def transcript(store: AsyncHttpStore, _client: int, _n: int) -> object:
            return await store.list_run_transcript_records(run.run_id, through, "", 100)

        return transcript
    runs = [start_in_new_session(db, f"c{k}", f"c{k}-run") for k in range(clients)]

    async def batch(store: AsyncHttpStore, client: int, n: int) -> object:
        run = runs[client]
        records = [ordinary(run, f"{n}-{i}") for i in range(BATCH)]
        return await store.append_run_records(run.run_id, records)

    return batch


async def _drive(
    base_url: str,
    token: str | None,
    call: Callable[[AsyncHttpStore, int, int], Awaitable[object]],
    clients: int,
    calls: int,
    measure: Callable[[], tuple[float, float, float]],
) -> dict[str, float]:
    stores = [AsyncHttpStore(base_url, token=token, timeout=60) for _ in range(clients)]
    sent = [0] * clients

    async def client(index: int, count: int) -> None:
        for _ in range(count):
            sent[index] += 1
            await call(stores[index], index, sent[index])

    try:
        await asyncio.gather(*(client(k, WARM_UP) for k in range(clients)))
        each = max(1, calls // clients)
        mine, service, database = measure()
        started = time.perf_counter()
        await asyncio.gather(*(client(k, each) for k in range(clients)))
        elapsed = time.perf_counter() - started
        mine2, service2, database2 = measure()
    finally:
        for store in stores:
            await store.aclose()
    done = each * clients
    return {
        "calls/s": done / elapsed,
        "client ms": (mine2 - mine) * 1000 / done,
        "service ms": (service2 - service) * 1000 / done,
        "postgres ms": (database2 - database) * 1000 / done,
    }


def measure(
    admin_url: str, operation: str, clients: int, calls: int, mode: str
) -> dict[str, float]:
    database_url = create_postgres_database(admin_url)
    engine = create_engine(database_url)
    try:
        upgrade_schema(database_url)
        name = database_url.rsplit("/", 1)[1]
        db = Database(name, database_url, engine, SqlStore(engine), RUN_RECORDS)
        call = _calls(operation, db, clients)
        service = start_service(
            "one-worker", database_url, Path(tempfile.mkdtemp()), workers=1, auth=Auth.of(mode)
        )
        try:
            baseline = postgres_cpu(name)

            def snapshot() -> tuple[float, float, float]:
                return (
                    time.process_time(),
                    tree_cpu_seconds(service.process.pid),
                    cpu_delta(baseline, postgres_cpu(name)),
                )

            token = service.tokens.worker
            return asyncio.run(_drive(service.base_url, token, call, clients, calls, snapshot))
        finally:
            stop_service(service)
    finally:
        engine.dispose()
        drop_postgres_database(admin_url, database_url)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(prog="python -m bench.one_worker", description=__doc__)
    parser.add_argument("operation", choices=OPERATIONS)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--calls", type=int, default=3200)
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    figures = measure(args.postgres_url, args.operation, args.clients, args.calls, args.auth)
    stamp = time.strftime("%H:%M UTC", time.gmtime())
    print(
        f"{args.operation}, 1 worker, {args.clients} clients, auth {args.auth} ({stamp}): "
        f"{figures['calls/s']:,.0f} calls/s; CPU per call: client {figures['client ms']:.2f}, "
        f"service {figures['service ms']:.2f}, PostgreSQL {figures['postgres ms']:.2f} ms"
    )
    return figures


if __name__ == "__main__":
    main()
