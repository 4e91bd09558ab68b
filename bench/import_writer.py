"""``python -m bench.import_writer``: how long an SQLite import holds the only writer.

CONTRACT.md 2.10: a long write (an import) must not hold SQLite's one writer for its
length. For each file size a session of 1 KB records (ten running runs) is written and
exported from one SQLite file, then imported into a fresh one by ``SqlStore`` while a
second thread of the same process appends one small record at a time to a run of another
session there, back to back. Printed per size: the import's time, its publish (from the
claim to the last transaction) and the longest time one of the publish's transactions held
the writer (from ``BEGIN IMMEDIATE`` holding the lock to the commit's return, timed in
``_Staged._write``; the publish checkpoints the WAL between its transactions), and the appends
that overlapped the import: count, p50, p99 and the longest wait. The figures go to
docs/performance.md, *An import and SQLite's writer*.

``--records 222222 --record-bytes 220`` is issue 45's file (97 MB of small records).
``--served`` imports it over HTTP into a ``runtime-store serve`` on SQLite (tokens required
unless ``--auth open``: the import with the admin token, the appends with a worker's) while
a thread of the bench appends over HTTP to the same service (one worker: the import's Python
work, its garbage collections and its slices share it with the appends); the publish's holds
are then not timed (they happen in the service). The bench's own heap is frozen first, so
its collections do not add to the waits it measures.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.transfer import sinks
from runtime_store_client import HttpStore, Record
from tests.contract.builders import new_session, record, start_root

from . import auth, servers
from .auth import Auth
from .report import percentile

#: Payload bytes of every record of the imported session.
RECORD_BYTES = 1024
RUNS = 10


@dataclass
class Measured:
    megabytes: float
    records: int
    import_s: float
    publish_s: float
    longest_hold_s: float
    waits: list[float]


def _store(path: Path) -> SqlStore:
    url = f"sqlite:///{path}"
    upgrade_schema(url)
    return SqlStore(create_engine(url))


def _session_file(
    workdir: Path, megabytes: int, *, record_bytes: int = RECORD_BYTES, records: int = 0
) -> tuple[bytes, int]:
    """An exported session of about ``megabytes`` MB (or of ``records`` records), and its
    record count."""
    store = _store(workdir / f"source-{megabytes}-{records}.db")
    session_id = new_session(store).id
    payload = json.dumps({"text": "x" * (record_bytes - 12)}).encode()
    per_run = records // RUNS or megabytes * 1024 * 1024 // (RUNS * (record_bytes + 300))
    for _ in range(RUNS):
        run = start_root(store, session_id).run
        for first in range(0, per_run, 1000):
            batch: list[Record] = [
                record(run, event_key=f"e{i}", payload=payload)
                for i in range(first, min(per_run, first + 1000))
            ]
            store.append_run_records(run.run_id, batch)
    out = io.BytesIO()
    store.export_session(session_id, out)
    return out.getvalue(), RUNS * (per_run + 1)


@dataclass
class PublishTimes:
    """The publish of this process's last import: its length and its transactions'."""

    began: float = 0.0
    ended: float = 0.0
    holds: list[float] | None = None

    def reset(self) -> None:
        self.began, self.ended, self.holds = 0.0, 0.0, []


def _timing_publish() -> PublishTimes:
    """Time every transaction of ``_Staged``'s publish in this process."""
    times = PublishTimes()
    times.reset()
    original = sinks._Staged._write

    def write(self: Any, operation: Any) -> None:
        locked: list[float] = []

        def timed(conn: Any) -> None:
            locked.append(time.perf_counter())  # BEGIN IMMEDIATE has the lock
            operation(conn)

        try:
            original(self, timed)
        finally:
            ended = time.perf_counter()
            assert times.holds is not None
            if locked:
                times.holds.append(ended - locked[0])
                times.began = times.began or locked[0]
            times.ended = ended

    sinks._Staged._write = write  # type: ignore[method-assign]
    return times


