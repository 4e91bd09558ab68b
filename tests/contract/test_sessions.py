"""Contract rules of session administration (CONTRACT.md 1.3, 3.1, 3.2 and 4)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

import pytest

from runtime_store_client import (
    AppendResult,
    InvalidArgumentError,
    RunMeta,
    RunPage,
    RunStart,
    RunStatus,
    Session,
    SessionEndedError,
    SessionNotFoundError,
    SessionPurgedError,
    SessionStatus,
)
from tests.contract.builders import (
    T0,
    Backend,
    at,
    canceled_record,
    checkpoint,
    expect_rejected,
    link_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)


def purged_session(store: Backend) -> str:
    session = new_session(store)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    return session.id


def root_at(store: Backend, session_id: str, started_at: datetime, run_id: str) -> RunStart:
    """Start a root run with a chosen start time and ID."""
    run = run_start(run_id=run_id, session_id=session_id, started_at=started_at)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


# --- create_session -----------------------------------------------------------------------


def test_create_session_creates_active_session(store: Backend) -> None:
    session_id = uid("sess")
    created = store.create_session(session_id, T0)
    expected = Session(id=session_id, status=SessionStatus.ACTIVE, created_at=T0, ended_at=None)
    assert created == expected
    assert store.load_session(session_id) == expected


def test_create_session_with_empty_id_is_invalid_argument(store: Backend) -> None:
    expect_rejected(
        store,
        lambda: store.create_session("", T0),
        InvalidArgumentError,
        "invalid_argument",
        session_id="",
    )


@pytest.mark.parametrize(
    "created_at",
    [None, T0.replace(tzinfo=None), T0 + timedelta(microseconds=1)],
    ids=["missing", "naive", "sub-millisecond"],
)
def test_create_session_without_valid_time_is_invalid_argument(
    store: Backend, created_at: datetime | None
) -> None:
    session_id = uid("sess")
    expect_rejected(
        store,
        lambda: store.create_session(session_id, cast(datetime, created_at)),
        InvalidArgumentError,
        "invalid_argument",
        session_id=session_id,
    )
    with pytest.raises(SessionNotFoundError):
        store.load_session(session_id)


def test_create_session_again_while_active_returns_stored_session(store: Backend) -> None:
    session = new_session(store)
    again = store.create_session(session.id, at(5000))
    assert again == Session(
        id=session.id, status=SessionStatus.ACTIVE, created_at=T0, ended_at=None
    )
    assert store.load_session(session.id).created_at == T0


def test_create_session_after_end_is_session_ended(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    expect_rejected(
        store,
        lambda: store.create_session(session.id, at(2)),
        SessionEndedError,
        "session_ended",
        session_id=session.id,
    )
    assert store.load_session(session.id).status is SessionStatus.ENDED


def test_create_session_after_purge_is_session_purged(store: Backend) -> None:
    session_id = purged_session(store)
    expect_rejected(
        store,
        lambda: store.create_session(session_id, at(2)),
        SessionPurgedError,
        "session_purged",
        session_id=session_id,
    )


# --- load_session -------------------------------------------------------------------------


def test_load_session_unknown_is_session_not_found(store: Backend) -> None:
    with pytest.raises(SessionNotFoundError) as exc:
        store.load_session(uid("sess-unknown"))
    assert exc.value.code == "session_not_found"
    assert exc.value.status == 404


def test_load_session_purged_is_session_purged(store: Backend) -> None:
    session_id = purged_session(store)
    with pytest.raises(SessionPurgedError) as exc:
        store.load_session(session_id)
    assert exc.value.code == "session_purged"
    assert exc.value.status == 410


# --- end_session --------------------------------------------------------------------------


def test_end_session_ends_session_at_given_time(store: Backend) -> None:
    session = new_session(store)
    ended = store.end_session(session.id, at(1000))
    expected = Session(id=session.id, status=SessionStatus.ENDED, created_at=T0, ended_at=at(1000))
    assert ended == expected
    assert store.load_session(session.id) == expected


def test_end_session_twice_keeps_first_ended_at(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1000))
    again = store.end_session(session.id, at(2000))
    expected = Session(id=session.id, status=SessionStatus.ENDED, created_at=T0, ended_at=at(1000))
    assert again == expected
    assert store.load_session(session.id) == expected


@pytest.mark.parametrize(
    "ended_at",
    [None, T0.replace(tzinfo=None), T0 + timedelta(microseconds=1)],
    ids=["missing", "naive", "sub-millisecond"],
)
def test_end_session_without_valid_time_is_invalid_argument(
    store: Backend, ended_at: datetime | None
) -> None:
    session = new_session(store)
    expect_rejected(
        store,
        lambda: store.end_session(session.id, cast(datetime, ended_at)),
        InvalidArgumentError,
        "invalid_argument",
        session_id=session.id,
    )
    assert store.load_session(session.id) == session


def test_end_session_unknown_is_session_not_found(store: Backend) -> None:
    session_id = uid("sess-unknown")
    expect_rejected(
        store,
        lambda: store.end_session(session_id, at(1)),
        SessionNotFoundError,
        "session_not_found",
        session_id=session_id,
    )


def test_end_session_purged_is_session_purged(store: Backend) -> None:
    session_id = purged_session(store)
    expect_rejected(
        store,
        lambda: store.end_session(session_id, at(2)),
        SessionPurgedError,
        "session_purged",
        session_id=session_id,
    )


def test_end_session_leaves_running_runs_untouched(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id)
    meta = store.load_run(root.run.run_id)
    store.end_session(session.id, at(1))
    assert store.load_run(root.run.run_id) == meta


def test_end_session_running_runs_may_still_write(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id)
    store.end_session(session.id, at(1))
    appended = store.append_run_record(record(root.run))
    assert appended == AppendResult(id="2", inserted=True, session_status=SessionStatus.ENDED)
    terminal = store.record_run_terminal(
        root.run.run_id, RunStatus.COMPLETED, terminal_record(root.run, RunStatus.COMPLETED)
    )
    assert terminal == AppendResult(id="3", inserted=True, session_status=SessionStatus.ENDED)


# --- load_session_status ------------------------------------------------------------------


def test_load_session_status_of_active_session_is_active(store: Backend) -> None:
    session = new_session(store)
    assert store.load_session_status(session.id) is SessionStatus.ACTIVE


def test_load_session_status_of_ended_session_is_ended(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    assert store.load_session_status(session.id) is SessionStatus.ENDED


@pytest.mark.parametrize("session_id", ["", "sess-unknown"], ids=["empty", "unknown"])
def test_load_session_status_unknown_is_session_not_found(store: Backend, session_id: str) -> None:
    with pytest.raises(SessionNotFoundError) as exc:
        store.load_session_status(session_id)
    assert exc.value.code == "session_not_found"
    assert exc.value.status == 404


def test_load_session_status_purged_is_session_purged(store: Backend) -> None:
    session_id = purged_session(store)
    with pytest.raises(SessionPurgedError) as exc:
        store.load_session_status(session_id)
    assert exc.value.code == "session_purged"


# --- list_session_runs --------------------------------------------------------------------


def test_list_session_runs_of_empty_session_is_empty(store: Backend) -> None:
    session = new_session(store)
    assert store.list_session_runs(session.id) == RunPage(runs=[], next_cursor="")


def test_list_session_runs_returns_run_metas(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id, labels={"site": "one"})
    page = store.list_session_runs(session.id)
    assert page == RunPage(runs=[store.load_run(root.run.run_id)], next_cursor="")


def test_list_session_runs_orders_by_started_at_then_run_id(store: Backend) -> None:
    session = new_session(store)
    late = root_at(store, session.id, at(300), "run-a")
    tie_b = root_at(store, session.id, at(200), "run-c")
    tie_a = root_at(store, session.id, at(200), "run-b")
    early = root_at(store, session.id, at(100), "run-d")
    page = store.list_session_runs(session.id)
    assert [meta.run_id for meta in page.runs] == [
        early.run_id,
        tie_a.run_id,
        tie_b.run_id,
        late.run_id,
    ]
    assert page.next_cursor == ""


def test_list_session_runs_holds_only_runs_of_the_session(store: Backend) -> None:
    session = new_session(store)
    other = new_session(store)
    mine = start_root(store, session.id)
    start_root(store, other.id)
    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    page = store.list_session_runs(session.id)
    assert [meta.run_id for meta in page.runs] == [mine.run.run_id]


def test_list_session_runs_includes_child_runs(store: Backend) -> None:
    session = new_session(store)
    parent = root_at(store, session.id, at(0), "run-a")
    child = run_start(
        run_id="run-b", session_id=session.id, parent_run_id=parent.run_id, started_at=at(1)
    )
    store.start_child_run(
        child, link_record(parent, child), started_record(child), canceled_record(child)
    )
    page = store.list_session_runs(session.id)
    assert page.runs == [store.load_run(parent.run_id), store.load_run(child.run_id)]


def _runs_in_every_status(store: Backend, session_id: str) -> dict[RunStatus, str]:
    """One run per status, started in status order: running, suspended, completed, ..."""
    runs: dict[RunStatus, str] = {}
    for offset, status in enumerate(RunStatus):
        run = root_at(store, session_id, at(offset), f"run-{offset}")
        runs[status] = run.run_id
        if status is RunStatus.SUSPENDED:
            store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
        elif status is not RunStatus.RUNNING:
            store.record_run_terminal(run.run_id, status, terminal_record(run, status))
    return runs


@pytest.mark.parametrize(
    "statuses",
    [
        (RunStatus.RUNNING,),
        (RunStatus.SUSPENDED,),
        (RunStatus.COMPLETED, RunStatus.CANCELED),
        (RunStatus.FAILED, RunStatus.SUSPENDED, RunStatus.RUNNING),
    ],
    ids="+".join,
)
def test_list_session_runs_filters_by_statuses(
    store: Backend, statuses: tuple[RunStatus, ...]
) -> None:
    session = new_session(store)
    runs = _runs_in_every_status(store, session.id)
    page = store.list_session_runs(session.id, statuses=statuses)
    expected = [run_id for status, run_id in runs.items() if status in statuses]
    assert [meta.run_id for meta in page.runs] == expected
    assert all(meta.status in statuses for meta in page.runs)
    assert page.next_cursor == ""


def test_list_session_runs_without_statuses_lists_every_status(store: Backend) -> None:
    session = new_session(store)
    runs = _runs_in_every_status(store, session.id)
    page = store.list_session_runs(session.id, statuses=())
    assert [meta.run_id for meta in page.runs] == list(runs.values())
    assert [meta.status for meta in page.runs] == list(RunStatus)


def test_list_session_runs_status_filter_with_no_match_is_empty(store: Backend) -> None:
    session = new_session(store)
    start_root(store, session.id)
    page = store.list_session_runs(session.id, statuses=(RunStatus.FAILED,))
    assert page == RunPage(runs=[], next_cursor="")


def test_list_session_runs_lists_stopped_runs_of_ended_session(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    stopped = start_root(store, session.id)
    page = store.list_session_runs(session.id, statuses=(RunStatus.CANCELED,))
    assert page.runs == [store.load_run(stopped.run.run_id)]
    assert page.runs[0].cancellation_reason == "session_ended"


def _five_runs(store: Backend, session_id: str) -> list[str]:
    return [run.run_id for run in _five_starts(store, session_id)]


def _five_starts(store: Backend, session_id: str) -> list[RunStart]:
    return [root_at(store, session_id, at(i), f"run-{i}") for i in range(5)]


def test_list_session_runs_pages_with_cursor_and_limit(store: Backend) -> None:
    session = new_session(store)
    run_ids = _five_runs(store, session.id)
    first = store.list_session_runs(session.id, limit=2)
    assert [meta.run_id for meta in first.runs] == run_ids[0:2]
    assert first.next_cursor != ""
    second = store.list_session_runs(session.id, cursor=first.next_cursor, limit=2)
    assert [meta.run_id for meta in second.runs] == run_ids[2:4]
    assert second.next_cursor not in {"", first.next_cursor}
    third = store.list_session_runs(session.id, cursor=second.next_cursor, limit=2)
    assert [meta.run_id for meta in third.runs] == run_ids[4:5]
    assert third.next_cursor == ""


def test_list_session_runs_last_full_page_has_empty_cursor(store: Backend) -> None:
    session = new_session(store)
    run_ids = _five_runs(store, session.id)
    first = store.list_session_runs(session.id, limit=3)
    last = store.list_session_runs(session.id, cursor=first.next_cursor, limit=2)
    assert [meta.run_id for meta in last.runs] == run_ids[3:5]
    assert last.next_cursor == ""


def test_list_session_runs_limit_equal_to_count_has_empty_cursor(store: Backend) -> None:
    session = new_session(store)
    run_ids = _five_runs(store, session.id)
    page = store.list_session_runs(session.id, limit=5)
    assert [meta.run_id for meta in page.runs] == run_ids
    assert page.next_cursor == ""


def test_list_session_runs_pages_in_started_at_then_run_id_order(store: Backend) -> None:
    session = new_session(store)
    root_at(store, session.id, at(100), "run-z")
    root_at(store, session.id, at(0), "run-y")
    root_at(store, session.id, at(0), "run-x")
    seen: list[str] = []
    cursor = ""
    while True:
        page = store.list_session_runs(session.id, cursor=cursor, limit=1)
        seen.extend(meta.run_id for meta in page.runs)
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert seen == ["run-x", "run-y", "run-z"]


def test_list_session_runs_pages_with_statuses_filter(store: Backend) -> None:
    session = new_session(store)
    runs = _five_starts(store, session.id)
    run_ids = [run.run_id for run in runs]
    for run in runs[1::2]:
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
    running = (RunStatus.RUNNING,)
    first = store.list_session_runs(session.id, statuses=running, limit=2)
    assert [meta.run_id for meta in first.runs] == [run_ids[0], run_ids[2]]
    assert first.next_cursor != ""
    second = store.list_session_runs(
        session.id, statuses=running, cursor=first.next_cursor, limit=2
    )
    assert [meta.run_id for meta in second.runs] == [run_ids[4]]
    assert second.next_cursor == ""


@pytest.mark.parametrize("cursor", ["garbage", "%%%"])
def test_list_session_runs_invalid_cursor_is_invalid_argument(store: Backend, cursor: str) -> None:
    session = new_session(store)
    _five_runs(store, session.id)
    with pytest.raises(InvalidArgumentError) as exc:
        store.list_session_runs(session.id, cursor=cursor)
    assert exc.value.code == "invalid_argument"
    assert exc.value.status == 422


@pytest.mark.parametrize("limit", [0, -1])
def test_list_session_runs_limit_not_positive_is_invalid_argument(
    store: Backend, limit: int
) -> None:
    session = new_session(store)
    start_root(store, session.id)
    with pytest.raises(InvalidArgumentError) as exc:
        store.list_session_runs(session.id, limit=limit)
    assert exc.value.code == "invalid_argument"


def test_list_session_runs_limit_above_maximum_is_served(store: Backend) -> None:
    session = new_session(store)
    run_ids = _five_runs(store, session.id)
    page = store.list_session_runs(session.id, limit=1_000_000)
    assert [meta.run_id for meta in page.runs] == run_ids


def test_list_session_runs_unknown_session_is_session_not_found(store: Backend) -> None:
    with pytest.raises(SessionNotFoundError) as exc:
        store.list_session_runs(uid("sess-unknown"))
    assert exc.value.code == "session_not_found"


def test_list_session_runs_purged_session_is_session_purged(store: Backend) -> None:
    session_id = purged_session(store)
    with pytest.raises(SessionPurgedError) as exc:
        store.list_session_runs(session_id)
    assert exc.value.code == "session_purged"


def test_list_session_runs_metas_equal_load_run(store: Backend) -> None:
    session = new_session(store)
    runs = _runs_in_every_status(store, session.id)
    page = store.list_session_runs(session.id)
    expected: list[RunMeta] = [store.load_run(run_id) for run_id in runs.values()]
    assert page.runs == expected
