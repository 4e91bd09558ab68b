"""Part ``observability``: what metrics and the JSON access log cost an append over HTTP.

For each database, two ``runtime-store serve`` services that differ only in
``RUNTIME_STORE_METRICS`` and ``RUNTIME_STORE_ACCESS_LOG`` (both on, as by default, or both
off), logging JSON to a file as a deployment would. The same append workload as the grid
(every call a new 1 KB record on the worker's own running run, at the run's largest worker
level) runs on one, then the other, alternating over five rounds (one in smoke mode) so
drift on the shared machine hits both alike. Rows ``append_run_record (observability
on|off)``; the target: throughput with it on is at most 10 % lower than off, in the same
run.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.storage import SqlStore, create_engine

from . import servers
from .auth import Auth
from .config import Config
from .drive import drive_http
from .report import Row, number
from .targets import Target
from .workloads import Cell, Database, appends, new_prefix

OPERATION = "append_run_record (observability {})"
#: The most throughput metrics and the access log may take away (docs/performance.md).
MAX_COST = 0.10


@contextmanager
def _environment(**variables: str) -> Iterator[None]:
    """``variables`` set for the services started inside (``serve`` reads its settings
    from the environment it inherits)."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass
class Variant:
    """One service of the comparison and what it measured over the rounds."""

    label: str
    service: servers.Service
    db: Database
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    calls: int = 0
    errors: int = 0
    first_error: str = ""
    cpu: dict[str, float] = field(default_factory=dict)
    #: ops/s of each round, in round order.
    rounds: list[float] = field(default_factory=list)

    def row(self, backend: str, workers: int) -> Row:
        row = Row.of(
            OPERATION.format(self.label),
            backend,
            workers,
            self.latencies,
            self.seconds,
            errors=self.errors,
            note=self.first_error,
        )
        row.cpu_ms_per_op = {
            name: round(seconds * 1000 / max(1, self.calls), 3)
            for name, seconds in self.cpu.items()
        }
        return row


def _start(
    name: str, url: str, workdir: Path, workers: int, auth: Auth, *, on: bool
) -> servers.Service:
    switch = "true" if on else "false"
    with _environment(
        RUNTIME_STORE_METRICS=switch,
        RUNTIME_STORE_ACCESS_LOG=switch,
        RUNTIME_STORE_LOG_FORMAT="json",
    ):
        return servers.start_service(name, url, workdir, workers, auth=auth)


def _measure(variant: Variant, config: Config, workers: int, postgres_database: str) -> None:
    cell = Cell(variant.db, new_prefix(f"obs-{variant.label}"), workers, budget=0)
    calls = appends(cell)
    service = variant.service
    pid = service.process.pid
    before = (servers.tree_cpu_seconds(pid), servers.postgres_cpu(postgres_database))
    measured = drive_http(
        service.base_url, service.tokens.worker, calls, workers, config.warmup, config.duration
    )
    service_cpu = servers.tree_cpu_seconds(pid) - before[0]
    database_cpu = servers.cpu_delta(before[1], servers.postgres_cpu(postgres_database))
    variant.latencies += measured.latencies
    variant.rounds.append(len(measured.latencies) / measured.seconds if measured.seconds else 0.0)
    variant.seconds += measured.seconds
    variant.calls += measured.calls
    variant.errors += measured.errors
    variant.first_error = variant.first_error or measured.first_error
    variant.cpu["service"] = variant.cpu.get("service", 0.0) + service_cpu
    variant.cpu["postgres"] = variant.cpu.get("postgres", 0.0) + database_cpu


