"""The reliability load and the checks that judge it afterwards.

Workers live whole agent-run lifecycles through balanced clients (each request to a
random replica): root and child starts, appends, cancellations, suspensions with
continuation starts, terminals, exact retries of all of them, and writes the contract
must refuse. A host thread creates sessions and ends them while runs start in them; a
tailing reader pages one session's record list the whole time.

Each worker owns the runs it starts, so it knows the ID every write must get; it keeps a
ledger of the writes it saw succeed and of those refused with a contract error. The
checks compare the ledger and the reader's view with the database afterwards.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Final, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.database.tables import runs
from app.storage.verify import verify_database
from runtime_store_client import (
    AppendResult,
    Checkpoint,
    EventConflictError,
    HttpStore,
    Record,
    RunCancellationConflictError,
    RunNotActiveError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    RunTerminalConflictError,
    SessionStatus,
    StoreError,
)
from tests.contract.builders import (
    all_records,
    all_session_records,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    dumps,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
)

from .cluster import Balancer, Replica, Traffic, balanced_store

T = TypeVar("T")
P = ParamSpec("P")


class Unexpected(Exception):
    """A worker saw an answer the contract does not allow."""


# --- the ledger --------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    """A write the worker saw succeed: the record it sent and the ID it was given."""

    record: Record
    id: str


@dataclass(frozen=True)
class Refused:
    """A write answered with a contract error: its key must have left no trace."""

    run_id: str
    event_key: str
    code: str


@dataclass(frozen=True)
class Expected:
    """What ``load_run`` (and the checkpoint read) must say about a run at the end."""

    session_id: str
    status: RunStatus
    cancellation_reason: str = ""
    checkpoint: Checkpoint | None = None


@dataclass
class Ledger:
    written: list[Written] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    expected: dict[str, Expected] = field(default_factory=dict)
    operations: int = 0
    problems: list[str] = field(default_factory=list)

    def merge(self, other: Ledger) -> None:
        self.written.extend(other.written)
        self.refused.extend(other.refused)
        self.expected.update(other.expected)
        self.operations += other.operations
        self.problems.extend(other.problems)


def guarded(ledger: Ledger, name: str, body: Callable[[], None]) -> Callable[[], None]:
    """A thread target that turns any exception into a problem of the ledger."""

    def target() -> None:
        try:
            body()
        except Exception as exc:
            detail = "".join(traceback.format_exception_only(exc)).strip()
            ledger.problems.append(f"{name}: {detail}")

    return target


# --- sessions: a host that creates and ends them -----------------------------------------


class Sessions:
    """The sessions runs may start in: one long-lived session the reader tails, and a pool
    of short-lived ones that the host ends while workers start runs in them."""

    def __init__(self, reader_session: str) -> None:
        self.reader_session = reader_session
        self._lock = threading.Lock()
        self._open: list[str] = []
        self.created: list[str] = [reader_session]
        self.ended: list[str] = []

    def pick(self, rng_value: float, index: int) -> str:
        with self._lock:
            if rng_value < 0.35 or not self._open:
                return self.reader_session
            return self._open[index % len(self._open)]

    def add(self, session_id: str) -> None:
        with self._lock:
            self._open.append(session_id)
            self.created.append(session_id)

    def take_oldest(self, keep: int) -> str | None:
        with self._lock:
            if len(self._open) <= keep:
                return None
            session_id = self._open.pop(0)
            self.ended.append(session_id)
            return session_id


class Host:
    """Creates a session every few hundred milliseconds and ends the oldest beyond three."""

    def __init__(self, store: HttpStore, sessions: Sessions, seed: int) -> None:
        self.store = store
        self.sessions = sessions
        self.ledger = Ledger()
        self.seed = seed

    def run(self, done: threading.Event) -> None:
        import random

        rng = random.Random(self.seed)
        n = 0
        while not done.is_set():
            n += 1
            session_id = f"host-{self.seed}-s{n}"
            created = self.call(self.store.create_session, session_id, at(n))
            if rng.random() < 0.3:
                again = self.call(self.store.create_session, session_id, at(n + 99))
                if again != created:
                    raise Unexpected(f"create_session retry of {session_id} changed: {again}")
            self.sessions.add(session_id)
            ending = self.sessions.take_oldest(keep=3)
            if ending is not None:
                ended = self.call(self.store.end_session, ending, at(1000 + n))
                again = self.call(self.store.end_session, ending, at(2000 + n))
                if ended.status is not SessionStatus.ENDED or again != ended:
                    raise Unexpected(f"end_session of {ending}: {ended} then {again}")
            done.wait(rng.uniform(0.1, 0.4))

    def call(self, operation: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        self.ledger.operations += 1
        return operation(*args, **kwargs)


# --- the tailing reader ------------------------------------------------------------------


class Reader:
    """Pages one session's record list for as long as the load runs.

    A short last page has no next cursor, so the reader asks again from the same cursor
    and keeps only what follows the records it already has from that page.
    """

    def __init__(self, store: HttpStore, session_id: str, limit: int = 7) -> None:
        self.store = store
        self.session_id = session_id
        self.limit = limit
        self.seen: list[Record] = []
        self.pages = 0
        self.ledger = Ledger()

    def run(self, done: threading.Event) -> None:
        cursor, known = "", 0
        while True:
            finished = done.is_set()
            self.ledger.operations += 1
            page = self.store.list_session_run_records(self.session_id, cursor, self.limit)
            self.pages += 1
            if page.records[:known] != self.seen[len(self.seen) - known :]:
                raise Unexpected(f"page after cursor {cursor!r} changed what was already read")
            fresh = page.records[known:]
            self.seen.extend(fresh)
            if page.next_cursor:
                cursor, known = page.next_cursor, 0
            else:
                known = len(page.records)
                if finished and not fresh:
                    return
                if not fresh:
                    time.sleep(0.01)


# --- workers -----------------------------------------------------------------------------

REASONS = ("user_requested", "operator_abort", "budget_exceeded", "policy_violation")


class Worker:
    """Lives agent-run lifecycles; owns every run it starts, so it knows each ID in advance.

    ``lossy``: a first attempt may legitimately come back as an exact retry
    (``inserted = False``), because its response was lost after the commit (a killed
    replica, a terminated database connection) and the client or the store retried.
    """

    def __init__(
        self,
        name: str,
        store: HttpStore,
        sessions: Sessions,
        seed: int,
        *,
        lossy: bool,
        batches: bool = False,
    ) -> None:
        import random

        self.name = name
        self.agent = f"agent-{name}"
        self.store = store
        self.sessions = sessions
        self.rng = random.Random(seed)
        self.lossy = lossy
        self.batches = batches
        self.ledger = Ledger()
        self.counts: dict[str, int] = {}
        self.ticks = 0

    # --- bookkeeping ---

    def clock(self) -> datetime:
        self.ticks += 1
        return at(self.ticks)

    def call(self, operation: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        self.ledger.operations += 1
        return operation(*args, **kwargs)

    def expect(self, condition: bool, message: str) -> None:
        if not condition:
            raise Unexpected(f"{self.name}: {message}")

    def stored(self, rec: Record, result: AppendResult) -> None:
        """A first write succeeded: it must carry the run's next ID."""
        expected_id = str(self.counts.get(rec.run_id, 0) + 1)
        self.expect(
            result.id == expected_id,
            f"{rec.run_id}/{rec.event_key} got ID {result.id}, the run's next is {expected_id}",
        )
        self.expect(
            result.inserted or self.lossy,
            f"{rec.run_id}/{rec.event_key}: a first write answered inserted = false",
        )
        self.counts[rec.run_id] = int(expected_id)
        self.ledger.written.append(Written(rec, result.id))

    def retried(self, rec: Record, first: AppendResult | None, again: AppendResult | None) -> None:
        """An exact retry: the original ID, ``inserted = false``."""
        self.expect(
            first is not None and again is not None and again.id == first.id and not again.inserted,
            f"exact retry of {rec.run_id}/{rec.event_key} answered {again}, first {first}",
        )

    def refused(
        self, operation: Callable[[], object], error: type[StoreError], run_id: str, key: str
    ) -> None:
        self.ledger.operations += 1
        try:
            operation()
        except error as exc:
            self.ledger.refused.append(Refused(run_id, key, exc.code))
            return
        raise Unexpected(f"{self.name}: {run_id}/{key} should fail with {error.__name__}")

    def maybe(self, probability: float) -> bool:
        return self.rng.random() < probability

    # --- the load ---

    def run(self, over: Callable[[], bool], max_episodes: int) -> None:
        for episode in range(max_episodes):
            if over():
                return
            self.episode(episode)

    def episode(self, n: int) -> None:
        session_id = self.sessions.pick(self.rng.random(), self.rng.randrange(1000))
        root = run_start(
            run_id=f"{self.name}-r{n}",
            agent_id=self.agent,
            session_id=session_id,
            started_at=self.clock(),
            labels={"worker": self.name},
        )
        if self.start(root) is RunStartOutcome.STOP:
            self.after_end(root)
            return
        self.appends(root)
        if self.maybe(0.3):
            self.child(root)
        ending = self.rng.random()
        if ending < 0.3:
            self.finish(root, self.rng.choice((RunStatus.COMPLETED, RunStatus.FAILED)))
        elif ending < 0.55:
            self.cancel(root)
        elif ending < 0.85:
            self.suspend_and_continue(root)
        else:
            self.finish(root, RunStatus.CANCELED)  # engine_canceled: no request stored
        self.after_end(root)

    def start(self, run: RunStart, parent: RunStart | None = None) -> RunStartOutcome:
        """A root or child start, maybe retried exactly; notes the run's expected end."""
        started, canceled = started_record(run), canceled_record(run)
        link = None
        if parent is None:

            def start() -> tuple[RunStartOutcome, RunStatus, list[AppendResult | None]]:
                r = self.store.start_root_run(run, started, canceled)
                return r.outcome, r.run_status, [r.started, r.canceled]
        else:
            linked = link_record(
                parent, run, tool_call_id=f"call-{run.run_id}", timestamp=self.clock()
            )
            link = linked

            def start() -> tuple[RunStartOutcome, RunStatus, list[AppendResult | None]]:
                r = self.store.start_child_run(run, linked, started, canceled)
                return r.outcome, r.run_status, [r.started, r.canceled, r.parent_record]

        records = [started, canceled] if link is None else [started, canceled, link]
        outcome, status, results = self.call(start)
        stop = outcome is RunStartOutcome.STOP
        self.expect(
            status is (RunStatus.CANCELED if stop else RunStatus.RUNNING)
            and (results[1] is not None) == stop,
            f"start of {run.run_id}: outcome {outcome}, status {status}, results {results}",
        )
        if link is not None:
            assert results[2] is not None
            self.stored(link, results[2])
        assert results[0] is not None
        self.stored(started, results[0])
        # The status is read in the answering transaction (CONTRACT.md 2, item 4): a stop start
        # always reads `ended`; a proceed start reads `active`, or `ended` when its answer
        # came from an exact retry (inserted = false) after the session ended meanwhile.
        session_status = results[0].session_status
        self.expect(
            session_status is SessionStatus.ENDED
            if stop
            else session_status is SessionStatus.ACTIVE
            or (session_status is SessionStatus.ENDED and not results[0].inserted),
            f"start of {run.run_id} ({outcome}, inserted {results[0].inserted}) read session "
            f"status {session_status}",
        )
        if results[1] is not None:
            self.stored(canceled, results[1])
        self.ledger.expected[run.run_id] = Expected(
            run.session_id,
            RunStatus.CANCELED if stop else RunStatus.RUNNING,
            "session_ended" if stop else "",
        )
        if self.maybe(0.3):
            again_outcome, again_status, again = self.call(start)
            self.expect(
                (again_outcome, again_status) == (outcome, status),
                f"retried start of {run.run_id}: {again_outcome}/{again_status}",
            )
            for rec, first, second in zip(records, results, again, strict=True):
                if first is not None or second is not None:
                    self.retried(rec, first, second)
        return outcome

    def appends(self, run: RunStart) -> None:
        if self.batches and self.maybe(0.5):
            self.batch(run)
        for _ in range(self.rng.randint(1, 4)):
            tick = self.ticks
            rec = record(
                run,
                event_key=f"note-{tick}",
                payload=dumps({"worker": self.name, "tick": tick, "text": "é\u0000✓"}),
                timestamp=self.clock(),
                turn_id=f"turn-{tick % 3}",
            )
            result = self.call(self.store.append_run_record, rec)
            self.stored(rec, result)
            if self.maybe(0.2):
                again = self.call(self.store.append_run_record, rec)
                self.retried(rec, result, again)
            if self.maybe(0.1):
                changed = replace(rec, payload=dumps({"changed": True}))
                self.refused(
                    partial(self.store.append_run_record, changed),
                    EventConflictError,
                    run.run_id,
                    rec.event_key,
                )

    def batch(self, run: RunStart) -> None:
        """A batch of new records (11.2): consecutive IDs in input order, maybe retried
        exactly (every record its original ID, ``inserted = false``)."""
        records = []
        for _ in range(self.rng.randint(2, 6)):
            tick = self.ticks
            records.append(
                record(
                    run,
                    event_key=f"batch-{tick}",
                    payload=dumps({"worker": self.name, "tick": tick, "batch": True}),
                    timestamp=self.clock(),
                    turn_id=f"turn-{tick % 3}",
                )
            )
        results = self.call(self.store.append_run_records, run.run_id, records)
        self.expect(
            len(results) == len(records), f"batch on {run.run_id} answered {len(results)} results"
        )
        for rec, result in zip(records, results, strict=False):
            self.stored(rec, result)
        if self.maybe(0.3):
            again = self.call(self.store.append_run_records, run.run_id, records)
            self.expect(len(again) == len(records), f"batch retry on {run.run_id}: {again}")
            for rec, first, second in zip(records, results, again, strict=False):
                self.retried(rec, first, second)

    def child(self, parent: RunStart) -> None:
        child = run_start(
            run_id=f"{parent.run_id}-child",
            agent_id=f"{self.agent}-helper",
            session_id=parent.session_id,
            parent_run_id=parent.run_id,
            started_at=self.clock(),
        )
        if self.start(child, parent) is RunStartOutcome.PROCEED:
            self.appends(child)
            self.finish(child, RunStatus.COMPLETED)
        self.after_end(child)

    def write_once(self, rec: Record, operation: Callable[[], AppendResult]) -> None:
        """A lifecycle write, maybe retried exactly."""
        result = self.call(operation)
        self.stored(rec, result)
        if self.maybe(0.3):
            self.retried(rec, result, self.call(operation))

    def finish(self, run: RunStart, status: RunStatus, reason: str = "") -> None:
        rec = terminal_record(run, status, reason=reason)
        self.write_once(rec, lambda: self.store.record_run_terminal(run.run_id, status, rec))
        self.ledger.expected[run.run_id] = replace(
            self.ledger.expected[run.run_id],
            status=status,
            cancellation_reason=reason,
        )

    def cancel(self, run: RunStart) -> None:
        reason, other = self.rng.sample(REASONS, 2)
        rec = cancellation_record(run, reason)
        self.write_once(rec, lambda: self.store.record_run_cancellation(run.run_id, reason, rec))
        competing = cancellation_record(run, other, event_key="cancel-again")
        self.refused(
            lambda: self.store.record_run_cancellation(run.run_id, other, competing),
            RunCancellationConflictError,
            run.run_id,
            competing.event_key,
        )
        self.finish(run, RunStatus.CANCELED, reason)

    def suspend_and_continue(self, run: RunStart) -> None:
        cp = checkpoint(f"cp-{run.run_id}", self.rng.randbytes(24))
        rec = suspended_record(run, cp.id)
        self.write_once(rec, lambda: self.store.record_run_suspension(run.run_id, cp, rec))
        self.ledger.expected[run.run_id] = replace(
            self.ledger.expected[run.run_id], status=RunStatus.SUSPENDED, checkpoint=cp
        )
        late = terminal_record(run, RunStatus.COMPLETED)
        self.refused(
            lambda: self.store.record_run_terminal(run.run_id, RunStatus.COMPLETED, late),
            RunTerminalConflictError,
            run.run_id,
            late.event_key,
        )
        successor = run_start(
            run_id=f"{run.run_id}-next",
            agent_id=run.agent_id,
            session_id=run.session_id,
            predecessor_run_id=run.run_id,
            started_at=self.clock(),
            labels=run.labels,
        )
        if self.start(successor) is RunStartOutcome.PROCEED:
            self.appends(successor)
            self.finish(successor, RunStatus.COMPLETED)
        self.after_end(successor)

    def after_end(self, run: RunStart) -> None:
        late = record(run, event_key=f"late-{self.ticks}", timestamp=self.clock())
        self.refused(
            lambda: self.store.append_run_record(late),
            RunNotActiveError,
            run.run_id,
            late.event_key,
        )


