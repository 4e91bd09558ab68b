"""Contract rules of ``purge_session`` and its tombstones (CONTRACT.md 3.1, 2.3 and 4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    MemoryEvent,
    Record,
    RunStart,
    RunStatus,
    SessionActiveError,
    SessionHasActiveRunsError,
    SessionNotFoundError,
    SessionPurgedError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    expect_rejected,
    link_record,
    new_session,
    observe,
    record,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)


def complete(store: Backend, run: RunStart) -> None:
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )


# --- purge preconditions ----------------------------------------------------------------


def test_purge_active_session_is_session_active(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id).run
    complete(store, root)
    expect_rejected(
        store,
        lambda: store.purge_session(session.id),
        SessionActiveError,
        "session_active",
        root.run_id,
        session_id=session.id,
    )
    assert store.load_session(session.id) == session


def test_purge_active_session_with_running_run_is_session_active(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id).run
    expect_rejected(
        store,
        lambda: store.purge_session(session.id),
        SessionActiveError,
        "session_active",
        root.run_id,
        session_id=session.id,
    )


def test_purge_session_with_running_run_is_session_has_active_runs(store: Backend) -> None:
    session = new_session(store)
    done = start_root(store, session.id).run
    complete(store, done)
    running = start_root(store, session.id).run
    store.end_session(session.id, at(1))
    ended = store.load_session(session.id)
    expect_rejected(
        store,
        lambda: store.purge_session(session.id),
        SessionHasActiveRunsError,
        "session_has_active_runs",
        done.run_id,
        running.run_id,
        session_id=session.id,
    )
    assert store.load_session(session.id) == ended


def test_purge_session_with_running_child_is_session_has_active_runs(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    child = run_start(session_id=session.id, parent_run_id=parent.run_id)
    store.start_child_run(
        child, link_record(parent, child), started_record(child), canceled_record(child)
    )
    complete(store, parent)
    store.end_session(session.id, at(1))
    expect_rejected(
        store,
        lambda: store.purge_session(session.id),
        SessionHasActiveRunsError,
        "session_has_active_runs",
        parent.run_id,
        child.run_id,
        session_id=session.id,
    )


def test_purge_unknown_session_is_session_not_found(store: Backend) -> None:
    session_id = uid("sess-unknown")
    expect_rejected(
        store,
        lambda: store.purge_session(session_id),
        SessionNotFoundError,
        "session_not_found",
        session_id=session_id,
    )


# --- purge --------------------------------------------------------------------------------


def test_purge_ended_session_with_finished_runs_succeeds(store: Backend) -> None:
    session = new_session(store)
    completed = start_root(store, session.id).run
    complete(store, completed)
    suspended = start_root(store, session.id).run
    store.record_run_suspension(suspended.run_id, checkpoint(), suspended_record(suspended))
    store.end_session(session.id, at(1))
    stopped = start_root(store, session.id).run
    store.purge_session(session.id)
    for run in (completed, suspended, stopped):
        with pytest.raises(SessionPurgedError):
            store.load_run(run.run_id)
    with pytest.raises(SessionPurgedError):
        store.load_session(session.id)


def test_purge_empty_ended_session_succeeds(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    with pytest.raises(SessionPurgedError) as exc:
        store.load_session(session.id)
    assert exc.value.code == "session_purged"
    assert exc.value.status == 410


def test_purge_twice_is_a_no_op(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    before = observe(store, session_id=session.id)
    store.purge_session(session.id)
    assert observe(store, session_id=session.id) == before
    assert before == ["session_purged", "session_purged"]


def test_purge_leaves_sessionless_runs(store: Backend) -> None:
    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    store.append_run_record(record(one_shot))
    child = run_start(parent_run_id=one_shot.run_id, agent_id="agent-child")
    store.start_one_shot_child_run(child, link_record(one_shot, child), started_record(child))
    session = new_session(store)
    root = start_root(store, session.id).run
    complete(store, root)
    store.end_session(session.id, at(1))
    before = observe(store, one_shot.run_id, child.run_id)
    store.purge_session(session.id)
    assert observe(store, one_shot.run_id, child.run_id) == before
    assert len(all_records(store, one_shot.run_id)) == 3


def test_purge_leaves_runs_of_other_sessions(store: Backend) -> None:
    other = new_session(store)
    kept = start_root(store, other.id).run
    session = new_session(store)
    complete(store, start_root(store, session.id).run)
    store.end_session(session.id, at(1))
    before = observe(store, kept.run_id, session_id=other.id)
    store.purge_session(session.id)
    assert observe(store, kept.run_id, session_id=other.id) == before


def test_purge_removes_the_memory_of_the_sessions_runs_whichever_agent_wrote_it(
    store: Backend,
) -> None:
    """3.1: an erasure takes the product memory of the session's runs with it."""
    kept_session = new_session(store)
    kept = start_root(store, kept_session.id).run
    session = new_session(store)
    root = start_root(store, session.id).run
    event = MemoryEvent(type="user_message", timestamp=at(1), data={"text": "private"})
    for agent in (root.agent_id, "agent-memory"):
        store.append_memory_events(agent, root.run_id, [event])
    store.append_memory_events(kept.agent_id, kept.run_id, [event])
    complete(store, root)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    for agent in (root.agent_id, "agent-memory"):
        with pytest.raises(SessionPurgedError):
            store.load_memory(agent, root.run_id)
        with pytest.raises(SessionPurgedError):
            store.append_memory_events(agent, root.run_id, [event])
    assert store.load_memory(kept.agent_id, kept.run_id).events == [event]


