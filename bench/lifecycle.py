"""Export, import and retention at scale (CONTRACT.md 11.4).

* **Transfer**: a session of ``transfer_records`` 1 KB records (ten running runs, bulk
  loaded) is exported to a file by a separate process (``python -m bench.lifecycle
  export``), which reports its seconds and its peak RSS (``ru_maxrss``): the export
  streams, so the peak must not grow with the session. The file is imported into a fresh
  database of the same kind by another process, then exported again from there and
  compared byte for byte. Rows ``export_session @<n>`` and ``import_session @<n>``,
  ops/s = records per second.
* **Retention**: ``retention_sessions`` ended sessions of ``retention_records`` records
  each (one completed run each, bulk loaded, ended two days ago) are swept by a separate
  process (``python -m bench.lifecycle sweep``: ``SqlStore.retention_sweep``, what
  ``runtime-store retention run`` and ``serve --retention-interval`` do) while a thread
  appends 1 KB records to a running run of another session through the service, back to
  back. Rows ``retention sweep @<n> sessions`` (ops/s = sessions per second, records per
  second in the note) and ``append during retention sweep`` (the appends that overlapped
  the sweep; target p99 < 100 ms).

The processes compare times on ``time.monotonic()``, one clock for every process.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.retention import RetentionPolicy
from app.domain.times import now_millis
from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.database.engines import WRITE_OPTION
from runtime_store_client import HttpStore, RunStart
from tests.contract.builders import T0, canceled_record, run_start, started_record

from . import bulk, servers
from .config import Config
from .pages import scale_label
from .report import Row, percentile
from .targets import Target
from .workloads import AGENT, PAYLOAD, Database, new_prefix, ordinary, start_in_new_session

#: Runs of the transferred session (its records split evenly).
TRANSFER_RUNS = 10
#: CONTRACT.md 11.4 (the issue's target): appends while a sweep runs.
SWEEP_WRITER_P99_MS_MAX = 100.0
_DAY_MS = 86_400_000

Log = Callable[[str], None]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _helper(*args: str) -> dict[str, Any]:
    """Run ``python -m bench.lifecycle <args>`` and return the JSON it prints."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.lifecycle", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench.lifecycle {args[0]} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- transfer ------------------------------------------------------------------------------


