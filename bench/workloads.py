"""The operations of the throughput grid: what each worker sends, call after call.

A workload prepares its fixtures for one cell (one operation, backend and worker count)
and returns a ``CallFactory``: ``calls(worker, i)`` is the ``i``-th call of ``worker``,
or ``None`` when its pool is exhausted. A ``Call`` names a ``Store``/``MemoryStore``
method and its arguments, so the same workload drives ``AsyncHttpStore``, ``SqlStore``
and the psycopg ``CeilingStore`` alike. Each cell writes to sessions and runs of its own;
reads share one fixture per database.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from app.domain.cursors import SESSION_RECORDS
from app.domain.times import to_millis
from app.storage import SqlStore
from app.storage.access.service_keys import cursor_codec
from runtime_store_client import MemoryEvent, Record, RunStart, RunStatus
from tests.contract.builders import (
    T0,
    at,
    canceled_record,
    run_start,
    started_record,
    terminal_record,
)

from . import bulk
from .config import PAGE_SIZE, PAYLOAD_BYTES

AGENT = "bench-agent"


def payload(size: int = PAYLOAD_BYTES) -> bytes:
    """A JSON object of exactly ``size`` bytes."""
    head, tail = b'{"note":"', b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


PAYLOAD = payload()
MEMORY_DATA = {"text": "y" * 200}


@dataclass(frozen=True)
class Call:
    method: str
    args: tuple[Any, ...]


CallFactory = Callable[[int, int], Call | None]


@dataclass
class Database:
    """One database of the run, with what its fixtures are written through."""

    name: str
    url: str
    engine: Engine
    #: The in-process store used to write valid fixtures (and measured as ``sqlstore``).
    store: SqlStore
    list_records: int
    shared: SharedFixtures | None = None

    def fixtures(self) -> SharedFixtures:
        if self.shared is None:
            self.shared = SharedFixtures.create(self, self.list_records)
        return self.shared


@dataclass(frozen=True)
class Cell:
    """One measurement: a database, a unique ID prefix, the workers and their run pool."""

    db: Database
    prefix: str
    workers: int
    #: Running runs to create per worker for ``record_run_terminal``.
    budget: int


def new_prefix(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:8]}"


def ordinary(run: RunStart, event_key: str) -> Record:
    return Record(
        event_key=event_key,
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        type="planner_note",
        payload=PAYLOAD,
        timestamp=at(10),
    )


def start_in_new_session(db: Database, session_id: str, run_id: str) -> RunStart:
    """A fresh active session with one running root run, through ``SqlStore``."""
    db.store.create_session(session_id, T0)
    run = run_start(run_id=run_id, agent_id=AGENT, session_id=session_id)
    db.store.start_root_run(run, started_record(run), canceled_record(run))
    return run


@dataclass(frozen=True)
class SharedFixtures:
    """Read targets: a run (and its session) of ``list_records`` 1 KB records, memory."""

    run: RunStart
    list_records: int
    memory_run_id: str

    @staticmethod
    def create(db: Database, list_records: int) -> SharedFixtures:
        prefix = new_prefix("shared")
        run = start_in_new_session(db, f"{prefix}-session", f"{prefix}-run")
        bulk.add_records(db.engine, run.run_id, list_records, PAYLOAD, timestamp_ms=to_ms(at(10)))
        memory_run_id = f"{prefix}-memory"
        events = [
            MemoryEvent(type="planner_note", timestamp=at(index), data=MEMORY_DATA)
            for index in range(20)
        ]
        db.store.append_memory_events(AGENT, memory_run_id, events)
        return SharedFixtures(run, list_records + 1, memory_run_id)


def to_ms(value: Any) -> int:
    return to_millis(value, "timestamp")


# --- the workloads ---------------------------------------------------------------------


def start_root_runs(cell: Cell) -> CallFactory:
    """Every call starts a new root run in the worker's own active session."""
    prefix = cell.prefix
    for worker in range(cell.workers):
        cell.db.store.create_session(f"{prefix}-s{worker}", T0)

    def calls(worker: int, i: int) -> Call:
        run = run_start(
            run_id=f"{prefix}-w{worker}-r{i}", agent_id=AGENT, session_id=f"{prefix}-s{worker}"
        )
        return Call("start_root_run", (run, started_record(run), canceled_record(run)))

    return calls


def _worker_runs(cell: Cell) -> list[RunStart]:
    return [
        start_in_new_session(cell.db, f"{cell.prefix}-s{w}", f"{cell.prefix}-r{w}")
        for w in range(cell.workers)
    ]


def appends(cell: Cell) -> CallFactory:
    """Every call appends a new 1 KB record to the worker's own running run."""
    runs = _worker_runs(cell)
    return lambda worker, i: Call("append_run_record", (ordinary(runs[worker], f"e{i}"),))


