"""The live tail (CONTRACT.md 11.3): commit-to-delivery latency and what idle streams cost.

* ``tail delivery``: ``n`` subscribers (1 and 50, in a process of their own:
  ``bench/tail_subscribers.py``) follow one run on the benchmark's service while this
  process appends one record every ``TAIL_INTERVAL`` seconds. A sample is the time from
  *before* the append request was sent to the delivery of its record to one subscriber: an
  upper bound of commit-to-delivery (it includes the append's own round trip). Targets
  (11.3): median within 50 ms on PostgreSQL, 250 ms on SQLite.
* ``append with 100 idle streams``: append throughput (16 workers over HTTP) while 100
  streams of other runs stay open, against the same measurement without them, in the same
  run. Idle streams cost no reads (they are never woken), only their wake-up bookkeeping.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from runtime_store_client import HttpStore, RunStart, RunStatus
from tests.contract.builders import canceled_record, run_start, started_record, terminal_record

from . import servers
from .auth import TOKEN_ENV, Tokens
from .config import Config
from .drive import drive_http
from .report import Row
from .targets import Target
from .workloads import AGENT, Call, new_prefix, ordinary

TAIL_SUBSCRIBERS: Final = (1, 50)
IDLE_STREAMS: Final = 100
APPEND_WORKERS: Final = 16
#: Seconds between the appends whose delivery is timed (a steady, moderate rate).
TAIL_INTERVAL: Final = 0.02
DELIVERY_TARGET_MS: Final = {"postgres": 50.0, "sqlite": 250.0}


def _start(admin: HttpStore, store: HttpStore, prefix: str) -> RunStart:
    """A running run in a session of its own (created by ``admin``: an admin-only call)."""
    admin.create_session(f"{prefix}-session", run_start().started_at)
    run = run_start(run_id=f"{prefix}-run", agent_id=AGENT, session_id=f"{prefix}-session")
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


def _subscribers(
    base_url: str, token: str | None, path: str, count: int, *extra: str
) -> subprocess.Popen[str]:
    # The token in the environment, as the operator commands take it: never in argv.
    env = {name: value for name, value in os.environ.items() if name != TOKEN_ENV}
    if token:
        env[TOKEN_ENV] = token
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.tail_subscribers", base_url, path, str(count), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        process.kill()
        raise RuntimeError("the tail subscribers did not start")
    return process


def measure_delivery(base_url: str, tokens: Tokens, subscribers: int, records: int) -> list[float]:
    """Seconds from each append's send to each subscriber's delivery of its record."""
    with (
        HttpStore(base_url, token=tokens.worker) as store,
        HttpStore(base_url, token=tokens.admin) as admin,
    ):
        run = _start(admin, store, new_prefix("tail"))
        stream = f"/v1/runs/{run.run_id}/records/stream"
        process = _subscribers(base_url, tokens.worker, stream, subscribers)
        sent: dict[str, float] = {}
        for n in range(records):
            started = time.monotonic()
            result = store.append_run_record(ordinary(run, f"tail-{n}"))
            sent[result.id] = started
            time.sleep(TAIL_INTERVAL)
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
        out, _ = process.communicate(timeout=120)
    arrivals: dict[str, list[float]] = json.loads(out.strip().splitlines()[-1])
    samples = [
        arrived - sent[record_id]
        for record_id, times in arrivals.items()
        if record_id in sent
        for arrived in times
    ]
    if len(samples) != records * subscribers:
        raise RuntimeError(f"{len(samples)} deliveries of {records * subscribers}")
    return samples


def measure_appends(base_url: str, tokens: Tokens, config: Config, idle_streams: int) -> Row:
    """Append throughput over HTTP while ``idle_streams`` streams of other runs are open."""
    with (
        HttpStore(base_url, token=tokens.worker) as store,
        HttpStore(base_url, token=tokens.admin) as admin,
    ):
        runs = [_start(admin, store, new_prefix("appender")) for _ in range(APPEND_WORKERS)]
        # Each idle stream follows a run of its own that nobody writes to.
        quiet = [_start(admin, store, new_prefix("quiet")) for _ in range(idle_streams)]
    holder = None
    if quiet:
        paths = "|".join(f"/v1/runs/{run.run_id}/records/stream" for run in quiet)
        holder = _subscribers(base_url, tokens.worker, paths, len(quiet), "--idle")
        time.sleep(1.0)  # the streams' first reads are done; only idle streams remain

    def calls(worker: int, i: int) -> Call:
        return Call("append_run_record", (ordinary(runs[worker], f"k-{i}"),))

    try:
        measured = drive_http(
            base_url, tokens.worker, calls, APPEND_WORKERS, config.warmup, config.duration
        )
    finally:
        if holder is not None:
            holder.communicate(input="", timeout=60)
    return Row.of(
        f"append_run_record, {idle_streams} idle streams",
        "",
        APPEND_WORKERS,
        measured.latencies,
        measured.seconds,
        errors=measured.errors,
    )


def run_tail(
    config: Config, services: dict[str, servers.Service], log: Callable[[str], None]
) -> list[Row]:
    rows: list[Row] = []
    records = config.tail_records
    for name, service in services.items():
        backend = f"http/{name}"
        for subscribers in TAIL_SUBSCRIBERS:
            log(f"tail delivery on {name}: {subscribers} subscriber(s), {records} records")
            samples = measure_delivery(service.base_url, service.tokens, subscribers, records)
            row = Row.of(
                f"tail delivery, {subscribers} subscriber(s)",
                backend,
                subscribers,
                samples,
                records * TAIL_INTERVAL,
            )
            row.note = f"target p50 <= {DELIVERY_TARGET_MS[name]:.0f} ms (11.3)"
            rows.append(row)
        for idle in (0, IDLE_STREAMS):
            log(f"append throughput on {name} with {idle} idle streams")
            row = measure_appends(service.base_url, service.tokens, config, idle)
            row.backend = backend
            rows.append(row)
        base, loaded = rows[-2], rows[-1]
        loaded.ratio = loaded.ops_per_s / base.ops_per_s if base.ops_per_s else None
        loaded.note = "ratio: to the same appends without streams, this run"
    return rows


def tail_targets(rows: Sequence[Row]) -> list[Target]:
    targets: list[Target] = []
    for row in rows:
        if row.operation.startswith("tail delivery"):
            database = row.backend.split("/")[-1]
            limit = DELIVERY_TARGET_MS[database]
            targets.append(
                Target(
                    name=f"{row.backend} {row.operation}, commit to delivery",
                    goal=f"p50 <= {limit:.0f} ms",
                    measured=f"p50 {row.p50_ms:.1f} ms, p99 {row.p99_ms:.1f} ms",
                    met=row.p50_ms <= limit,
                )
            )
    return targets