# --- running it --------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadShape:
    """How much load runs and how patient its clients are.

    ``workers`` threads each stop after ``duration`` seconds or ``max_episodes`` episodes
    (past ``duration`` while a disruption still owes its minimum, see ``run_load``);
    ``lossy``: a first write may come back as an exact retry (see ``Worker``); ``retries``
    and ``deadline`` are the clients' retry budget; ``batches``: workers send batches too.
    """

    workers: int = 8
    duration: float = 15.0
    max_episodes: int = 400
    lossy: bool = False
    retries: int = 3
    deadline: float = 30.0
    #: Workers also send batches (``append_run_records``, 11.2) on about half their runs.
    batches: bool = False


DEFAULT_SHAPE: Final = LoadShape()


@dataclass
class LoadResult:
    ledger: Ledger
    traffic: Traffic
    reader: Reader
    sessions: Sessions
    elapsed: float


@dataclass
class Crew:
    """Who issues the load: the host, the tailing reader and the workers."""

    host: Host
    reader: Reader
    workers: list[Worker]

    def ledgers(self) -> list[Ledger]:
        return [self.host.ledger, self.reader.ledger, *(worker.ledger for worker in self.workers)]

    def stores(self) -> list[HttpStore]:
        return [self.host.store, self.reader.store, *(worker.store for worker in self.workers)]