def _start_variants(
    database: str,
    config: Config,
    auth: Auth,
    workdir: Path,
    postgres: Database,
    log: Callable[[str], None],
) -> Iterator[Variant]:
    """The off and on services of ``database``, each with the database its fixtures use
    (on PostgreSQL the run's, hence the run's ``auth``: one key per database)."""
    for label in ("off", "on"):
        name = f"observability-{database}-{label}"
        sqlite = database == "sqlite"
        url = f"sqlite:///{workdir / f'{name}.db'}" if sqlite else postgres.url
        log(f"starting runtime-store serve on {database}, observability {label}, auth {auth.mode}")
        service = _start(name, url, workdir, config.server_workers, auth, on=label == "on")
        db = postgres
        if sqlite:  # migrated by serve at its start
            engine = create_engine(url, pool_size=max(config.levels), max_overflow=4)
            db = Database(database, url, engine, SqlStore(engine), config.list_records)
        yield Variant(label, service, db)


def paired_ratio(on: list[float], off: list[float]) -> float:
    """The median over rounds of on / off: a round that drift slowed for both (another
    process on the machine) moves its own ratio little, and an outlier round none."""
    ratios = [a / b for a, b in zip(on, off, strict=True) if b > 0]
    return statistics.median(ratios) if ratios else 0.0


def _compare(variants: list[Variant], backend: str, workers: int) -> Comparison:
    off, on = variants
    ratio = paired_ratio(on.rounds, off.rounds)
    rows = [off.row(backend, workers), on.row(backend, workers)]
    note = f"{ratio:.3f} of off (median of rounds)"
    rows[1].note = "; ".join(filter(None, [rows[1].note, note]))
    return Comparison(backend, ratio, on.rounds, off.rounds, rows)


@dataclass(frozen=True)
class Comparison:
    """On against off on one backend: the paired ratio, each round's ops/s, the rows."""

    backend: str
    ratio: float
    rounds_on: list[float]
    rounds_off: list[float]
    rows: list[Row]

    def summary(self) -> dict[str, object]:
        return {
            "ratio": round(self.ratio, 4),
            "ops_per_s_on": [round(value, 1) for value in self.rounds_on],
            "ops_per_s_off": [round(value, 1) for value in self.rounds_off],
        }


def run_observability(
    config: Config,
    auth: Auth,
    workdir: Path,
    postgres: Database,
    log: Callable[[str], None],
) -> list[Comparison]:
    """On and off services per database, measured in alternating rounds."""
    workers = max(config.levels)
    rounds = 1 if config.mode == "smoke" else 5
    postgres_database = postgres.engine.url.database or ""
    found: list[Comparison] = []
    for database in ("postgres", "sqlite"):
        variants: list[Variant] = []
        try:
            # One at a time, so that a service that fails to start stops those before it.
            for variant in _start_variants(database, config, auth, workdir, postgres, log):
                variants.append(variant)
            for round_ in range(rounds):
                for variant in variants if round_ % 2 == 0 else variants[::-1]:
                    _measure(variant, config, workers, postgres_database)
        finally:
            for variant in variants:
                servers.stop_service(variant.service)
                if variant.db is not postgres:
                    variant.db.engine.dispose()
        comparison = _compare(variants, f"http/{database}", workers)
        for row in comparison.rows:
            cpu = (row.cpu_ms_per_op or {}).get("service", 0.0)
            log(
                f"{row.operation:40} {row.backend:12} {workers:3} {row.ops_per_s:7.0f} ops/s  "
                f"p50 {row.p50_ms:6.2f} ms  service cpu {cpu:.3f} ms/op"
            )
        found.append(comparison)
    return found


def observability_targets(summaries: dict[str, dict[str, Any]]) -> list[Target]:
    """Per backend: throughput with metrics and the access log on over off (the median of
    the rounds' ratios), from ``report.meta["observability"]``."""
    found = []
    for backend, summary in summaries.items():
        name = f"{backend} append_run_record with metrics and JSON access log on / off"
        on, off = summary["ops_per_s_on"], summary["ops_per_s_off"]
        measured = (
            f"{summary['ratio']:.3f} (median of {len(on)} rounds; mean "
            f"{number(statistics.fmean(on))} vs {number(statistics.fmean(off))} ops/s)"
        )
        met = summary["ratio"] >= 1 - MAX_COST
        found.append(Target(name, f">= {1 - MAX_COST:.2f}", measured, met))
    return found