def measure(
    workdir: Path,
    megabytes: int,
    published: PublishTimes,
    *,
    record_bytes: int = RECORD_BYTES,
    records: int = 0,
) -> Measured:
    data, records = _session_file(workdir, megabytes, record_bytes=record_bytes, records=records)
    published.reset()
    store = _store(workdir / f"target-{megabytes}-{records}.db")
    writer = start_root(store, new_session(store).id).run
    done = threading.Event()
    waits: list[float] = []

    def append() -> None:
        while not done.is_set():
            began = time.perf_counter()
            store.append_run_record(record(writer))
            waits.append(time.perf_counter() - began)

    thread = threading.Thread(target=append)
    thread.start()
    time.sleep(0.2)
    overlapping = len(waits)
    began = time.perf_counter()
    try:
        store.import_session(io.BytesIO(data))
    finally:
        took = time.perf_counter() - began
        done.set()
        thread.join()
    holds = published.holds or [0.0]
    return Measured(
        len(data) / 1e6,
        records,
        took,
        published.ended - published.began,
        max(holds),
        waits[overlapping:],
    )


def measure_served(
    workdir: Path,
    megabytes: int,
    mode: str,
    *,
    record_bytes: int = RECORD_BYTES,
    records: int = 0,
) -> Measured:
    """``measure`` over HTTP: the import and the appends are requests to one service,
    serving in ``mode`` (``tokens`` or ``open``)."""
    data, records = _session_file(workdir, megabytes, record_bytes=record_bytes, records=records)
    gc.collect()
    gc.freeze()  # the bench's heap (the file's 97 MB of lines aside) is not walked again
    service = servers.start_service(
        f"import-{megabytes}-{records}",
        f"sqlite:///{workdir}/served-{records}.db",
        workdir,
        auth=Auth.of(mode),
    )
    try:
        tokens = service.tokens
        # Creating a session and importing one are admin-only calls.
        store = HttpStore(service.base_url, token=tokens.admin, timeout=300)
        appender = HttpStore(service.base_url, token=tokens.worker, timeout=300)
        writer = start_root(appender, new_session(store).id).run
        done = threading.Event()
        waits: list[tuple[float, float]] = []

        def append() -> None:
            while not done.is_set():
                began = time.perf_counter()
                appender.append_run_record(record(writer))
                waits.append((began, time.perf_counter() - began))

        thread = threading.Thread(target=append)
        thread.start()
        time.sleep(0.5)
        began = time.perf_counter()
        try:
            store.import_session(io.BytesIO(data))
        finally:
            took = time.perf_counter() - began
            done.set()
            thread.join()
    finally:
        servers.stop_service(service)
        gc.unfreeze()
    during = [wait for start, wait in waits if began <= start <= began + took]
    return Measured(len(data) / 1e6, records, took, 0.0, 0.0, during)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_writer", description=__doc__)
    parser.add_argument("--sizes", default="20,70", help="file sizes in MB, comma-separated")
    parser.add_argument(
        "--record-bytes", type=int, default=RECORD_BYTES, help="payload bytes of each record"
    )
    parser.add_argument(
        "--records",
        default="",
        help="record counts, comma-separated, instead of --sizes (222222 with --record-bytes "
        "220 is the 97 MB file of issue 45)",
    )
    parser.add_argument(
        "--served", action="store_true", help="import and append over HTTP to one service"
    )
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    cases = (
        [(0, int(n)) for n in args.records.split(",")]
        if args.records
        else [(int(s), 0) for s in args.sizes.split(",")]
    )
    published = _timing_publish()
    served = f", served, auth {args.auth}" if args.served else ""
    table = Table(title=f"SQLite import and a small append (load {os.getloadavg()[0]:.1f}{served})")
    for column in ("file", "records", "import", "publish", "longest hold", "appends"):
        table.add_column(column)
    table.add_column("append p50 / p99 / max", justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        for size, count in cases:
            if args.served:
                m = measure_served(
                    Path(tmp), size, args.auth, record_bytes=args.record_bytes, records=count
                )
            else:
                m = measure(
                    Path(tmp), size, published, record_bytes=args.record_bytes, records=count
                )
            ms = sorted(w * 1000 for w in m.waits)
            table.add_row(
                f"{m.megabytes:.0f} MB",
                f"{m.records:,}",
                f"{m.import_s:.1f} s",
                "-" if args.served else f"{m.publish_s * 1000:.0f} ms",
                "-" if args.served else f"{m.longest_hold_s * 1000:.0f} ms",
                f"{len(ms):,}",
                f"{percentile(ms, 0.5):.1f} / {percentile(ms, 0.99):.1f} / {ms[-1]:.0f} ms",
            )
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