def run_load(
    cluster: Sequence[Replica],
    *,
    seed: int,
    shape: LoadShape = DEFAULT_SHAPE,
    disrupt: Callable[[threading.Event], None] | None = None,
    disrupted: threading.Event | None = None,
) -> LoadResult:
    """Run the load for ``shape.duration`` seconds (each worker also stops at
    ``shape.max_episodes``).

    ``disrupt`` runs in its own thread with an event set when the workers are done; the
    host and the reader stop after the workers, so the reader's last read sees everything.
    When ``disrupted`` is given, the workers go on past ``duration`` until it is set (by
    ``disrupt``, once it has done the least a test needs) or another ``duration`` has
    passed: on a slow machine each disruption takes longer, and the load waits for it.
    """
    started = time.monotonic()
    ledger, traffic = Ledger(), Traffic()
    balancers: list[Balancer] = []

    def client(offset: int) -> HttpStore:
        store, balancer = balanced_store(
            cluster, seed * 1000 + offset, retries=shape.retries, deadline=shape.deadline
        )
        balancers.append(balancer)
        return store

    reader_session = f"reader-{seed}"
    admin = client(0)
    admin.create_session(reader_session, at(0))
    sessions = Sessions(reader_session)
    crew = Crew(
        Host(client(1), sessions, seed),
        Reader(client(2), reader_session),
        [
            Worker(
                f"w{seed}-{index}",
                client(10 + index),
                sessions,
                seed * 1000 + index,
                lossy=shape.lossy,
                batches=shape.batches,
            )
            for index in range(shape.workers)
        ],
    )
    run_threads(crew, shape, disrupt, disrupted, ledger, started)
    for part in crew.ledgers():
        ledger.merge(part)
    ledger.operations += 1  # the reader session's creation
    for store in (admin, *crew.stores()):
        store.close()
    for balancer in balancers:
        traffic.add(balancer.traffic)
    return LoadResult(ledger, traffic, crew.reader, sessions, time.monotonic() - started)


