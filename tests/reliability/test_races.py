"""Focused races over two replicas: each is released by a barrier, each request of each
client goes to a random replica, and the database alone decides who wins."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage.database.tables import checkpoints, run_records, runs
from app.storage.verify import verify_database
from runtime_store_client import (
    AppendResult,
    ChildRunStartResult,
    HttpStore,
    OneShotRunStartResult,
    Record,
    RootRunStartResult,
    RunCancellationConflictError,
    RunConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    Session,
    SessionPurgedError,
    SessionStatus,
    StoreError,
    UnavailableError,
)
from tests.contract.builders import (
    all_records,
    all_session_records,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    new_session,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)

from .cluster import Replica, balanced_store, fresh_database, replicas
from .load import seed_from_environment

T = TypeVar("T")
SEED = seed_from_environment(4)
CLIENTS = 16


@dataclass
class Races:
    """Two replicas over one database, and one balanced client per racing thread."""

    cluster: list[Replica]
    engine: Engine
    clients: list[HttpStore]

    @property
    def store(self) -> HttpStore:
        return self.clients[0]

    def at_once(self, calls: Sequence[Callable[[HttpStore], T]]) -> list[T | StoreError]:
        """Each call in its own thread and client, released together by a barrier.

        A contract error is returned in place of a result; anything else fails the test.
        """
        barrier = threading.Barrier(len(calls))

        def one(index: int) -> T | StoreError:
            barrier.wait()
            try:
                return calls[index](self.clients[index])
            except StoreError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            return list(pool.map(one, range(len(calls))))

    def assert_verified(self) -> None:
        report = verify_database(self.engine)
        assert report.ok, [str(violation) for violation in report.violations]


@pytest.fixture(scope="module")
def races(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Races]:
    log_dir: Path = tmp_path_factory.mktemp("race-replicas")
    with fresh_database(postgres_url) as database, replicas(database.url, log_dir) as cluster:
        engine = database.engine()
        clients = [balanced_store(cluster, SEED * 100 + index)[0] for index in range(CLIENTS)]
        try:
            yield Races(cluster, engine, clients)
        finally:
            for client in clients:
                client.close()
            engine.dispose()


def contract_error(result: object) -> StoreError | None:
    """The contract error a racer got, or ``None`` for a result; never ``unavailable``."""
    assert not isinstance(result, UnavailableError), result
    return result if isinstance(result, StoreError) else None


def start_root(store: HttpStore, run: RunStart) -> RootRunStartResult:
    return store.start_root_run(run, started_record(run), canceled_record(run))


def cancel(store: HttpStore, run_id: str, reason: str, intent: Record) -> AppendResult:
    return store.record_run_cancellation(run_id, reason, intent)


def append(store: HttpStore, rec: Record) -> AppendResult:
    return store.append_run_record(rec)


def create(store: HttpStore, session_id: str, ms: int) -> Session:
    return store.create_session(session_id, at(ms))


def purge(store: HttpStore, session_id: str) -> None:
    store.purge_session(session_id)


# --- the same start from 16 workers ------------------------------------------------------


def test_the_same_root_start_from_16_workers_inserts_once_and_every_retry_gets_its_ids(
    races: Races,
) -> None:
    session = new_session(races.store, uid("sess"))
    run = run_start(session_id=session.id, labels={"site": "one"})

    results = races.at_once([lambda store: start_root(store, run)] * CLIENTS)

    assert all(isinstance(result, RootRunStartResult) for result in results), results
    starts = [result for result in results if isinstance(result, RootRunStartResult)]
    assert sum(result.started.inserted for result in starts) == 1
    assert {(result.started.id, result.outcome, result.canceled) for result in starts} == {
        ("1", RunStartOutcome.PROCEED, None)
    }
    assert [r.type for r in all_session_records(races.store, session.id)] == ["run_started"]
    races.assert_verified()


def test_the_same_child_start_from_16_workers_links_and_inserts_once(races: Races) -> None:
    session = new_session(races.store, uid("sess"))
    parent_run = run_start(session_id=session.id)
    parent = start_root(races.store, parent_run)
    child = run_start(session_id=session.id, parent_run_id=parent_run.run_id, agent_id="helper")
    link = link_record(parent_run, child)

    results = races.at_once(
        [
            lambda store: store.start_child_run(
                child, link, started_record(child), canceled_record(child)
            )
        ]
        * CLIENTS
    )

    assert parent.outcome is RunStartOutcome.PROCEED
    assert all(isinstance(result, ChildRunStartResult) for result in results), results
    starts = [result for result in results if isinstance(result, ChildRunStartResult)]
    assert sum(result.started.inserted for result in starts) == 1
    assert sum(result.parent_record.inserted for result in starts) == 1
    assert {(result.parent_record.id, result.started.id) for result in starts} == {("2", "1")}
    assert [r.type for r in all_records(races.store, parent_run.run_id)] == [
        "run_started",
        "child_run_linked",
    ]
    assert [r.type for r in all_records(races.store, child.run_id)] == ["run_started"]
    races.assert_verified()


def test_the_same_one_shot_start_from_16_workers_inserts_once(races: Races) -> None:
    # No session row to lock: the run's primary key decides, losers come back as retries.
    run = run_start()
    started = started_record(run)

    results = races.at_once([lambda store: store.start_one_shot_run(run, started)] * CLIENTS)

    assert all(isinstance(result, OneShotRunStartResult) for result in results), results
    starts = [result for result in results if isinstance(result, OneShotRunStartResult)]
    assert sum(result.record.inserted for result in starts) == 1
    assert {(result.record.id, result.run_status) for result in starts} == {
        ("1", RunStatus.RUNNING)
    }
    assert [r.type for r in all_records(races.store, run.run_id)] == ["run_started"]
    races.assert_verified()


def test_the_same_session_created_from_16_workers_exists_once_with_the_first_creation_time(
    races: Races,
) -> None:
    session_id = uid("sess")

    results = races.at_once(
        [partial(create, session_id=session_id, ms=index) for index in range(CLIENTS)]
    )

    assert all(isinstance(result, Session) for result in results), results
    assert len({result for result in results if isinstance(result, Session)}) == 1
    assert races.store.load_session(session_id) == results[0]


# --- starts against end_session ----------------------------------------------------------


def test_starts_racing_end_session_each_proceed_or_stop_and_a_stopped_run_holds_its_two_records(
    races: Races,
) -> None:
    tally = {RunStartOutcome.PROCEED: 0, RunStartOutcome.STOP: 0}
    for round_ in range(6):
        session = new_session(races.store, uid("sess"))
        started = [run_start(session_id=session.id, started_at=at(round_)) for _ in range(12)]

        def end(store: HttpStore, session_id: str = session.id) -> object:
            return store.end_session(session_id, at(100))

        starters = [partial(start_root, run=run) for run in started]
        calls: list[Callable[[HttpStore], object]] = [*starters[:6], end, *starters[6:]]
        results = races.at_once(calls)

        ended = results.pop(6)
        assert contract_error(ended) is None, ended
        order = [(r.run_id, r.type) for r in all_session_records(races.store, session.id)]
        outcomes: dict[str, RunStartOutcome] = {}
        for run, result in zip(started, results, strict=True):
            assert isinstance(result, RootRunStartResult), result
            outcomes[run.run_id] = result.outcome
            tally[result.outcome] += 1
            stored = all_records(races.store, run.run_id)
            meta = races.store.load_run(run.run_id)
            if result.outcome is RunStartOutcome.PROCEED:
                assert result.run_status is RunStatus.RUNNING
                assert result.canceled is None
                assert [r.type for r in stored] == ["run_started"]
                assert (meta.status, meta.cancellation_reason) == (RunStatus.RUNNING, "")
            else:
                assert result.run_status is RunStatus.CANCELED
                assert result.canceled is not None
                assert (result.started.id, result.canceled.id) == ("1", "2")
                assert result.started.session_status is SessionStatus.ENDED
                assert [r.type for r in stored] == ["run_started", "run_completed"]
                assert (meta.status, meta.cancellation_reason) == (
                    RunStatus.CANCELED,
                    "session_ended",
                )
        # Starts serialise with end_session on the session: every proceed commits first.
        kinds = [outcomes[run_id] for run_id, type_ in order if type_ == "run_started"]
        assert kinds == sorted(kinds, key=lambda outcome: outcome is RunStartOutcome.STOP)
    print(
        "\n[start vs end_session] outcomes over 6 rounds of 12 starts: "
        + ", ".join(f"{outcome.value} {n}" for outcome, n in tally.items())
    )
    races.assert_verified()


# --- eight cancellation reasons at once --------------------------------------------------

REASONS = (
    "user_requested",
    "engine_canceled",
    "operator_abort",
    "budget_exceeded",
    "policy_violation",
    "deadline",
    "duplicate",
    "superseded",
)


def test_eight_cancellation_reasons_at_once_exactly_one_wins_and_the_others_conflict(
    races: Races,
) -> None:
    winners: list[str] = []
    for _ in range(4):
        session = new_session(races.store, uid("sess"))
        run = run_start(session_id=session.id)
        start_root(races.store, run)
        intents = [
            cancellation_record(run, reason, event_key=f"cancel-{index}")
            for index, reason in enumerate(REASONS)
        ]

        results = races.at_once(
            [
                partial(cancel, run_id=run.run_id, reason=reason, intent=intent)
                for reason, intent in zip(REASONS, intents, strict=True)
            ]
        )

        won = [i for i, result in enumerate(results) if isinstance(result, AppendResult)]
        assert len(won) == 1, results
        (winner,) = won
        winners.append(REASONS[winner])
        assert results[winner] == AppendResult(
            id="2", inserted=True, session_status=SessionStatus.ACTIVE
        )
        lost = [result for i, result in enumerate(results) if i != winner]
        assert all(isinstance(result, RunCancellationConflictError) for result in lost), lost
        meta = races.store.load_run(run.run_id)
        assert (meta.status, meta.cancellation_reason) == (RunStatus.RUNNING, REASONS[winner])
        assert [(r.type, r.event_key) for r in all_records(races.store, run.run_id)] == [
            ("run_started", "start"),
            ("runtime.cancellation_intent", f"cancel-{winner}"),
        ]
        races.store.record_run_terminal(
            run.run_id,
            RunStatus.CANCELED,
            terminal_record(run, RunStatus.CANCELED, reason=REASONS[winner]),
        )
    print(f"\n[cancellation reasons] winners: {winners}")
    races.assert_verified()


# --- appends against the terminal --------------------------------------------------------


@dataclass
class Append:
    record: Record
    sent: float
    result: AppendResult | StoreError


def test_appends_racing_the_terminal_are_stored_before_it_or_refused_run_not_active(
    races: Races,
) -> None:
    session = new_session(races.store, uid("sess"))
    run = run_start(session_id=session.id)
    start_root(races.store, run)
    appended: list[list[Append]] = [[] for _ in range(4)]
    enough = threading.Event()
    finished_at: list[float] = []

    def appender(index: int) -> Callable[[HttpStore], None]:
        def loop(store: HttpStore) -> None:
            for n in range(500):
                rec = record(run, event_key=f"a{index}-{n}", payload=b'{"n":%d}' % n)
                sent = time.monotonic()
                try:
                    result: AppendResult | StoreError = store.append_run_record(rec)
                except StoreError as exc:
                    result = exc
                appended[index].append(Append(rec, sent, result))
                if sum(len(a) for a in appended) >= 60:
                    enough.set()
                if isinstance(result, StoreError):
                    return

        return loop

    def terminal(store: HttpStore) -> AppendResult:
        assert enough.wait(timeout=20)
        result = store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
        finished_at.append(time.monotonic())
        return result

    results = races.at_once([*(appender(i) for i in range(4)), terminal])

    done = results[-1]
    assert isinstance(done, AppendResult), done
    log = all_records(races.store, run.run_id)
    assert (log[-1].type, log[-1].id) == ("run_completed", done.id)
    by_key = {r.event_key: r for r in log}
    attempts = [a for per_appender in appended for a in per_appender]
    stored = [a for a in attempts if isinstance(a.result, AppendResult)]
    refused = [a for a in attempts if not isinstance(a.result, AppendResult)]
    for a in stored:
        assert isinstance(a.result, AppendResult)
        found = by_key.get(a.record.event_key)
        assert found is not None, a
        assert found.id == a.result.id, a
        assert int(a.result.id) < int(done.id)
    for a in refused:
        assert isinstance(a.result, RunNotActiveError), a.result
        assert a.record.event_key not in by_key
    late = [a for a in attempts if a.sent > finished_at[0]]
    assert all(isinstance(a.result, RunNotActiveError) for a in late)
    assert len(log) == 1 + len(stored) + 1
    assert all(isinstance(per[-1].result, RunNotActiveError) for per in appended)
    print(
        f"\n[append vs terminal] {len(stored)} appends stored before run_completed "
        f"(ID {done.id}), {len(refused)} refused run_not_active"
    )
    races.assert_verified()


# --- purge against late writes -----------------------------------------------------------


def test_purge_racing_a_late_start_or_append_removes_everything_whichever_lands_first(
    races: Races,
) -> None:
    tally = {"before the purge": 0, "refused session_purged": 0}
    for _ in range(6):
        store = races.store
        session = new_session(store, uid("sess"))
        done = run_start(session_id=session.id)
        start_root(store, done)
        note = record(done, event_key="note")
        store.append_run_record(note)
        store.record_run_terminal(
            done.run_id, RunStatus.COMPLETED, terminal_record(done, RunStatus.COMPLETED)
        )
        held = run_start(session_id=session.id)
        start_root(store, held)
        store.record_run_suspension(held.run_id, checkpoint(), suspended_record(held))
        store.end_session(session.id, at(50))
        late = run_start(session_id=session.id)
        successor = run_start(session_id=session.id, predecessor_run_id=held.run_id)
        fresh = record(done, event_key="fresh")

        calls: list[Callable[[HttpStore], object]] = [
            partial(purge, session_id=session.id),
            partial(start_root, run=late),
            partial(append, rec=note),
            partial(append, rec=fresh),
            partial(start_root, run=successor),
        ]
        results = races.at_once(calls)

        purged, late_start, retry, new_append, continuation = results
        assert purged is None, purged
        for start in (late_start, continuation):
            if isinstance(start, RootRunStartResult):
                assert start.outcome is RunStartOutcome.STOP
                tally["before the purge"] += 1
            else:
                assert isinstance(start, SessionPurgedError), start
                tally["refused session_purged"] += 1
        assert isinstance(retry, SessionPurgedError) or retry == AppendResult(
            id="2", inserted=False, session_status=SessionStatus.ENDED
        ), retry
        assert isinstance(new_append, SessionPurgedError | RunNotActiveError), new_append

        with pytest.raises(SessionPurgedError):
            store.load_session(session.id)
        for run in (done, held):
            with pytest.raises(SessionPurgedError):
                store.load_run(run.run_id)
        for run, start in ((late, late_start), (successor, continuation)):
            landed = isinstance(start, RootRunStartResult)
            with pytest.raises(SessionPurgedError if landed else RunNotFoundError):
                store.load_run(run.run_id)
            with pytest.raises(SessionPurgedError):
                start_root(store, run)
        ids = [done.run_id, held.run_id, late.run_id, successor.run_id]
        with races.engine.connect() as conn:
            left = [
                conn.execute(sa.select(sa.func.count()).select_from(table).where(where)).scalar()
                for table, where in (
                    (runs, runs.c.session_id == session.id),
                    (runs, runs.c.run_id.in_(ids)),
                    (run_records, run_records.c.session_id == session.id),
                    (run_records, run_records.c.run_id.in_(ids)),
                    (checkpoints, checkpoints.c.run_id.in_(ids)),
                )
            ]
        assert left == [0, 0, 0, 0, 0]
    print(f"\n[purge vs late start] late starts and continuations: {tally}")
    races.assert_verified()


# --- racing continuations of one suspended run -------------------------------------------

RACING_SUCCESSORS = 8


def test_racing_continuations_of_one_suspended_run_admit_exactly_one(races: Races) -> None:
    """3.13: one successor per predecessor, whichever replica each start reaches."""
    for _ in range(3):
        store = races.store
        session = new_session(store, uid("sess"))
        predecessor = run_start(session_id=session.id, labels={"site": "one"})
        start_root(store, predecessor)
        cp = checkpoint("cp-race", b"\x00state\xff")
        store.record_run_suspension(
            predecessor.run_id, cp, suspended_record(predecessor, "cp-race")
        )
        before = all_records(store, predecessor.run_id)
        successors = [
            run_start(
                session_id=session.id,
                predecessor_run_id=predecessor.run_id,
                labels={"site": "one"},
            )
            for _ in range(RACING_SUCCESSORS)
        ]

        results = races.at_once([partial(start_root, run=run) for run in successors])

        admitted = [
            (run, result)
            for run, result in zip(successors, results, strict=True)
            if isinstance(result, RootRunStartResult)
        ]
        assert len(admitted) == 1, results
        winner, result = admitted[0]
        assert (result.outcome, result.run_status) == (RunStartOutcome.PROCEED, RunStatus.RUNNING)
        for run, refused in zip(successors, results, strict=True):
            if run is winner:
                continue
            assert isinstance(refused, RunConflictError), refused
            with pytest.raises(RunNotFoundError):
                store.load_run(run.run_id)
        meta = store.load_run(predecessor.run_id)
        assert (meta.status, meta.successor_run_id) == (RunStatus.SUSPENDED, winner.run_id)
        assert store.load_run_suspension(predecessor.run_id) == cp
        assert all_records(store, predecessor.run_id) == before
        store.record_run_terminal(
            winner.run_id, RunStatus.COMPLETED, terminal_record(winner, RunStatus.COMPLETED)
        )
        again = start_root(store, winner)
        assert (again.started.id, again.started.inserted) == (result.started.id, False)
    races.assert_verified()
