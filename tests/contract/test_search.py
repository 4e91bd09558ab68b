"""Finding sessions and runs (CONTRACT.md 11.1), on every backend.

Each test starts from an empty database (the ``store`` fixture wipes it), so a list holds
exactly what the test wrote.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    RunMeta,
    RunPage,
    RunStart,
    RunStatus,
    Session,
    SessionStatus,
)
from tests.contract.builders import (
    Backend,
    at,
    canceled_record,
    link_record,
    new_session,
    run_start,
    started_record,
    terminal_record,
    uid,
)


def all_sessions(store: Backend, **filters: Any) -> list[Session]:
    found: list[Session] = []
    page = store.list_sessions(limit=2, **filters)
    found.extend(page.sessions)
    while page.next_cursor:
        page = store.list_sessions(cursor=page.next_cursor, limit=2, **filters)
        found.extend(page.sessions)
    return found


def all_runs(store: Backend, limit: int = 2, **filters: Any) -> list[RunMeta]:
    found: list[RunMeta] = []
    page = store.search_runs(limit=limit, **filters)
    found.extend(page.runs)
    while page.next_cursor:
        page = store.search_runs(cursor=page.next_cursor, limit=limit, **filters)
        found.extend(page.runs)
    return found


def ids(items: list[Any]) -> list[str]:
    return [getattr(item, "run_id", None) or item.id for item in items]


def root(
    store: Backend, session_id: str, ms: int, *, run_id: str | None = None, **kw: Any
) -> RunStart:
    run = run_start(session_id=session_id, started_at=at(ms), run_id=run_id, **kw)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


def finish(store: Backend, run: RunStart, status: RunStatus = RunStatus.COMPLETED) -> None:
    reason = "engine_canceled" if status is RunStatus.CANCELED else ""
    store.record_run_terminal(run.run_id, status, terminal_record(run, status, reason=reason))


# --- sessions --------------------------------------------------------------------------


def test_list_sessions_is_newest_first_ties_by_id_ascending(store: Backend) -> None:
    store.create_session("s-b", at(100))
    store.create_session("s-a", at(100))
    store.create_session("s-c", at(50))
    store.create_session("s-d", at(200))
    assert ids(all_sessions(store)) == ["s-d", "s-a", "s-b", "s-c"]


def test_list_sessions_filters_by_status(store: Backend) -> None:
    store.create_session("s-1", at(1))
    store.create_session("s-2", at(2))
    store.end_session("s-2", at(3))
    assert ids(all_sessions(store, statuses=[SessionStatus.ACTIVE])) == ["s-1"]
    assert ids(all_sessions(store, statuses=[SessionStatus.ENDED])) == ["s-2"]
    both = [SessionStatus.ACTIVE, SessionStatus.ENDED]
    assert ids(all_sessions(store, statuses=both)) == ["s-2", "s-1"]


def test_list_sessions_time_bounds_are_half_open(store: Backend) -> None:
    for n in range(1, 5):
        store.create_session(f"s-{n}", at(n * 10))
    assert ids(all_sessions(store, created_after=at(20), created_before=at(40))) == [
        "s-3",
        "s-2",
    ]


def test_purged_sessions_are_never_listed(store: Backend) -> None:
    store.create_session("kept", at(1))
    store.create_session("gone", at(2))
    store.end_session("gone", at(3))
    store.purge_session("gone")
    assert ids(all_sessions(store)) == ["kept"]
    assert ids(all_sessions(store, statuses=[SessionStatus.ENDED])) == []


def test_list_sessions_with_an_unknown_status_is_invalid_argument(store: Backend) -> None:
    with pytest.raises(InvalidArgumentError):
        store.list_sessions(statuses=["purged"])  # type: ignore[list-item]


def test_a_session_cursor_reused_with_other_filters_is_invalid_argument(store: Backend) -> None:
    for n in range(3):
        store.create_session(f"s-{n}", at(n))
    cursor = store.list_sessions(limit=1).next_cursor
    assert cursor
    assert store.list_sessions(cursor=cursor, limit=1).sessions
    with pytest.raises(InvalidArgumentError):
        store.list_sessions(statuses=[SessionStatus.ACTIVE], cursor=cursor, limit=1)
    with pytest.raises(InvalidArgumentError):
        store.list_sessions(created_after=at(0), cursor=cursor, limit=1)


# --- runs ------------------------------------------------------------------------------


def test_search_runs_is_newest_first_ties_by_run_id_ascending(store: Backend) -> None:
    session_id = new_session(store).id
    root(store, session_id, 10, run_id="run-b")
    root(store, session_id, 10, run_id="run-a")
    root(store, session_id, 5, run_id="run-c")
    root(store, session_id, 20, run_id="run-d")
    assert ids(all_runs(store)) == ["run-d", "run-a", "run-b", "run-c"]


def test_search_runs_returns_the_run_meta(store: Backend) -> None:
    session_id = new_session(store).id
    run = root(store, session_id, 10, labels={"team": "search"})
    (found,) = all_runs(store)
    assert found == store.load_run(run.run_id)


def test_search_runs_by_status(store: Backend) -> None:
    session_id = new_session(store).id
    done = root(store, session_id, 1)
    failed = root(store, session_id, 2)
    running = root(store, session_id, 3)
    finish(store, done)
    finish(store, failed, RunStatus.FAILED)
    assert ids(all_runs(store, statuses=[RunStatus.FAILED])) == [failed.run_id]
    both = [RunStatus.FAILED, RunStatus.RUNNING]
    assert ids(all_runs(store, statuses=both)) == [running.run_id, failed.run_id]


def test_search_runs_by_agent_session_and_parent(store: Backend) -> None:
    first = new_session(store).id
    second = new_session(store).id
    a = root(store, first, 1, agent_id="planner")
    b = root(store, second, 2, agent_id="planner")
    c = root(store, first, 3, agent_id="writer")
    child = run_start(session_id=first, parent_run_id=a.run_id, agent_id="tool", started_at=at(4))
    store.start_child_run(
        child, link_record(a, child), started_record(child), canceled_record(child)
    )
    assert ids(all_runs(store, agent_id="planner")) == [b.run_id, a.run_id]
    assert ids(all_runs(store, session_id=first)) == [child.run_id, c.run_id, a.run_id]
    assert ids(all_runs(store, parent_run_id=a.run_id)) == [child.run_id]
    assert ids(all_runs(store, agent_id="planner", session_id=first)) == [a.run_id]
    assert ids(all_runs(store, agent_id="planner", statuses=[RunStatus.RUNNING])) == [
        b.run_id,
        a.run_id,
    ]


def test_search_runs_by_labels_requires_every_label(store: Backend) -> None:
    session_id = new_session(store).id
    both = root(store, session_id, 1, labels={"team": "a", "tier": "gold"})
    team = root(store, session_id, 2, labels={"team": "a"})
    root(store, session_id, 3, labels={"team": "b", "tier": "gold"})
    root(store, session_id, 4)
    assert ids(all_runs(store, labels={"team": "a"})) == [team.run_id, both.run_id]
    assert ids(all_runs(store, labels={"team": "a", "tier": "gold"})) == [both.run_id]
    assert ids(all_runs(store, labels={"team": "a"}, statuses=[RunStatus.COMPLETED])) == []


def test_a_label_value_may_hold_colons(store: Backend) -> None:
    session_id = new_session(store).id
    run = root(store, session_id, 1, labels={"url": "http://x:80/a"})
    assert ids(all_runs(store, labels={"url": "http://x:80/a"})) == [run.run_id]


def test_search_runs_time_bounds_are_half_open(store: Backend) -> None:
    session_id = new_session(store).id
    runs = [root(store, session_id, n * 10) for n in range(1, 5)]
    found = all_runs(store, started_after=at(20), started_before=at(40))
    assert ids(found) == [runs[2].run_id, runs[1].run_id]


def test_search_runs_includes_sessionless_runs(store: Backend) -> None:
    one_shot = run_start(started_at=at(5))
    store.start_one_shot_run(one_shot, started_record(one_shot))
    assert ids(all_runs(store)) == [one_shot.run_id]
    assert ids(all_runs(store, agent_id=one_shot.agent_id)) == [one_shot.run_id]


def test_runs_of_purged_sessions_are_never_found(store: Backend) -> None:
    kept = new_session(store).id
    gone = new_session(store).id
    kept_run = root(store, kept, 1, labels={"team": "a"})
    gone_run = root(store, gone, 2, labels={"team": "a"})
    finish(store, gone_run)
    store.end_session(gone, at(3))
    store.purge_session(gone)
    assert ids(all_runs(store)) == [kept_run.run_id]
    assert ids(all_runs(store, labels={"team": "a"})) == [kept_run.run_id]
    assert ids(all_runs(store, session_id=gone)) == []


def test_naming_an_unknown_session_or_parent_matches_nothing(store: Backend) -> None:
    root(store, new_session(store).id, 1)
    assert store.search_runs(session_id=uid("nope")) == RunPage(runs=[])
    assert store.search_runs(parent_run_id=uid("nope")) == RunPage(runs=[])


@pytest.mark.parametrize(
    "filters",
    [
        {"statuses": ["bogus"]},
        {"statuses": ["active"]},
        {"labels": {"": "x"}},
        {"agent_id": "a\x00b"},
    ],
    ids=["unknown-status", "session-status", "empty-label-key", "nul"],
)
def test_bad_run_filters_are_invalid_argument(store: Backend, filters: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentError):
        store.search_runs(**filters)


def test_a_run_cursor_reused_with_other_filters_is_invalid_argument(store: Backend) -> None:
    session_id = new_session(store).id
    for n in range(3):
        root(store, session_id, n, labels={"team": "a"})
    cursor = store.search_runs(limit=1).next_cursor
    assert cursor
    assert store.search_runs(cursor=cursor, limit=1).runs
    for other in (
        {"statuses": [RunStatus.RUNNING]},
        {"agent_id": "agent-1"},
        {"session_id": session_id},
        {"labels": {"team": "a"}},
        {"started_before": at(100)},
    ):
        with pytest.raises(InvalidArgumentError):
            store.search_runs(cursor=cursor, limit=1, **other)


def test_a_paging_reader_sees_every_run_that_matched_throughout_exactly_once(
    store: Backend,
) -> None:
    """Writers start runs (before and after the reader's position) and finish others while
    a reader pages with a status filter: every run that was running from the first page to
    the last is listed exactly once."""
    session_id = new_session(store).id
    stable = [root(store, session_id, 1000 + n) for n in range(30)]
    churn = [root(store, session_id, 1500 + n) for n in range(10)]
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set() and n < 40:
            root(store, session_id, 3000 + n)  # newer: before the reader's position
            root(store, session_id, 10 + n)  # older: after it
            if n < len(churn):
                finish(store, churn[n])
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        seen = ids(all_runs(store, limit=3, statuses=[RunStatus.RUNNING]))
    finally:
        stop.set()
        writer.join()
    assert len(seen) == len(set(seen))
    assert {run.run_id for run in stable} <= set(seen)


def test_a_label_holding_nul_is_found(store: Backend) -> None:
    """2.6 allows an escaped NUL in labels; search finds it on both databases."""
    session_id = new_session(store).id
    run = root(store, session_id, 1, labels={"k\x00": "v\x00w"})
    assert ids(all_runs(store, labels={"k\x00": "v\x00w"})) == [run.run_id]
    assert ids(all_runs(store, labels={"k\x00": "v"})) == []