def run_threads(
    crew: Crew,
    shape: LoadShape,
    disrupt: Callable[[threading.Event], None] | None,
    disrupted: threading.Event | None,
    ledger: Ledger,
    started: float,
) -> None:
    """Run the crew (and ``disrupt``) in threads until the workers are done, then stop the
    rest; a thread still alive past its bound is a problem of ``ledger``."""
    workers_done, background_done = threading.Event(), threading.Event()
    stop_at = time.monotonic() + shape.duration
    latest = stop_at + shape.duration

    def over() -> bool:
        now = time.monotonic()
        if now < stop_at:
            return False
        return disrupted is None or disrupted.is_set() or now >= latest

    host, reader = crew.host, crew.reader
    background = [
        threading.Thread(target=guarded(ledger, "host", lambda: host.run(background_done))),
        threading.Thread(target=guarded(ledger, "reader", lambda: reader.run(background_done))),
    ]
    if disrupt is not None:
        background.append(
            threading.Thread(target=guarded(ledger, "disrupt", lambda: disrupt(workers_done)))
        )
    threads = [
        threading.Thread(
            target=guarded(ledger, worker.name, partial(worker.run, over, shape.max_episodes))
        )
        for worker in crew.workers
    ]
    for thread in [*background, *threads]:
        thread.start()
    limit = 2 * shape.duration + shape.deadline + 60
    for thread in threads:
        thread.join(timeout=max(1.0, started + limit - time.monotonic()))
    workers_done.set()
    if disrupt is not None:
        background[-1].join(timeout=60)
    background_done.set()
    for thread in background:
        thread.join(timeout=shape.deadline + 30)
    for thread in [*background, *threads]:
        if thread.is_alive():
            ledger.problems.append(f"a load thread did not stop within its bound: {thread.name}")