# --- tombstones ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Purged:
    """A purged session that held a finished root and a finished child."""

    session_id: str
    root: RunStart
    root_started: Record
    note: Record
    child: RunStart
    link: Record
    other_session_id: str


@pytest.fixture
def purged(store: Backend) -> Purged:
    session = new_session(store)
    root = start_root(store, session.id).run
    child = run_start(session_id=session.id, parent_run_id=root.run_id, agent_id="agent-child")
    note = record(root)
    store.append_run_record(note)
    link = link_record(root, child)
    store.start_child_run(child, link, started_record(child), canceled_record(child))
    complete(store, child)
    complete(store, root)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    other = new_session(store)
    return Purged(
        session_id=session.id,
        root=root,
        root_started=started_record(root),
        note=note,
        child=child,
        link=link,
        other_session_id=other.id,
    )


def _continuation_elsewhere(store: Backend, p: Purged) -> object:
    run = run_start(session_id=p.other_session_id, predecessor_run_id=p.root.run_id)
    return store.start_root_run(run, started_record(run), canceled_record(run))


def _root_reusing_run_id(store: Backend, p: Purged) -> object:
    run = replace(p.root, session_id=p.other_session_id)
    return store.start_root_run(run, started_record(run), canceled_record(run))


def _new_root_in_purged_session(store: Backend, p: Purged) -> object:
    run = run_start(session_id=p.session_id)
    return store.start_root_run(run, started_record(run), canceled_record(run))


def _child_of_purged_parent(store: Backend, p: Purged) -> object:
    parent = replace(p.root, session_id=p.other_session_id)
    child = run_start(session_id=p.other_session_id, parent_run_id=parent.run_id)
    return store.start_child_run(
        child, link_record(parent, child), started_record(child), canceled_record(child)
    )


def _one_shot_reusing_run_id(store: Backend, p: Purged) -> object:
    run = replace(p.root, session_id="")
    return store.start_one_shot_run(run, started_record(run))


def _one_shot_child_of_purged_parent(store: Backend, p: Purged) -> object:
    parent = replace(p.root, session_id="")
    child = run_start(parent_run_id=parent.run_id)
    return store.start_one_shot_child_run(
        child, link_record(parent, child, event_key="link"), started_record(child)
    )


Operation = Callable[[Backend, Purged], object]