def _transfer_session(db: Database, records: int) -> tuple[str, int]:
    """An ended session of about ``records`` records over ``TRANSFER_RUNS`` running runs."""
    prefix = new_prefix("xfer")
    session_id = f"{prefix}-session"
    db.store.create_session(session_id, T0)
    per_run = max(1, records // TRANSFER_RUNS - 1)
    for index in range(TRANSFER_RUNS):
        run = run_start(run_id=f"{prefix}-r{index}", agent_id=AGENT, session_id=session_id)
        db.store.start_root_run(run, started_record(run), canceled_record(run))
        bulk.add_records(db.engine, run.run_id, per_run, PAYLOAD, timestamp_ms=now_millis())
    db.store.end_session(session_id, T0)
    bulk.analyze(db.engine)
    return session_id, TRANSFER_RUNS * (per_run + 1)


def _fresh_database(db: Database, workdir: Path, admin_url: str) -> str:
    if db.name == "postgres":
        url = servers.create_postgres_database(admin_url)
    else:
        path = workdir / f"import-{new_prefix('target')}.db"
        url = f"sqlite:///{path}"
    upgrade_schema(url)
    return url


def _drop_database(url: str, admin_url: str) -> None:
    if url.startswith("sqlite"):
        path = Path(url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    else:
        servers.drop_postgres_database(admin_url, url)


def measure_transfer(
    config: Config, workdir: Path, db: Database, admin_url: str, log: Log
) -> list[Row]:
    session_id, records = _transfer_session(db, config.transfer_records)
    label = scale_label(records)
    first, second = workdir / "export-1.ndjson", workdir / "export-2.ndjson"
    target = _fresh_database(db, workdir, admin_url)
    try:
        out = _helper("export", db.url, session_id, str(first))
        into = _helper("import", target, str(first))
        _helper("export", target, session_id, str(second))
        identical = _same_file(first, second)
    finally:
        _drop_database(target, admin_url)
    size_mb = first.stat().st_size / 2**20
    for path in (first, second):
        path.unlink(missing_ok=True)
    log(
        f"export of {records} records on {db.name}: {records / out['seconds']:,.0f} records/s, "
        f"peak RSS {out['peak_rss_mb']:.0f} MB; import {records / into['seconds']:,.0f} "
        f"records/s; re-export identical: {identical}"
    )
    backend = f"sqlstore/{db.name}"
    return [
        _timed_row(
            f"export_session @{label}",
            backend,
            records,
            out["seconds"],
            f"peak RSS {out['peak_rss_mb']:.0f} MB; file {size_mb:,.0f} MB",
        ),
        _timed_row(
            f"import_session @{label}",
            backend,
            records,
            into["seconds"],
            f"peak RSS {into['peak_rss_mb']:.0f} MB; re-export "
            + ("identical" if identical else "DIFFERS"),
            errors=0 if identical else 1,
        ),
    ]


def _same_file(first: Path, second: Path) -> bool:
    with first.open("rb") as one, second.open("rb") as two:
        while True:
            a, b = one.read(1 << 20), two.read(1 << 20)
            if a != b:
                return False
            if not a:
                return True


def _timed_row(
    operation: str, backend: str, items: int, seconds: float, note: str, errors: int = 0
) -> Row:
    """One timed operation over ``items`` (ops/s = items per second, p50 = p99 = its time)."""
    return Row(
        operation=operation,
        backend=backend,
        workers=1,
        ops=items,
        ops_per_s=items / seconds if seconds else 0.0,
        p50_ms=seconds * 1000,
        p99_ms=seconds * 1000,
        errors=errors,
        note=note,
    )


# --- retention -----------------------------------------------------------------------------


def _series(conn: sa.Connection, head: str, select: str, count: int, **params: Any) -> None:
    if conn.dialect.name == "postgresql":
        sql = f"{head} SELECT {select} FROM generate_series(1, :count) AS g(x)"
    else:
        sql = (
            "WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < :count) "
            f"{head} SELECT {select} FROM g"
        )
    conn.execute(sa.text(sql), {"count": count, **params})


def load_ended_sessions(engine: Engine, prefix: str, sessions: int, per_session: int) -> None:
    """``sessions`` ended sessions ``<prefix>-s<x>``, each one completed run of
    ``per_session`` 1 KB records, ended two days ago (what a purge touches is realistic)."""
    ended = now_millis() - 2 * _DAY_MS
    with engine.connect().execution_options(**{WRITE_OPTION: True}) as conn, conn.begin():
        _series(
            conn,
            "INSERT INTO sessions (session_id, status, created_at_ms, ended_at_ms, record_count)",
            "CAST(:prefix AS TEXT) || '-s' || x, 'ended', :ended, :ended, :n",
            sessions,
            prefix=prefix,
            ended=ended,
            n=per_session,
        )
        _series(
            conn,
            "INSERT INTO runs (run_id, agent_id, session_id, parent_run_id, status, "
            "start_outcome, started_at_ms, updated_at_ms, labels, cancellation_reason, "
            "record_count, start_key, terminal_key)",
            "CAST(:prefix AS TEXT) || '-r' || x, :agent, CAST(:prefix AS TEXT) || '-s' || x, '', "
            "'completed', 'proceed', :ended, :ended, '{}', '', :n, 'start', 'terminal'",
            sessions,
            prefix=prefix,
            agent=AGENT,
            ended=ended,
            n=per_session,
        )
        _series(
            conn,
            "INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, "
            "session_seq, turn_id, type, payload, timestamp_ms)",
            "CAST(:prefix AS TEXT) || '-r' || ((x - 1) / :n + 1), (x - 1) % :n + 1, "
            "'bulk-' || ((x - 1) % :n + 1), :agent, "
            "CAST(:prefix AS TEXT) || '-s' || ((x - 1) / :n + 1), (x - 1) % :n + 1, '', "
            "'planner_note', :payload, :ended",
            sessions * per_session,
            prefix=prefix,
            n=per_session,
            agent=AGENT,
            payload=PAYLOAD,
            ended=ended,
        )


@dataclass
class _Writer:
    """Appends back to back in a thread; (start, end) of each on ``time.monotonic()``."""

    store: HttpStore
    run: RunStart
    appends: list[tuple[float, float]] = field(default_factory=list)
    errors: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def __call__(self) -> None:
        index = 0
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                self.store.append_run_record(ordinary(self.run, f"sweep-w{index}"))
            except Exception:
                self.errors += 1
            self.appends.append((started, time.monotonic()))
            index += 1

    def overlapping(self, begin: float, end: float) -> list[float]:
        return [done - start for start, done in self.appends if start < end and done > begin]

    def before(self, begin: float) -> list[float]:
        return [done - start for start, done in self.appends if done <= begin]


def measure_sweep(config: Config, db: Database, service: servers.Service, log: Log) -> list[Row]:
    prefix = new_prefix("ret")
    sessions, per_session = config.retention_sessions, config.retention_records
    load_ended_sessions(db.engine, prefix, sessions, per_session)
    run = start_in_new_session(db, f"{prefix}-writer", f"{prefix}-writer-run")
    bulk.analyze(db.engine)
    lead, tail = (0.2, 0.1) if config.mode == "smoke" else (1.0, 0.5)
    with HttpStore(service.base_url, token=service.tokens.worker, timeout=300) as store:
        writer = _Writer(store, run)
        thread = threading.Thread(target=writer)
        thread.start()
        try:
            time.sleep(lead)
            swept = _helper("sweep", db.url)
            time.sleep(tail)
        finally:
            writer.stop.set()
            thread.join()
    seconds = swept["seconds"]
    during = writer.overlapping(swept["began"], swept["ended"])
    before = writer.before(swept["began"])
    backend = f"sqlstore/{db.name}"
    log(
        f"retention sweep of {swept['sessions']} sessions on {db.name}: "
        f"{swept['sessions'] / seconds:,.0f} sessions/s, appends during it p99 "
        f"{percentile(during, 0.99) * 1000:.1f} ms"
    )
    label = f"{scale_label(sessions)} sessions"
    return [
        _timed_row(
            f"retention sweep @{label}",
            backend,
            swept["sessions"],
            seconds,
            f"{swept['records'] / seconds:,.0f} records/s; {per_session} records per session",
            errors=0 if swept["sessions"] == sessions else 1,
        ),
        Row.of(
            "append during retention sweep",
            f"http/{db.name}",
            1,
            during,
            seconds,
            errors=writer.errors,
            note=f"before the sweep: p50 {percentile(before, 0.5) * 1000:.2f} ms, "
            f"p99 {percentile(before, 0.99) * 1000:.2f} ms",
        ),
    ]


def run_lifecycle(
    config: Config,
    workdir: Path,
    databases: tuple[Database, Database],
    services: dict[str, servers.Service],
    log: Log,
) -> list[Row]:
    """Transfer, then retention, on each database."""
    rows: list[Row] = []
    for db in databases:
        rows += measure_transfer(config, workdir, db, config.postgres_url, log)
    for db in databases:
        rows += measure_sweep(config, db, services[db.name], log)
    return rows


def lifecycle_targets(rows: list[Row]) -> list[Target]:
    """Appends during a retention sweep: p99 under ``SWEEP_WRITER_P99_MS_MAX``."""
    targets = []
    for row in rows:
        if row.operation == "append during retention sweep":
            targets.append(
                Target(
                    f"{row.backend} append p99 during a retention sweep",
                    f"< {SWEEP_WRITER_P99_MS_MAX:.0f} ms",
                    f"{row.p99_ms:.1f} ms over {row.ops} appends",
                    row.ops > 0 and row.p99_ms < SWEEP_WRITER_P99_MS_MAX,
                )
            )
    return targets


# --- the helper processes ------------------------------------------------------------------


def _export(url: str, session_id: str, path: str) -> dict[str, Any]:
    engine = create_engine(url)
    started = time.perf_counter()
    with open(path, "wb") as file:
        SqlStore(engine).export_session(session_id, file)
    seconds = time.perf_counter() - started
    engine.dispose()
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb()}


def _import(url: str, path: str) -> dict[str, Any]:
    engine = create_engine(url)
    started = time.perf_counter()
    with open(path, "rb") as file:
        SqlStore(engine).import_session(file)
    seconds = time.perf_counter() - started
    engine.dispose()
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb()}


def _sweep(url: str) -> dict[str, Any]:
    engine = create_engine(url)
    policy = RetentionPolicy(ended_sessions=timedelta(days=1))
    began = time.monotonic()
    done = SqlStore(engine).retention_sweep(policy)
    ended = time.monotonic()
    engine.dispose()
    return {
        "seconds": ended - began,
        "began": began,
        "ended": ended,
        "sessions": done.sessions,
        "records": done.session_records,
        "peak_rss_mb": _peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lifecycle", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="export a session to a file")
    export.add_argument("url")
    export.add_argument("session_id")
    export.add_argument("path")
    into = commands.add_parser("import", help="import a session file")
    into.add_argument("url")
    into.add_argument("path")
    sweep = commands.add_parser("sweep", help="one retention sweep (ended sessions, 1 day)")
    sweep.add_argument("url")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "export":
        result = _export(args.url, args.session_id, args.path)
    elif args.command == "import":
        result = _import(args.url, args.path)
    else:
        result = _sweep(args.url)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