# --- the checks --------------------------------------------------------------------------


@dataclass
class Findings:
    """What the checks found; ``problems`` must be empty."""

    violations: int = 0
    records_checked: int = 0
    verify_records: int = 0
    runs_checked: int = 0
    problems: list[str] = field(default_factory=list)


def check_load(engine: Engine, load: LoadResult) -> Findings:
    """Verify the database, then compare the ledger and the reader with what is stored."""
    findings = Findings(problems=list(load.ledger.problems))
    report = verify_database(engine)
    findings.violations = len(report.violations)
    findings.verify_records = report.records_checked
    findings.problems += [
        f"verify: {v.invariant} run={v.run_id} session={v.session_id}: {v.detail}"
        for v in report.violations
    ]
    store = SqlStore(engine)
    check_ledger(engine, store, load.ledger, findings)
    check_reader(store, load.reader, findings)
    return findings


def check_ledger(engine: Engine, store: SqlStore, ledger: Ledger, findings: Findings) -> None:
    """Every write seen to succeed is stored once with its ID; nothing else is stored;
    every refused write left no trace; every run ends as its worker expects."""
    problems = findings.problems
    written = written_by_run(ledger, problems)
    refused: dict[str, list[Refused]] = {}
    for r in ledger.refused:
        refused.setdefault(r.run_id, []).append(r)
    check_stored_runs(engine, ledger, problems)
    for run_id in sorted(set(ledger.expected) | set(written)):
        stored = all_records(store, run_id)
        findings.records_checked += len(stored)
        findings.runs_checked += 1
        check_records(run_id, stored, written.get(run_id, {}), refused.get(run_id, []), problems)
        expected = ledger.expected.get(run_id)
        if expected is not None:
            check_run(store, run_id, expected, problems)