OPERATIONS_ON_PURGED: list[tuple[str, Operation]] = [
    ("load_session", lambda s, p: s.load_session(p.session_id)),
    ("load_session_status", lambda s, p: s.load_session_status(p.session_id)),
    ("create_session", lambda s, p: s.create_session(p.session_id, at(2))),
    ("end_session", lambda s, p: s.end_session(p.session_id, at(2))),
    ("list_session_runs", lambda s, p: s.list_session_runs(p.session_id)),
    ("list_session_run_records", lambda s, p: s.list_session_run_records(p.session_id)),
    ("load_run", lambda s, p: s.load_run(p.root.run_id)),
    ("load_run_of_child", lambda s, p: s.load_run(p.child.run_id)),
    ("load_run_suspension", lambda s, p: s.load_run_suspension(p.root.run_id)),
    ("list_run_records", lambda s, p: s.list_run_records(p.root.run_id)),
    ("list_run_records_of_child", lambda s, p: s.list_run_records(p.child.run_id)),
    ("append_run_record", lambda s, p: s.append_run_record(record(p.root))),
    ("append_exact_retry", lambda s, p: s.append_run_record(p.note)),
    (
        "record_run_cancellation",
        lambda s, p: s.record_run_cancellation(
            p.root.run_id, "user_requested", cancellation_record(p.root)
        ),
    ),
    (
        "record_run_suspension",
        lambda s, p: s.record_run_suspension(p.root.run_id, checkpoint(), suspended_record(p.root)),
    ),
    (
        "record_run_terminal",
        lambda s, p: s.record_run_terminal(
            p.root.run_id, RunStatus.COMPLETED, terminal_record(p.root, RunStatus.COMPLETED)
        ),
    ),
    (
        "repair_run_terminal",
        lambda s, p: s.repair_run_terminal(
            p.root.run_id, RunStatus.COMPLETED, terminal_record(p.root, RunStatus.COMPLETED)
        ),
    ),
    (
        "repair_run_suspension",
        lambda s, p: s.repair_run_suspension(p.root.run_id, checkpoint(), suspended_record(p.root)),
    ),
    (
        "start_root_exact_retry",
        lambda s, p: s.start_root_run(p.root, p.root_started, canceled_record(p.root)),
    ),
    (
        "start_child_exact_retry",
        lambda s, p: s.start_child_run(
            p.child, p.link, started_record(p.child), canceled_record(p.child)
        ),
    ),
    ("start_root_in_purged_session", _new_root_in_purged_session),
    ("start_root_reusing_purged_run_id", _root_reusing_run_id),
    ("start_child_of_purged_parent", _child_of_purged_parent),
    ("start_continuation_of_purged_run", _continuation_elsewhere),
    ("start_one_shot_reusing_purged_run_id", _one_shot_reusing_run_id),
    ("start_one_shot_child_of_purged_parent", _one_shot_child_of_purged_parent),
]


@pytest.mark.parametrize(
    "operation",
    [pytest.param(op, id=name) for name, op in OPERATIONS_ON_PURGED],
)
def test_operation_naming_purged_session_or_its_run_is_session_purged(
    store: Backend, purged: Purged, operation: Operation
) -> None:
    ids = (purged.root.run_id, purged.child.run_id)
    before_other = observe(store, session_id=purged.other_session_id)
    error = expect_rejected(
        store,
        lambda: operation(store, purged),
        SessionPurgedError,
        "session_purged",
        *ids,
        session_id=purged.session_id,
    )
    assert isinstance(error, SessionPurgedError)
    assert observe(store, session_id=purged.other_session_id) == before_other


def test_start_validation_comes_before_purged_check(store: Backend, purged: Purged) -> None:
    run = run_start(session_id=purged.session_id)
    canceled = replace(canceled_record(run), type="planner_note")
    expect_rejected(
        store,
        lambda: store.start_root_run(run, started_record(run), canceled),
        InvalidArgumentError,
        "invalid_argument",
        run.run_id,
        session_id=purged.session_id,
    )


def test_purged_check_comes_before_continuation_check(store: Backend, purged: Purged) -> None:
    run = run_start(session_id=purged.session_id, predecessor_run_id=uid("run-unknown"))
    expect_rejected(
        store,
        lambda: store.start_root_run(run, started_record(run), canceled_record(run)),
        SessionPurgedError,
        "session_purged",
        run.run_id,
        run.predecessor_run_id,
        session_id=purged.session_id,
    )
