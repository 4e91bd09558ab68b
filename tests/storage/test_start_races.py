"""Racing starts on PostgreSQL through two stores (two replicas): the database decides.

A run ID is for ever one kind (CONTRACT.md 12.2): engine and synchronous starts of one new
ID racing leave exactly one kind; one successor per predecessor (3.13) holds when two
continuations of one child race under two parents (12.4).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from runtime_store_client import RunConflictError, RunStart, RunStartKind, StoreError
from tests.conftest import wipe
from tests.contract.builders import (
    all_records,
    canceled_record,
    checkpoint,
    link_record,
    new_session,
    run_start,
    start_root,
    started_record,
    suspended_record,
)

THREADS = 8


@pytest.fixture
def stores(postgres_engine: Engine, postgres_url: str) -> Iterator[tuple[SqlStore, SqlStore]]:
    """Two stores on one PostgreSQL database, each with its own engine (two replicas);
    the second keeps every write on the Python path."""
    wipe(postgres_engine)
    other = create_engine(postgres_url)
    try:
        yield SqlStore(postgres_engine), SqlStore(other, fast_path=False)
    finally:
        other.dispose()


def race(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run every call from its own thread, released together; each answer or its error."""
    barrier = threading.Barrier(len(calls))

    def worker(call: Callable[[], Any]) -> Any:
        barrier.wait()
        try:
            return call()
        except StoreError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(worker, calls))


def one_kind_won(answers: list[Any], engine_side: list[bool]) -> RunStartKind:
    """Every call of the winning kind succeeded, every other one is ``run_conflict``."""
    ok = [not isinstance(answer, StoreError) for answer in answers]
    assert all(
        isinstance(a, RunConflictError) for a, good in zip(answers, ok, strict=True) if not good
    )
    winners = {side for side, good in zip(engine_side, ok, strict=True) if good}
    assert len(winners) == 1
    losers = {side for side, good in zip(engine_side, ok, strict=True) if not good}
    assert losers == {not side for side in winners}
    return RunStartKind.ENGINE if winners.pop() else RunStartKind.SYNCHRONOUS


@pytest.mark.parametrize("attempt", range(3))
def test_synchronous_and_one_shot_starts_of_one_id_racing_leave_exactly_one_kind(
    stores: tuple[SqlStore, SqlStore], attempt: int
) -> None:
    del attempt
    run = run_start()
    started = started_record(run)
    calls: list[Callable[[], Any]] = []
    engine_side: list[bool] = []
    for index in range(THREADS):
        store = stores[index % 2]
        engine = index % 4 < 2
        engine_side.append(engine)
        start = store.start_one_shot_run if engine else store.start_synchronous_run
        calls.append(functools.partial(start, run, started))
    answers = race(calls)
    kind = one_kind_won(answers, engine_side)
    inserted = [a.record.inserted for a in answers if not isinstance(a, StoreError)]
    assert inserted.count(True) == 1
    assert stores[0].load_run(run.run_id).start_kind is kind
    assert len(all_records(stores[1], run.run_id)) == 1


def test_synchronous_and_root_starts_of_one_id_racing_leave_exactly_one_kind(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    session = new_session(stores[0])
    root = run_start(session_id=session.id)
    sync = RunStart(
        run_id=root.run_id, agent_id=root.agent_id, started_at=root.started_at, labels={}
    )
    calls: list[Callable[[], Any]] = []
    engine_side: list[bool] = []
    for index in range(THREADS):
        store = stores[index % 2]
        engine = index % 4 < 2
        engine_side.append(engine)
        if engine:
            calls.append(
                functools.partial(
                    store.start_root_run, root, started_record(root), canceled_record(root)
                )
            )
        else:
            calls.append(functools.partial(store.start_synchronous_run, sync, started_record(sync)))
    kind = one_kind_won(race(calls), engine_side)
    meta = stores[1].load_run(root.run_id)
    assert meta.start_kind is kind
    assert meta.session_id == (session.id if kind is RunStartKind.ENGINE else "")
    assert len(all_records(stores[0], root.run_id)) == 1


def test_two_continuations_of_one_child_under_two_parents_racing_admit_exactly_one(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    store = stores[0]
    session = new_session(store)
    p1 = start_root(store, session.id).run
    c1 = run_start(agent_id="agent-child", session_id=session.id, parent_run_id=p1.run_id)
    store.start_child_run(c1, link_record(p1, c1), started_record(c1), canceled_record(c1))
    store.record_run_suspension(c1.run_id, checkpoint(), suspended_record(c1))
    parents = [start_root(store, session.id).run for _ in range(2)]
    children = [
        run_start(
            agent_id="agent-child",
            session_id=session.id,
            parent_run_id=parent.run_id,
            predecessor_run_id=c1.run_id,
        )
        for parent in parents
    ]
    calls: list[Callable[[], Any]] = [
        functools.partial(
            stores[i].start_child_run,
            child,
            link_record(parent, child),
            started_record(child),
            canceled_record(child),
        )
        for i, (parent, child) in enumerate(zip(parents, children, strict=True))
    ]
    answers = race(calls)
    won = [i for i, answer in enumerate(answers) if not isinstance(answer, StoreError)]
    assert len(won) == 1
    lost = 1 - won[0]
    assert isinstance(answers[lost], RunConflictError)
    assert store.load_run(c1.run_id).successor_run_id == children[won[0]].run_id
    assert [r.type for r in all_records(store, parents[lost].run_id)] == ["run_started"]
    assert len(all_records(store, parents[won[0]].run_id)) == 2