def written_by_run(ledger: Ledger, problems: list[str]) -> dict[str, dict[str, Written]]:
    """The writes seen to succeed by run and event key; a key given two IDs is a problem."""
    written: dict[str, dict[str, Written]] = {}
    for w in ledger.written:
        earlier = written.setdefault(w.record.run_id, {}).setdefault(w.record.event_key, w)
        if earlier.id != w.id:
            problems.append(f"{w.record.run_id}/{w.record.event_key} got IDs {earlier.id}, {w.id}")
    return written


def check_stored_runs(engine: Engine, ledger: Ledger, problems: list[str]) -> None:
    """Every stored run is one whose start a worker saw succeed."""
    with engine.connect() as conn:
        stored_runs = set(conn.execute(sa.select(runs.c.run_id)).scalars())
    for run_id in sorted(stored_runs - set(ledger.expected)):
        problems.append(f"run {run_id} is stored but no worker saw its start succeed")


def check_records(
    run_id: str,
    stored: list[Record],
    mine: dict[str, Written],
    refused: list[Refused],
    problems: list[str],
) -> None:
    """A run's stored records against the writes its worker saw succeed and refused."""
    check_record_ids(run_id, stored, problems)
    by_key = {r.event_key: r for r in stored}
    check_written_stored(run_id, by_key, mine, problems)
    for key in sorted(set(by_key) - set(mine)):
        problems.append(f"{run_id}/{key} is stored but no worker saw it succeed")
    for r in refused:
        if r.event_key in by_key and r.event_key not in mine:
            problems.append(f"{run_id}/{r.event_key} was refused ({r.code}) yet stored")


