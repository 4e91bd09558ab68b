"""One benchmark run: databases, services, the throughput grid, pages, purge, memory.

Every service of a run authenticates as ``config.auth`` says (``bench/auth.py``): with
tokens required (the default) the measured calls send a worker token, the admin-only ones
(a purge) the admin token.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from app.storage import SqlStore, create_engine
from runtime_store_client import HttpStore

from . import bulk, floor, servers
from .auth import Auth
from .ceiling import CeilingStore, connect
from .config import Config
from .console import console_targets, run_console
from .delivery import delivery_targets, run_delivery
from .drive import Measurement, drive_http, drive_threads
from .lifecycle import lifecycle_targets, run_lifecycle
from .machine import cpu_probe_ms, describe_machine
from .mirror import compare
from .observability import observability_targets, run_observability
from .pages import PageSet, load_page_sets, measure_pages, scale_label
from .purge import prepare_purge, run_purge
from .report import CEILING, Report, Row, attach_ratios
from .search import run_search
from .tail import run_tail, tail_targets
from .targets import evaluate
from .workloads import WORKLOADS, CallFactory, Cell, Database, new_prefix, terminal_budget

RESULTS = Path(__file__).resolve().parent / "results"
#: How a boolean setting is switched off (as pydantic reads the service's settings).
OFF = ("0", "off", "false", "no", "f", "n")


@dataclass
class Backend:
    """Something the grid measures: ``<client>/<database>``."""

    name: str
    db: Database
    measure: Callable[[CallFactory, int], Measurement]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Benchmark:
    config: Config
    workdir: Path
    #: One key and admin token for every service of the run (they may share a database).
    auth: Auth
    postgres: Database | None = None
    sqlite: Database | None = None
    services: dict[str, servers.Service] = field(default_factory=dict)
    ceilings: list[CeilingStore] = field(default_factory=list)
    #: One connection per worker for the physical floor (``floor.py``).
    floors: list[floor.FloorStore] = field(default_factory=list)
    report: Report = field(default_factory=lambda: Report(meta={}))
    #: Operations whose ceiling no longer mirrors ``SqlStore`` (see ``check_mirror``).
    differing: set[str] = field(default_factory=set)

    # --- setup --------------------------------------------------------------------------

    @property
    def postgres_database(self) -> str:
        if self.postgres is None:
            return ""
        return self.postgres.engine.url.database or ""

    def start(self, postgres_url: str) -> None:
        sqlite_url = f"sqlite:///{self.workdir / 'bench.db'}"
        workers = self.config.server_workers
        for name, url in (("postgres", postgres_url), ("sqlite", sqlite_url)):
            log(f"starting runtime-store serve on {name}, auth {self.auth.mode}")
            self.services[name] = servers.start_service(
                name, url, self.workdir, workers, auth=self.auth
            )
        self.postgres = self._database("postgres", postgres_url)
        self.sqlite = self._database("sqlite", sqlite_url)
        count = max(self.config.levels)
        self.ceilings = [CeilingStore(connect(postgres_url)) for _ in range(count)]
        self.floors = [floor.FloorStore(connect(postgres_url)) for _ in range(count)]

    def _database(self, name: str, url: str) -> Database:
        # A connection per worker thread, as the ceiling has (an application sizes its pool
        # to its threads).
        engine = create_engine(url, pool_size=max(self.config.levels), max_overflow=4)
        # RUNTIME_STORE_GROUP_COMMIT=off switches group commit off here as in ``serve``.
        grouped = os.environ.get("RUNTIME_STORE_GROUP_COMMIT", "on").lower() not in OFF
        store = SqlStore(engine, group_commit=grouped)
        return Database(name, url, engine, store, self.config.list_records)

    def stop(self) -> None:
        for ceiling in self.ceilings:
            ceiling.close()
        for floor_store in self.floors:
            floor_store.close()
        for service in self.services.values():
            servers.stop_service(service)
        for db in (self.postgres, self.sqlite):
            if db is not None:
                db.engine.dispose()

    def databases(self) -> tuple[Database, Database]:
        """(PostgreSQL, SQLite), once started."""
        if self.postgres is None or self.sqlite is None:
            raise RuntimeError("the benchmark has not started")
        return self.postgres, self.sqlite

    def backends(self) -> list[Backend]:
        warmup, duration = self.config.warmup, self.config.duration

        def threads(stores: Callable[[int], Sequence[object]]) -> Callable[..., Measurement]:
            return lambda calls, n: drive_threads(stores(n), calls, n, warmup, duration)

        def http(service: servers.Service) -> Callable[..., Measurement]:
            url, token = service.base_url, service.tokens.worker
            return lambda calls, n: drive_http(url, token, calls, n, warmup, duration)

        pg, lite = self.databases()
        every = [
            Backend(CEILING, pg, threads(lambda n: self.ceilings[:n])),
            Backend("sqlstore/postgres", pg, threads(lambda n: [pg.store] * n)),
            Backend("http/postgres", pg, http(self.services["postgres"])),
            Backend("sqlstore/sqlite", lite, threads(lambda n: [lite.store] * n)),
            Backend("http/sqlite", lite, http(self.services["sqlite"])),
        ]
        wanted = self.config.backends
        return [b for b in every if b.name == CEILING or not wanted or b.name in wanted]

    # --- measurements -------------------------------------------------------------------

    def check_mirror(self) -> None:
        """Record whether the ceiling still sends ``SqlStore``'s statements (``mirror.py``)."""
        mirror = compare(self.databases()[0], self.ceilings[0])
        self.report.meta["ceiling_mirror"] = mirror
        self.differing = {operation for operation, found in mirror.items() if not found["same"]}
        for operation in sorted(self.differing):
            log(
                f"WARNING: the psycopg ceiling of {operation} no longer sends SqlStore's "
                f"statements: {mirror[operation]['sqlstore']} vs {mirror[operation]['ceiling']}"
            )

    def mark_differing_ceilings(self) -> None:
        """Flag the ceiling rows whose statements are no longer ``SqlStore``'s."""
        for row in self.report.rows:
            if row.backend != CEILING:
                continue
            base = row.operation.removeprefix("page ").split(" @")[0]
            if base == "append during purge":
                base = "append_run_record"
            if base in self.differing:
                row.note = "; ".join(
                    filter(None, ["ceiling SQL differs from SqlStore's", row.note])
                )

    def grid(self) -> None:
        config = self.config
        backends = self.backends()
        # The physical floor of each job first, at every worker count of the grid.
        floor.prepare(self.floors[0].conn)
        for workers in config.levels:
            for operation in (floor.INSERT, floor.SELECT):
                self._cell(
                    operation, floor.BACKEND, self._floor_measure, floor.calls(operation), workers
                )
        for operation, prepare in WORKLOADS:
            if config.operations and operation not in config.operations:
                continue
            # Fresh statistics, and cached generic plans invalidated, before every operation:
            # what autovacuum would do on a server that runs it (see docs/performance.md).
            bulk.analyze(self.databases()[0].engine)
            for workers in config.levels:
                budget = terminal_budget(
                    config.terminal_rate_cap, config.warmup + config.duration, workers
                )
                for backend in backends:
                    cell = Cell(backend.db, new_prefix(f"w{workers}"), workers, budget)
                    self._cell(operation, backend.name, backend.measure, prepare(cell), workers)

    def _floor_measure(self, calls: CallFactory, workers: int) -> Measurement:
        config = self.config
        return drive_threads(self.floors[:workers], calls, workers, config.warmup, config.duration)

    def _cell(
        self,
        operation: str,
        backend: str,
        measure: Callable[[CallFactory, int], Measurement],
        calls: CallFactory,
        workers: int,
    ) -> None:
        """Measure one cell of the grid and add its row (with the CPU each process used)."""
        cpu_before = self.cpu()
        ticks_before = servers.machine_ticks()
        measured = measure(calls, workers)
        steal = servers.steal_pct(ticks_before, servers.machine_ticks())
        cpu_used = {
            name: seconds * 1000 / max(1, measured.calls)
            for name, seconds in self.cpu_since(cpu_before).items()
        }
        notes = [measured.first_error] if measured.errors else []
        if measured.exhausted:
            notes.append("run pool exhausted")
        row = Row.of(
            operation,
            backend,
            workers,
            measured.latencies,
            measured.seconds,
            errors=measured.errors,
            note="; ".join(notes),
        )
        row.cpu_ms_per_op = {name: round(ms, 3) for name, ms in cpu_used.items()}
        row.steal_pct = round(steal, 1)
        self.report.rows.append(row)
        cpu = " ".join(f"{k} {v:.2f}" for k, v in cpu_used.items() if v >= 0.005)
        log(
            f"{operation[:32]:32} {backend:18} {self.auth.mode:6} {workers:3} "
            f"{row.ops_per_s:7.0f} ops/s  p50 {row.p50_ms:6.2f} ms  "
            f"p99 {row.p99_ms:7.2f} ms  cpu ms/op: {cpu}"
            f"{f'  steal {steal:.0f} %' if steal >= 1 else ''}"
            f"{'  ' + row.note if row.note else ''}"
        )

    def cpu(self) -> dict[str, dict[int, float]]:
        """CPU seconds used so far by this process, each service and each PostgreSQL backend
        of the benchmark database, by process."""
        used = {"load": {os.getpid(): time.process_time()}}
        for name, service in self.services.items():
            used[f"service-{name}"] = {0: servers.tree_cpu_seconds(service.process.pid)}
        used["postgres"] = servers.postgres_cpu(self.postgres_database)
        return used

    def cpu_since(self, before: dict[str, dict[int, float]]) -> dict[str, float]:
        return {name: servers.cpu_delta(before[name], now) for name, now in self.cpu().items()}

    def pages(self) -> None:
        sets: dict[str, list[PageSet]] = {}
        for db in self.databases():
            started = time.perf_counter()
            sets[db.name] = load_page_sets(db, self.config.page_sizes)
            sizes = ", ".join(scale_label(size) for size in self.config.page_sizes)
            log(f"loaded {sizes} records on {db.name} in {time.perf_counter() - started:.1f} s")
        repeats = self.config.page_repeats
        rows = measure_pages(CEILING, self.ceilings[0], sets["postgres"], repeats)
        for name in ("postgres", "sqlite"):
            service = self.services[name]
            with HttpStore(service.base_url, token=service.tokens.worker, timeout=300) as store:
                rows += measure_pages(f"http/{name}", store, sets[name], repeats)
        for row in rows:
            log(f"{row.operation:44} {row.backend:18} p50 {row.p50_ms:8.2f} ms")
        self.report.rows.extend(rows)

    def purges(self) -> None:
        postgres, sqlite = self.databases()
        config = self.config
        lead, tail = (0.2, 0.1) if config.mode == "smoke" else (0.5, 0.3)
        for backend, db in (
            (CEILING, postgres),
            ("http/postgres", postgres),
            ("http/sqlite", sqlite),
        ):
            fixture = prepare_purge(db, config.purge_records, config.purge_runs)
            if backend == CEILING:
                writer, purger = CeilingStore(connect(db.url)), CeilingStore(connect(db.url))
                outcome = run_purge(backend, writer, purger, fixture, lead=lead, tail=tail)
                writer.close()
                purger.close()
            else:
                service = self.services[db.name]
                url, tokens = service.base_url, service.tokens
                with (
                    HttpStore(url, token=tokens.worker, timeout=300) as writer_http,
                    HttpStore(url, token=tokens.admin, timeout=300) as purger_http,  # admin only
                ):
                    outcome = run_purge(
                        backend, writer_http, purger_http, fixture, lead=lead, tail=tail
                    )
            summary = outcome.summary()
            log(
                f"purge of {fixture.records} records on {backend}: {outcome.seconds:.2f} s, "
                f"writer p99 during it {summary['writer_p99_ms_during']:.1f} ms"
            )
            self.report.rows.extend(outcome.rows())
            self.report.purges.append(summary)

    def search(self) -> None:
        repeats = self.config.page_repeats
        self.report.rows.extend(
            run_search(self.config.postgres_url, self.config.search_sizes, repeats, log)
        )

    def tail(self) -> None:
        self.report.rows.extend(run_tail(self.config, self.services, log))

    def console(self) -> None:
        rows, summary = run_console(self.config, self.auth, self.workdir, log)
        self.report.rows.extend(rows)
        self.report.meta["console"] = summary

    def observability(self) -> None:
        comparisons = run_observability(
            self.config, self.auth, self.workdir, self.databases()[0], log
        )
        for comparison in comparisons:
            self.report.rows.extend(comparison.rows)
        self.report.meta["observability"] = {c.backend: c.summary() for c in comparisons}

    def lifecycle(self) -> None:
        rows = run_lifecycle(self.config, self.workdir, self.databases(), self.services, log)
        self.report.rows.extend(rows)

    def delivery(self) -> None:
        self.report.rows.extend(run_delivery(self.config, self.services, self.databases(), log))

    def memory(self) -> None:
        for name, service in self.services.items():
            for entry in service.peak_rss():
                if entry.role == "resource-tracker":
                    continue
                self.report.memory.append({"service": f"http/{name}", **asdict(entry)})

    # --- results ------------------------------------------------------------------------

    def finish(self) -> None:
        self.mark_differing_ceilings()
        attach_ratios(self.report.rows)
        self.report.targets = evaluate(self.report, self.config)
        self.report.targets += tail_targets(self.report.rows)
        self.report.targets += observability_targets(self.report.meta.get("observability", {}))
        self.report.targets += lifecycle_targets(self.report.rows)
        self.report.targets += console_targets(self.report.meta.get("console", {}))
        self.report.targets += delivery_targets(self.report.rows)