BATCH = 16


def batch_appends(cell: Cell) -> CallFactory:
    """Every call appends 16 new 1 KB records to the worker's own running run (11.2)."""
    runs = _worker_runs(cell)

    def call(worker: int, i: int) -> Call:
        run = runs[worker]
        records = [ordinary(run, f"b{i}-{n}") for n in range(BATCH)]
        return Call("append_run_records", (run.run_id, records))

    return call


def retried_appends(cell: Cell) -> CallFactory:
    """Every call resends a record already stored: an exact retry (``inserted = false``)."""
    stored = [ordinary(run, "once") for run in _worker_runs(cell)]
    for record in stored:
        cell.db.store.append_run_record(record)
    return lambda worker, _i: Call("append_run_record", (stored[worker],))


def terminals(cell: Cell) -> CallFactory:
    """Every call completes one of the worker's ``budget`` running runs (bulk-created)."""
    prefix, budget = cell.prefix, cell.budget
    for worker in range(cell.workers):
        session_id = f"{prefix}-s{worker}"
        cell.db.store.create_session(session_id, T0)
        bulk.add_running_runs(
            cell.db.engine,
            session_id,
            f"{prefix}-w{worker}-t",
            budget,
            agent_id=AGENT,
            started_at_ms=to_ms(T0),
        )

    def calls(worker: int, i: int) -> Call | None:
        if i >= budget:
            return None
        run = run_start(
            run_id=f"{prefix}-w{worker}-t{i + 1}", agent_id=AGENT, session_id=f"{prefix}-s{worker}"
        )
        record = terminal_record(run, RunStatus.COMPLETED)
        return Call("record_run_terminal", (run.run_id, RunStatus.COMPLETED, record))

    return calls


def _page_start(shared: SharedFixtures, worker: int, i: int) -> int:
    """Where the ``i``-th page of ``worker`` starts: spread over the whole list."""
    pages = max(1, shared.list_records // PAGE_SIZE)
    return ((i * 7 + worker) % pages) * PAGE_SIZE


def run_pages(cell: Cell) -> CallFactory:
    """Pages of 100 records of the shared run."""
    shared = cell.db.fixtures()

    def calls(worker: int, i: int) -> Call:
        start = _page_start(shared, worker, i)
        cursor = str(start) if start else ""
        return Call("list_run_records", (shared.run.run_id, cursor, PAGE_SIZE))

    return calls


def session_pages(cell: Cell) -> CallFactory:
    """Pages of 100 records of the shared session."""
    shared = cell.db.fixtures()
    codec = cursor_codec(cell.db.engine)

    def calls(worker: int, i: int) -> Call:
        start = _page_start(shared, worker, i)
        session_id = shared.run.session_id
        cursor = codec.seal(SESSION_RECORDS, session_id, [start]) if start else ""
        return Call("list_session_run_records", (session_id, cursor, PAGE_SIZE))

    return calls


def run_loads(cell: Cell) -> CallFactory:
    """``load_run`` of the shared run."""
    run_id = cell.db.fixtures().run.run_id
    return lambda _worker, _i: Call("load_run", (run_id,))


def memory_appends(cell: Cell) -> CallFactory:
    """Every call appends one memory event (about 230 bytes) to the worker's run."""
    prefix = cell.prefix

    def calls(worker: int, i: int) -> Call:
        event = MemoryEvent(type="planner_note", timestamp=at(i % 1000), data=MEMORY_DATA)
        return Call("append_memory_events", (AGENT, f"{prefix}-m{worker}", [event]))

    return calls


def memory_loads(cell: Cell) -> CallFactory:
    """``load_memory`` of a run holding 20 events."""
    run_id = cell.db.fixtures().memory_run_id
    return lambda _worker, _i: Call("load_memory", (AGENT, run_id))


Prepare = Callable[[Cell], CallFactory]

#: (operation name in the table, how to prepare it). Order is the order of the table.
WORKLOADS: tuple[tuple[str, Prepare], ...] = (
    ("start_root_run", start_root_runs),
    ("append_run_record", appends),
    ("append_run_record (exact retry)", retried_appends),
    ("append_run_records (16 per call)", batch_appends),
    ("record_run_terminal", terminals),
    ("list_run_records", run_pages),
    ("list_session_run_records", session_pages),
    ("load_run", run_loads),
    ("append_memory_events", memory_appends),
    ("load_memory", memory_loads),
)


def terminal_budget(rate_cap: int, seconds: float, workers: int) -> int:
    """Running runs each worker needs to keep completing runs for ``seconds``."""
    return math.ceil(rate_cap * seconds / workers) + 20