def check_record_ids(run_id: str, stored: list[Record], problems: list[str]) -> None:
    """A run's record IDs are 1, 2, 3, ... and each event key is stored once."""
    if [r.id for r in stored] != [str(i) for i in range(1, len(stored) + 1)]:
        problems.append(f"run {run_id} has record IDs {[r.id for r in stored]}")
    twice = [key for key, n in Counter(r.event_key for r in stored).items() if n > 1]
    if twice:
        problems.append(f"run {run_id} stores event keys {twice} more than once")


def check_written_stored(
    run_id: str, by_key: dict[str, Record], mine: dict[str, Written], problems: list[str]
) -> None:
    """Every write seen to succeed is stored, as sent, with the ID it was given."""
    for key, w in mine.items():
        found = by_key.get(key)
        if found is None:
            problems.append(f"{run_id}/{key} succeeded with ID {w.id} but is not stored")
        elif found.id != w.id or not found.same_as(w.record):
            problems.append(f"{run_id}/{key} succeeded as ID {w.id}, stored as {found}")


def check_run(store: SqlStore, run_id: str, expected: Expected, problems: list[str]) -> None:
    meta = store.load_run(run_id)
    seen = (meta.session_id, meta.status, meta.cancellation_reason)
    wanted = (expected.session_id, expected.status, expected.cancellation_reason)
    if seen != wanted:
        problems.append(f"run {run_id} is {seen}, its worker expects {wanted}")
    if expected.checkpoint is not None and store.load_run_suspension(run_id) != expected.checkpoint:
        problems.append(f"run {run_id} holds another checkpoint than the one stored")


def check_reader(store: SqlStore, reader: Reader, findings: Findings) -> None:
    """The tailing reader saw the session's whole final list, each record once, in order."""
    final = all_session_records(store, reader.session_id)
    seen = [(r.run_id, r.id) for r in reader.seen]
    if len(seen) != len(set(seen)):
        findings.problems.append("the session reader saw a record twice")
    if reader.seen != final:
        missing = len({(r.run_id, r.id) for r in final} - set(seen))
        findings.problems.append(
            f"the session reader saw {len(seen)} records, the final list holds {len(final)} "
            f"({missing} never seen, or the order differs)"
        )


def figures(title: str, load: LoadResult, findings: Findings, **extra: int) -> str:
    """The one line each load test prints."""
    parts = [
        f"[{title}] {load.elapsed:.1f} s",
        f"operations issued {load.ledger.operations}",
        f"HTTP requests {load.traffic.requests}",
        f"503 answers {load.traffic.unavailable}",
        f"connection errors {load.traffic.connection_errors}",
        *(f"{name.replace('_', ' ')} {value}" for name, value in extra.items()),
        f"runs {findings.runs_checked}",
        f"sessions {len(load.sessions.created)} ({len(load.sessions.ended)} ended under load)",
        f"writes seen to succeed {len(load.ledger.written)}",
        f"writes refused {len(load.ledger.refused)}",
        f"reader pages {load.reader.pages} ({len(load.reader.seen)} records)",
        f"violations found {findings.violations}",
        f"records checked {findings.records_checked} (ledger) / {findings.verify_records} (verify)",
        f"problems {len(findings.problems)}",
    ]
    return ", ".join(parts)


def seed_from_environment(default: int) -> int:
    """``RUNTIME_STORE_RELIABILITY_SEED`` replays another random schedule; else ``default``."""
    import os

    return int(os.environ.get("RUNTIME_STORE_RELIABILITY_SEED", default))