def run(config: Config, output: Path | None) -> tuple[Report, Path]:
    """The whole benchmark; the database and the temporary files are always removed."""
    admin_url = config.postgres_url
    postgres_url = servers.create_postgres_database(admin_url)
    started = time.perf_counter()
    ticks = servers.machine_ticks()
    try:
        with tempfile.TemporaryDirectory(prefix="rs-bench-") as workdir:
            bench = Benchmark(config, Path(workdir), Auth.of(config.auth))
            try:
                bench.start(postgres_url)
                bench.report.meta = describe_machine(
                    postgres_url,
                    config,
                    {name: service.workers() for name, service in bench.services.items()},
                )
                bench.check_mirror()
                for part, measure in (
                    ("grid", bench.grid),
                    ("pages", bench.pages),
                    ("purge", bench.purges),
                    ("memory", bench.memory),
                    ("search", bench.search),
                    ("tail", bench.tail),
                    ("console", bench.console),
                    ("observability", bench.observability),
                    ("lifecycle", bench.lifecycle),
                    ("delivery", bench.delivery),
                ):
                    if part in config.parts:
                        measure()
                        probes = bench.report.meta.setdefault("cpu_probe_ms_after", {})
                        probes[part] = cpu_probe_ms()
                        log(f"{part} done; cpu probe {probes[part]} ms")
            finally:
                bench.stop()
            bench.finish()
    finally:
        servers.drop_postgres_database(admin_url, postgres_url)
    bench.report.meta["elapsed_s"] = round(time.perf_counter() - started, 1)
    bench.report.meta["load_average_at_end"] = os.getloadavg()
    bench.report.meta["steal_pct"] = round(servers.steal_pct(ticks, servers.machine_ticks()), 1)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = output or RESULTS / f"{stamp}-{config.auth}.json"
    bench.report.write(path)
    return bench.report, path
