"""Group commit (``app/storage/fast_path/group_commit.py``) on PostgreSQL: concurrent single appends
combined into one statement, each keeping its own answer and its own error.

A group is made deterministic by holding the first append's session lock from another
connection: its flush waits in the database, the other threads queue behind it, and when
the lock is released the queued appends go out together as one statement (counted by a
statement listener, as tracing sees statements).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.fast_path.group_commit import MAX_IN_FLIGHT
from runtime_store_client import (
    AppendResult,
    EventConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunStart,
    RunStatus,
)
from tests.contract.builders import (
    all_records,
    all_session_records,
    new_session,
    record,
    start_root,
    terminal_record,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(postgres_engine: Engine) -> Engine:
    from tests.conftest import wipe

    wipe(postgres_engine)
    return postgres_engine


class GroupStatements:
    """The group statements sent on an engine and how many records each carried; when
    ``fail`` is set, the group statement fails (its records must then go alone)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sizes: list[int] = []
        self.fail = False

    def before(self, _conn: Any, _cursor: Any, sql: str, params: Any, *_rest: Any) -> None:
        if "unnest" in sql and "runtime_store_append_record" in sql:
            self.sizes.append(len(params["run_ids"]))
            if self.fail:
                raise sa.exc.DataError(sql, params, Exception("refused by the test"))

    def __enter__(self) -> GroupStatements:
        event.listen(self.engine, "before_cursor_execute", self.before)
        return self

    def __exit__(self, *_exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self.before)


@pytest.fixture
def groups(engine: Engine) -> Iterator[GroupStatements]:
    with GroupStatements(engine) as observed:
        yield observed


def grouped(
    store: SqlStore, engine: Engine, calls: Sequence[Callable[[], AppendResult]]
) -> tuple[list[Future[AppendResult]], list[Future[AppendResult]]]:
    """Fill every flush slot with an append whose session is locked elsewhere, queue
    ``calls`` behind them, then release the locks: the queued calls form one group.
    Returns the blocked appends' futures (each ID "2") and the calls'."""
    combiner = store._ctx.group_commit  # how many appends wait
    assert combiner is not None
    pool = ThreadPoolExecutor(max_workers=len(calls) + MAX_IN_FLIGHT)
    firsts = [record(start_root(store, new_session(store).id).run) for _ in range(MAX_IN_FLIGHT)]
    with engine.connect() as blocker, blocker.begin():
        blocker.execute(
            sa.text("SELECT 1 FROM sessions WHERE session_id = ANY(:s) FOR UPDATE"),
            {"s": [first.session_id for first in firsts]},
        )
        leaders = []
        for first in firsts:
            leaders.append(pool.submit(store.append_run_record, first))
            wait_until(lambda: combiner.waiting() == len(leaders))
        time.sleep(0.05)  # the leaders' flushes are in the database, waiting for the locks
        assert not any(leader.done() for leader in leaders)
        futures = [pool.submit(call) for call in calls]
        wait_until(lambda: combiner.waiting() == len(calls) + MAX_IN_FLIGHT)
    pool.shutdown(wait=True)
    return leaders, futures


def wait_until(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_each_append_of_a_group_keeps_its_own_answer_and_error(
    engine: Engine, groups: GroupStatements
) -> None:
    store = SqlStore(engine)
    changes: list[set[tuple[str, str]]] = []
    store.watch_commits(changes.append)
    one = start_root(store, new_session(store).id).run
    two = start_root(store, new_session(store).id).run
    done = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        done.run_id, RunStatus.COMPLETED, terminal_record(done, RunStatus.COMPLETED)
    )
    kept = record(one, event_key="kept")
    store.append_run_record(kept)
    twice = record(two, event_key="twice")
    missing = replace(record(one, event_key="x"), run_id="no-such-run")
    calls: list[Callable[[], AppendResult]] = [
        *(lambda n=n: store.append_run_record(record(one, event_key=f"one-{n}")) for n in range(5)),
        *(lambda n=n: store.append_run_record(record(two, event_key=f"two-{n}")) for n in range(5)),
        lambda: store.append_run_record(kept),  # an exact retry of a stored record
        lambda: store.append_run_record(record(one, event_key="kept", payload=b'{"x":1}')),
        lambda: store.append_run_record(missing),
        lambda: store.append_run_record(record(done, event_key="late")),
        lambda: store.append_run_record(twice),  # the same record twice in one group
        lambda: store.append_run_record(twice),
    ]
    changes.clear()
    leaders, futures = grouped(store, engine, calls)

    assert [leader.result().id for leader in leaders] == ["2"] * MAX_IN_FLIGHT
    assert groups.sizes == [len(calls)]  # one statement for every queued append
    ones = [future.result() for future in futures[:5]]
    assert sorted(int(result.id) for result in ones) == [3, 4, 5, 6, 7]
    twos = [future.result() for future in futures[5:10]] + [futures[14].result()]
    assert sorted(int(result.id) for result in twos) == [2, 3, 4, 5, 6, 7]
    assert all(result.inserted for result in ones + twos)
    retried = futures[10].result()
    assert (retried.id, retried.inserted) == ("2", False)
    with pytest.raises(EventConflictError):
        futures[11].result()
    with pytest.raises(RunNotFoundError):
        futures[12].result()
    with pytest.raises(RunNotActiveError):
        futures[13].result()
    again = futures[15].result()  # the same record again: the first one's ID
    assert (again.id, again.inserted) == (futures[14].result().id, False)
    # Positions: every record of each session once, in ID order, nothing of the refused.
    for run, count in ((one, 7), (two, 7)):
        records = all_session_records(store, run.session_id)
        assert [r.id for r in records] == [str(n) for n in range(1, count + 1)]
        assert [r.id for r in all_records(store, run.run_id)] == [r.id for r in records]
    assert all(r.event_key != "late" for r in all_records(store, done.run_id))
    # The live tail heard of every run the group wrote.
    heard = set().union(*changes)
    assert {(one.session_id, one.run_id), (two.session_id, two.run_id)} <= heard


def test_a_failed_group_appends_each_record_alone(engine: Engine, groups: GroupStatements) -> None:
    store = SqlStore(engine)
    runs = [start_root(store, new_session(store).id).run for _ in range(4)]
    calls = [partial(store.append_run_record, record(run, event_key="only")) for run in runs]
    groups.fail = True
    leaders, futures = grouped(store, engine, calls)

    assert groups.sizes == [len(calls)]  # sent once, failed, never sent again
    assert all(leader.result().inserted for leader in leaders)
    for run, future in zip(runs, futures, strict=True):
        assert (future.result().id, future.result().inserted) == ("2", True)
        assert [r.event_key for r in all_records(store, run.run_id)] == ["start", "only"]


def test_with_group_commit_off_every_append_is_its_own_statement(
    engine: Engine, groups: GroupStatements
) -> None:
    store = SqlStore(engine, group_commit=False)
    runs = [start_root(store, new_session(store).id).run for _ in range(8)]

    def append(run: RunStart) -> AppendResult:
        return store.append_run_record(record(run))

    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(5):
            list(pool.map(append, runs))
    assert groups.sizes == []
    assert all(len(all_records(store, run.run_id)) == 6 for run in runs)
