"""Purge of a session holding many records while another session keeps writing.

A session of ``purge_runs`` completed runs holding ``purge_records`` 1 KB records in all
is bulk-loaded and ended. A writer thread appends 1 KB records to a running run of
another session, back to back; after a lead time the session is purged from the main
thread. Reported: the purge's duration, and the writer's latencies for the appends that
overlapped it (and, for comparison, before it).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from app.domain.times import now_millis
from runtime_store_client import RunStart
from tests.contract.builders import T0, at

from . import bulk
from .pages import scale_label
from .report import Row, percentile
from .workloads import AGENT, PAYLOAD, Database, new_prefix, ordinary, start_in_new_session, to_ms


@dataclass(frozen=True)
class PurgeFixture:
    session_id: str
    records: int
    writer_run: RunStart


def prepare_purge(db: Database, records: int, runs: int) -> PurgeFixture:
    """An ended session of ``records`` records over ``runs`` runs, and a writer's run."""
    prefix = new_prefix("purge")
    session_id = f"{prefix}-session"
    db.store.create_session(session_id, T0)
    per_run = max(1, records // runs)
    bulk.add_finished_runs(
        db.engine,
        session_id,
        f"{prefix}-r",
        runs,
        per_run=per_run,
        payload=PAYLOAD,
        agent_id=AGENT,
        at_ms=to_ms(at(10)),
    )
    bulk.end_session_and_runs(db.engine, session_id, now_millis())
    writer_run = start_in_new_session(db, f"{prefix}-writer", f"{prefix}-writer-run")
    bulk.analyze(db.engine)
    return PurgeFixture(session_id, runs * per_run, writer_run)


@dataclass
class PurgeOutcome:
    backend: str
    records: int
    seconds: float = 0.0
    #: (start, end) of every append, on the ``perf_counter`` clock.
    appends: list[tuple[float, float]] = field(default_factory=list)
    purge_window: tuple[float, float] = (0.0, 0.0)
    writer_errors: int = 0
    error: str = ""

    def during(self) -> list[float]:
        begin, end = self.purge_window
        return [done - start for start, done in self.appends if start < end and done > begin]

    def before(self) -> list[float]:
        return [done - start for start, done in self.appends if done <= self.purge_window[0]]

    def rows(self) -> list[Row]:
        label = scale_label(self.records)
        purge = Row(
            operation=f"purge_session @{label}",
            backend=self.backend,
            workers=1,
            ops=1,
            ops_per_s=1 / self.seconds if self.seconds else 0.0,
            p50_ms=self.seconds * 1000,
            p99_ms=self.seconds * 1000,
            errors=1 if self.error else 0,
            note=self.error,
        )
        during = self.during()
        writer = Row.of(
            "append during purge",
            self.backend,
            1,
            during,
            self.seconds,
            errors=self.writer_errors,
            note=f"before purge: p50 {percentile(self.before(), 0.5) * 1000:.2f} ms, "
            f"p99 {percentile(self.before(), 0.99) * 1000:.2f} ms",
        )
        return [purge, writer]

    def summary(self) -> dict[str, Any]:
        during, before = self.during(), self.before()
        return {
            "backend": self.backend,
            "records": self.records,
            "purge_seconds": self.seconds,
            "writer_appends_during": len(during),
            "writer_p50_ms_during": percentile(during, 0.5) * 1000,
            "writer_p99_ms_during": percentile(during, 0.99) * 1000,
            "writer_max_ms_during": max(during, default=0.0) * 1000,
            "writer_p50_ms_before": percentile(before, 0.5) * 1000,
            "writer_p99_ms_before": percentile(before, 0.99) * 1000,
            "writer_errors": self.writer_errors,
            "error": self.error,
        }


def run_purge(
    backend: str,
    writer: Any,
    purger: Any,
    fixture: PurgeFixture,
    *,
    lead: float,
    tail: float,
) -> PurgeOutcome:
    """Purge ``fixture`` with ``purger`` while a thread appends with ``writer``.

    Both are stores of the same backend (``HttpStore`` or ``CeilingStore``), not shared.
    """
    outcome = PurgeOutcome(backend, fixture.records)
    stop = threading.Event()

    def write() -> None:
        i = 0
        while not stop.is_set():
            record = ordinary(fixture.writer_run, f"w{i}")
            started = time.perf_counter()
            try:
                writer.append_run_record(record)
            except Exception:
                outcome.writer_errors += 1
            outcome.appends.append((started, time.perf_counter()))
            i += 1

    thread = threading.Thread(target=write)
    thread.start()
    try:
        time.sleep(lead)
        began = time.perf_counter()
        try:
            purger.purge_session(fixture.session_id)
        except Exception as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"[:300]
        ended = time.perf_counter()
        outcome.seconds, outcome.purge_window = ended - began, (began, ended)
        time.sleep(tail)
    finally:
        stop.set()
        thread.join()
    return outcome
