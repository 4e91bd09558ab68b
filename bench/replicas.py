"""``python -m bench.replicas``: reads per second with 0 and 1 read replica (CONTRACT.md 14).

Makes a PostgreSQL primary and a hot standby on loopback (tests/replicas/cluster.py: the
server binaries of Debian's PostgreSQL), seeds one database, and serves it with
``runtime-store serve`` as a user starts it (its defaults: one worker per core), once
without and once with ``RUNTIME_STORE_READ_DATABASE_URLS``, with tokens required unless
``--auth open``. In each sitting ``--readers`` asyncio readers load runs, read pages of 100
records and search, while one writer appends and at once reads its record back
(read-your-writes: a miss is counted, expected 0). It prints reads per second, latency, the
share of reads each database served (the service's ``runtime_store_db_reads_served`` metric)
and the writer's misses.

On a 2-core machine the service, both PostgreSQL servers and this client share the same
cores: the figures bound what routing costs and show the share a replica takes, not the
capacity a replica on its own machine adds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from app.storage import upgrade_schema
from runtime_store_client import AsyncHttpStore, HttpStore, Record, RunStart
from tests.contract.builders import canceled_record, record, run_start, started_record
from tests.replicas.cluster import StreamingPair, server_binaries, start_pair
from tests.replicas.test_read_your_writes import reads_served

from . import auth
from .auth import Auth, Tokens
from .servers import start_service, stop_service

RUNS = 20
RECORDS_PER_RUN = 100


@dataclass
class Sitting:
    name: str
    reads: int
    seconds: float
    latencies: list[float]
    served: dict[str, float]
    writes: int
    misses: int

    def row(self) -> str:
        total = sum(self.served.values()) or 1.0
        shares = ", ".join(
            f"{name} {100 * count / total:.0f} %" for name, count in sorted(self.served.items())
        )
        quantiles = statistics.quantiles(self.latencies, n=20)
        return (
            f"| {self.name} | {self.reads / self.seconds:,.0f} | "
            f"{1000 * statistics.median(self.latencies):.1f} / {1000 * quantiles[18]:.1f} | "
            f"{shares or 'primary 100 %'} | {self.writes} | {self.misses} |"
        )


def seed(base_url: str, tokens: Tokens) -> list[RunStart]:
    runs = []
    with HttpStore(base_url, token=tokens.admin) as admin:  # an admin-only call
        session_id = admin.create_session(f"bench-{random.getrandbits(32):x}", _now()).id
    with HttpStore(base_url, token=tokens.worker) as store:
        for _ in range(RUNS):
            run = run_start(session_id=session_id)
            store.start_root_run(run, started_record(run), canceled_record(run))
            store.append_run_records(run.run_id, [record(run) for _ in range(RECORDS_PER_RUN)])
            runs.append(run)
    return runs


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


async def sitting(
    name: str, base_url: str, token: str | None, runs: list[RunStart], readers: int, duration: float
) -> Sitting:
    latencies: list[float] = []
    stop = time.monotonic() + duration
    writes = misses = 0

    async def reader() -> None:
        async with AsyncHttpStore(base_url, token=token) as store:
            while time.monotonic() < stop:
                run = random.choice(runs)
                started = time.perf_counter()
                match random.randrange(3):
                    case 0:
                        await store.load_run(run.run_id)
                    case 1:
                        await store.list_run_records(run.run_id, limit=100)
                    case _:
                        await store.search_runs(session_id=run.session_id, limit=20)
                latencies.append(time.perf_counter() - started)

    async def writer() -> None:
        nonlocal writes, misses
        async with AsyncHttpStore(base_url, token=token) as store:
            while time.monotonic() < stop:
                run = random.choice(runs)
                new: Record = record(run)
                await store.append_run_record(new)
                writes += 1
                try:
                    await store.load_run_record(run.run_id, new.event_key)
                except Exception:
                    misses += 1
                await asyncio.sleep(0.01)

    before = reads_served(base_url)
    started = time.monotonic()
    await asyncio.gather(writer(), *(reader() for _ in range(readers)))
    seconds = time.monotonic() - started
    after = reads_served(base_url)
    delta = {key: after[key] - before.get(key, 0.0) for key in after}
    return Sitting(name, len(latencies), seconds, latencies, delta, writes, misses)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__)
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per sitting")
    parser.add_argument("--readers", type=int, default=16, help="concurrent readers")
    auth.add_argument(parser)
    args = parser.parse_args()
    binaries = server_binaries()
    if binaries is None:
        raise SystemExit("PostgreSQL's server binaries (initdb, pg_basebackup) are needed")
    pair: StreamingPair = start_pair(binaries)
    try:
        pair.create_database("bench")
        upgrade_schema(pair.primary_url("bench"))
        log_dir = Path(tempfile.mkdtemp(prefix="rs-bench-replicas-"))
        results = []
        # One key for both services: they serve the same database.
        credentials = Auth.of(args.auth)
        # ``reads_served`` (tests/replicas) scrapes /metrics without a token.
        scrape = {"RUNTIME_STORE_METRICS_OPEN_TO_LOOPBACK": "true"}
        for name, env in (
            ("0 replicas", scrape),
            (
                "1 replica",
                {**scrape, "RUNTIME_STORE_READ_DATABASE_URLS": pair.standby_url("bench")},
            ),
        ):
            service = start_service(
                name.replace(" ", "-"),
                pair.primary_url("bench"),
                log_dir,
                env=env,
                auth=credentials,
            )
            try:
                url, token = service.base_url, service.tokens.worker
                runs = seed(url, service.tokens)
                pair.catch_up()
                asyncio.run(sitting(name, url, token, runs, args.readers, 2.0))  # warm-up
                results.append(
                    asyncio.run(sitting(name, url, token, runs, args.readers, args.duration))
                )
            finally:
                stop_service(service)
    finally:
        pair.remove()
    print(
        f"\n{args.readers} readers + 1 writer, {args.duration:.0f} s per sitting, "
        f"auth {args.auth}\n"
    )
    print("| service | reads/s | p50 / p95 ms | served by | writes | read-after-write misses |")
    print("| --- | --: | --: | --- | --: | --: |")
    for result in results:
        print(result.row())


if __name__ == "__main__":
    main()
