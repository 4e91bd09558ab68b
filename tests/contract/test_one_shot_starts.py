"""Contract rules of sessionless starts (CONTRACT.md 3.5 and 3.6, with 1.4, 1.8 and 2)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Record,
    RunConflictError,
    RunMeta,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunSessionMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    StoreError,
)
from tests.contract.builders import (
    T0,
    Backend,
    all_records,
    all_session_records,
    at,
    cancellation_record,
    checkpoint,
    dumps,
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
)

SITE = {"site": "one"}


def one_shot(**changes: object) -> RunStart:
    return replace(run_start(labels=SITE), **changes)  # type: ignore[arg-type]


def start_one_shot(store: Backend, **changes: object) -> RunStart:
    run = one_shot(**changes)
    store.start_one_shot_run(run, started_record(run))
    return run


def expect_one_shot_rejected(
    store: Backend,
    run: RunStart,
    started: Record,
    error: type[StoreError] = InvalidArgumentError,
    code: str = "invalid_argument",
) -> StoreError:
    return expect_rejected(
        store,
        lambda: store.start_one_shot_run(run, started),
        error,
        code,
        run.run_id,
        session_id=run.session_id,
    )


# --- start_one_shot_run: validation -----------------------------------------------------


def test_start_one_shot_with_session_id_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = one_shot(session_id=session.id)
    expect_one_shot_rejected(store, run, started_record(run))


def test_start_one_shot_with_parent_run_id_is_invalid_argument(store: Backend) -> None:
    parent = start_one_shot(store)
    run = one_shot(parent_run_id=parent.run_id)
    expect_one_shot_rejected(store, run, started_record(run))


def test_start_one_shot_with_predecessor_run_id_is_invalid_argument(store: Backend) -> None:
    predecessor = start_one_shot(store)
    run = one_shot(predecessor_run_id=predecessor.run_id)
    expect_one_shot_rejected(store, run, started_record(run))


@pytest.mark.parametrize("field", ["run_id", "agent_id"])
def test_start_one_shot_without_required_id_is_invalid_argument(store: Backend, field: str) -> None:
    run = one_shot(**{field: ""})
    expect_one_shot_rejected(store, run, started_record(run))


@pytest.mark.parametrize(
    "started_at",
    [T0.replace(tzinfo=None), T0 + timedelta(microseconds=1)],
    ids=["naive", "sub-millisecond"],
)
def test_start_one_shot_invalid_started_at_is_invalid_argument(
    store: Backend, started_at: object
) -> None:
    run = one_shot(started_at=started_at)
    expect_one_shot_rejected(store, run, started_record(run))


def test_start_one_shot_started_of_another_type_is_invalid_argument(store: Backend) -> None:
    run = one_shot()
    expect_one_shot_rejected(store, run, replace(started_record(run), type="planner_note"))


@pytest.mark.parametrize(
    "payload",
    [b"null", b'{"Extra":1}', b'{"Labels":{"site":"one"}} {}', b'{"ParentRunID":null}'],
    ids=["top-level-null", "unknown-key", "second-value", "null-string"],
)
def test_start_one_shot_started_payload_not_strict_is_invalid_argument(
    store: Backend, payload: bytes
) -> None:
    run = one_shot()
    expect_one_shot_rejected(store, run, replace(started_record(run), payload=payload))


def test_start_one_shot_started_labels_other_than_start_is_invalid_argument(
    store: Backend,
) -> None:
    run = one_shot()
    payload = dumps({"ParentRunID": "", "PredecessorRunID": "", "Labels": {"site": "two"}})
    expect_one_shot_rejected(store, run, replace(started_record(run), payload=payload))


def test_start_one_shot_started_timestamp_other_than_started_at_is_invalid_argument(
    store: Backend,
) -> None:
    run = one_shot()
    expect_one_shot_rejected(store, run, replace(started_record(run), timestamp=at(1)))


@pytest.mark.parametrize(
    ("field", "value"),
    [("run_id", "run-other"), ("agent_id", "agent-other"), ("session_id", "sess-other")],
)
def test_start_one_shot_started_of_another_owner_is_run_record_owner_mismatch(
    store: Backend, field: str, value: str
) -> None:
    run = one_shot()
    started = replace(started_record(run), **{field: value})  # type: ignore[arg-type]
    expect_one_shot_rejected(
        store, run, started, RunRecordOwnerMismatchError, "run_record_owner_mismatch"
    )


# --- start_one_shot_run: new and retries ---------------------------------------------------


def test_start_one_shot_runs_without_session(store: Backend) -> None:
    run = one_shot()
    result = store.start_one_shot_run(run, started_record(run))
    assert result == OneShotRunStartResult(
        run_status=RunStatus.RUNNING,
        record=AppendResult(id="1", inserted=True, session_status=None),
    )


def test_start_one_shot_stores_sessionless_run_meta(store: Backend) -> None:
    run = start_one_shot(store)
    meta = store.load_run(run.run_id)
    assert meta == RunMeta(
        run_id=run.run_id,
        agent_id="agent-1",
        session_id="",
        parent_run_id="",
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=T0,
        updated_at=meta.updated_at,
        labels=SITE,
        cancellation_reason="",
    )


def test_start_one_shot_writes_run_started(store: Backend) -> None:
    run = one_shot()
    started = started_record(run)
    store.start_one_shot_run(run, started)
    assert all_records(store, run.run_id) == [replace(started, id="1")]


def test_start_one_shot_exact_retry_returns_original_id(store: Backend) -> None:
    run = start_one_shot(store)
    before = observe(store, run.run_id)
    retry = store.start_one_shot_run(run, started_record(run))
    assert retry == OneShotRunStartResult(
        run_status=RunStatus.RUNNING,
        record=AppendResult(id="1", inserted=False, session_status=None),
    )
    assert observe(store, run.run_id) == before


def test_start_one_shot_exact_retry_after_run_finished_returns_current_status(
    store: Backend,
) -> None:
    run = start_one_shot(store)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    before = observe(store, run.run_id)
    retry = store.start_one_shot_run(run, started_record(run))
    assert retry == OneShotRunStartResult(
        run_status=RunStatus.COMPLETED,
        record=AppendResult(id="1", inserted=False, session_status=None),
    )
    assert observe(store, run.run_id) == before


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"agent_id": "agent-2"}, id="agent"),
        pytest.param({"labels": {"site": "two"}}, id="labels"),
        pytest.param({"started_at": at(1)}, id="started-at"),
    ],
)
def test_start_one_shot_changed_retry_is_run_conflict(
    store: Backend, change: dict[str, object]
) -> None:
    original = start_one_shot(store)
    run = replace(original, **change)  # type: ignore[arg-type]
    expect_one_shot_rejected(store, run, started_record(run), RunConflictError, "run_conflict")


def test_start_one_shot_retry_with_other_start_key_is_run_conflict(store: Backend) -> None:
    run = start_one_shot(store)
    started = started_record(run, event_key="start-2")
    expect_one_shot_rejected(store, run, started, RunConflictError, "run_conflict")


def test_start_one_shot_retry_same_key_other_content_is_event_conflict(store: Backend) -> None:
    run = start_one_shot(store)
    started = replace(started_record(run), turn_id="turn-2")
    error = expect_one_shot_rejected(store, run, started, EventConflictError, "event_conflict")
    assert error.run_id == run.run_id
    assert error.event_key == "start"


def test_start_one_shot_run_id_used_in_a_session_is_run_conflict(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id, labels=SITE).run
    run = replace(root, session_id="")
    before = observe(store, root.run_id, session_id=session.id)
    expect_one_shot_rejected(store, run, started_record(run), RunConflictError, "run_conflict")
    assert observe(store, root.run_id, session_id=session.id) == before


def test_start_one_shot_run_id_used_by_a_stopped_root_is_run_conflict(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    root = start_root(store, session.id, labels=SITE).run
    run = replace(root, session_id="")
    expect_one_shot_rejected(store, run, started_record(run), RunConflictError, "run_conflict")


# --- sessionless appends ----------------------------------------------------------------


def test_one_shot_append_result_has_no_session_status(store: Backend) -> None:
    run = start_one_shot(store)
    assert store.append_run_record(record(run)) == AppendResult(
        id="2", inserted=True, session_status=None
    )


def test_one_shot_lifecycle_results_have_no_session_status(store: Backend) -> None:
    run = start_one_shot(store)
    cancel = store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    assert cancel == AppendResult(id="2", inserted=True, session_status=None)
    terminal = store.record_run_terminal(
        run.run_id,
        RunStatus.CANCELED,
        terminal_record(run, RunStatus.CANCELED, reason="user_requested"),
    )
    assert terminal == AppendResult(id="3", inserted=True, session_status=None)


# --- start_one_shot_child_run ---------------------------------------------------------------


@dataclass(frozen=True)
class OneShotChild:
    parent: RunStart
    run: RunStart
    link: Record
    started: Record

    def send(self, store: Backend) -> OneShotChildRunStartResult:
        return store.start_one_shot_child_run(self.run, self.link, self.started)


def one_shot_child_of(parent: RunStart, **changes: object) -> OneShotChild:
    """A valid sessionless child start under ``parent``."""
    base = run_start(agent_id="agent-child", parent_run_id=parent.run_id, labels=SITE)
    run = replace(base, **changes)  # type: ignore[arg-type]
    return OneShotChild(
        parent=parent,
        run=run,
        link=link_record(parent, run, event_key="link"),
        started=started_record(run),
    )


def expect_one_shot_child_rejected(
    store: Backend,
    request: OneShotChild,
    error: type[StoreError] = InvalidArgumentError,
    code: str = "invalid_argument",
) -> StoreError:
    return expect_rejected(
        store,
        lambda: request.send(store),
        error,
        code,
        request.parent.run_id,
        request.run.run_id,
        session_id=request.parent.session_id,
    )


def test_start_one_shot_child_without_parent_run_id_is_invalid_argument(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    run = replace(request.run, parent_run_id="")
    bad = replace(request, run=run, started=started_record(run))
    expect_one_shot_child_rejected(store, bad)


def test_start_one_shot_child_with_session_id_is_invalid_argument(store: Backend) -> None:
    parent = start_one_shot(store)
    session = new_session(store)
    request = one_shot_child_of(parent, session_id=session.id)
    expect_rejected(
        store,
        lambda: request.send(store),
        InvalidArgumentError,
        "invalid_argument",
        parent.run_id,
        request.run.run_id,
        session_id=session.id,
    )


def test_start_one_shot_child_with_predecessor_run_id_is_invalid_argument(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    predecessor = start_one_shot(store)
    request = one_shot_child_of(parent, predecessor_run_id=predecessor.run_id)
    expect_one_shot_child_rejected(store, request)


def test_start_one_shot_child_link_with_session_is_invalid_argument(store: Backend) -> None:
    parent = start_one_shot(store)
    session = new_session(store)
    request = one_shot_child_of(parent)
    link = replace(request.link, session_id=session.id)
    expect_one_shot_child_rejected(store, replace(request, link=link))


def test_start_one_shot_child_link_and_started_with_equal_keys_is_invalid_argument(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    link = replace(request.link, event_key=request.started.event_key)
    expect_one_shot_child_rejected(store, replace(request, link=link))


def test_start_one_shot_child_link_of_another_type_is_invalid_argument(store: Backend) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    link = replace(request.link, type="planner_note")
    expect_one_shot_child_rejected(store, replace(request, link=link))


@pytest.mark.parametrize(
    "payload_change",
    [
        pytest.param({"ChildRunID": "run-other"}, id="child-run"),
        pytest.param({"ChildAgentID": "agent-other"}, id="child-agent"),
        pytest.param({"ToolName": ""}, id="no-tool-name"),
        pytest.param({"ToolCallID": ""}, id="no-tool-call-id"),
        pytest.param({"Extra": "x"}, id="unknown-key"),
    ],
)
def test_start_one_shot_child_link_payload_not_matching_is_invalid_argument(
    store: Backend, payload_change: dict[str, object]
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    payload = {
        "ToolName": "search",
        "ToolCallID": "call-1",
        "ChildRunID": request.run.run_id,
        "ChildAgentID": request.run.agent_id,
        **payload_change,
    }
    link = replace(request.link, payload=dumps(payload))
    expect_one_shot_child_rejected(store, replace(request, link=link))


def test_start_one_shot_child_started_payload_parent_other_than_start_is_invalid_argument(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    payload = dumps({"ParentRunID": "", "PredecessorRunID": "", "Labels": SITE})
    started = replace(request.started, payload=payload)
    expect_one_shot_child_rejected(store, replace(request, started=started))


def test_start_one_shot_child_of_unknown_parent_is_run_not_found(store: Backend) -> None:
    parent = one_shot()
    expect_one_shot_child_rejected(
        store, one_shot_child_of(parent), RunNotFoundError, "run_not_found"
    )


def test_start_one_shot_child_of_parent_with_session_is_run_session_mismatch(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    request = one_shot_child_of(parent)
    expect_rejected(
        store,
        lambda: request.send(store),
        RunSessionMismatchError,
        "run_session_mismatch",
        parent.run_id,
        request.run.run_id,
        session_id=session.id,
    )


def test_start_one_shot_child_parent_with_session_wins_over_parent_not_running(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )
    request = one_shot_child_of(parent)
    expect_rejected(
        store,
        lambda: request.send(store),
        RunSessionMismatchError,
        "run_session_mismatch",
        parent.run_id,
        request.run.run_id,
        session_id=session.id,
    )


@pytest.mark.parametrize("status", [RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED])
def test_start_one_shot_child_of_finished_parent_is_run_not_active(
    store: Backend, status: RunStatus
) -> None:
    parent = start_one_shot(store)
    store.record_run_terminal(parent.run_id, status, terminal_record(parent, status))
    expect_one_shot_child_rejected(
        store, one_shot_child_of(parent), RunNotActiveError, "run_not_active"
    )


def test_start_one_shot_child_of_suspended_parent_is_run_not_active(store: Backend) -> None:
    parent = start_one_shot(store)
    store.record_run_suspension(parent.run_id, checkpoint(), suspended_record(parent))
    expect_one_shot_child_rejected(
        store, one_shot_child_of(parent), RunNotActiveError, "run_not_active"
    )


def test_start_one_shot_child_link_agent_not_parents_is_run_record_owner_mismatch(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    link = replace(request.link, agent_id="agent-other")
    expect_one_shot_child_rejected(
        store,
        replace(request, link=link),
        RunRecordOwnerMismatchError,
        "run_record_owner_mismatch",
    )


def test_start_one_shot_child_parent_not_running_wins_over_link_agent(store: Backend) -> None:
    parent = start_one_shot(store)
    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )
    request = one_shot_child_of(parent)
    link = replace(request.link, agent_id="agent-other")
    expect_one_shot_child_rejected(
        store, replace(request, link=link), RunNotActiveError, "run_not_active"
    )


def test_start_one_shot_child_runs_and_links_parent(store: Backend) -> None:
    parent = start_one_shot(store)
    result = one_shot_child_of(parent).send(store)
    assert result == OneShotChildRunStartResult(
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="2", inserted=True, session_status=None),
        started=AppendResult(id="1", inserted=True, session_status=None),
    )


def test_start_one_shot_child_writes_link_on_parent_and_run_started_on_child(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    parent_started = all_records(store, parent.run_id)[0]
    request.send(store)
    assert all_records(store, parent.run_id) == [parent_started, replace(request.link, id="2")]
    assert all_records(store, request.run.run_id) == [replace(request.started, id="1")]


def test_start_one_shot_child_stores_sessionless_child_meta(store: Backend) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    meta = store.load_run(request.run.run_id)
    assert meta == RunMeta(
        run_id=request.run.run_id,
        agent_id="agent-child",
        session_id="",
        parent_run_id=parent.run_id,
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=T0,
        updated_at=meta.updated_at,
        labels=SITE,
        cancellation_reason="",
    )


def test_start_one_shot_child_exact_retry_returns_original_ids(store: Backend) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    before = observe(store, parent.run_id, request.run.run_id)
    retry = request.send(store)
    assert retry == OneShotChildRunStartResult(
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="2", inserted=False, session_status=None),
        started=AppendResult(id="1", inserted=False, session_status=None),
    )
    assert observe(store, parent.run_id, request.run.run_id) == before


def test_start_one_shot_child_exact_retry_is_valid_after_parent_finished(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    store.record_run_terminal(
        parent.run_id, RunStatus.FAILED, terminal_record(parent, RunStatus.FAILED)
    )
    before = observe(store, parent.run_id, request.run.run_id)
    retry = request.send(store)
    assert retry == OneShotChildRunStartResult(
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="2", inserted=False, session_status=None),
        started=AppendResult(id="1", inserted=False, session_status=None),
    )
    assert observe(store, parent.run_id, request.run.run_id) == before


def test_start_one_shot_child_retry_with_other_parent_link_key_is_run_conflict(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    link = replace(request.link, event_key="link-other")
    expect_one_shot_child_rejected(
        store, replace(request, link=link), RunConflictError, "run_conflict"
    )


def test_start_one_shot_child_retry_with_other_start_key_is_run_conflict(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    started = replace(request.started, event_key="start-other")
    expect_one_shot_child_rejected(
        store, replace(request, started=started), RunConflictError, "run_conflict"
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"labels": {"site": "two"}}, id="labels"),
        pytest.param({"started_at": at(1)}, id="started-at"),
    ],
)
def test_start_one_shot_child_changed_retry_is_run_conflict(
    store: Backend, change: dict[str, object]
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    run = replace(request.run, **change)  # type: ignore[arg-type]
    changed = replace(request, run=run, started=started_record(run))
    expect_one_shot_child_rejected(store, changed, RunConflictError, "run_conflict")


def test_start_one_shot_child_retry_under_another_parent_is_run_conflict(
    store: Backend,
) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    other_parent = start_one_shot(store)
    run = replace(request.run, parent_run_id=other_parent.run_id)
    moved = OneShotChild(
        parent=other_parent,
        run=run,
        link=link_record(other_parent, run, event_key="link"),
        started=started_record(run),
    )
    expect_rejected(
        store,
        lambda: moved.send(store),
        RunConflictError,
        "run_conflict",
        parent.run_id,
        other_parent.run_id,
        run.run_id,
    )


def test_start_one_shot_child_append_result_has_no_session_status(store: Backend) -> None:
    parent = start_one_shot(store)
    request = one_shot_child_of(parent)
    request.send(store)
    assert store.append_run_record(record(request.run)) == AppendResult(
        id="2", inserted=True, session_status=None
    )


def test_start_one_shot_records_never_appear_in_a_session(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id)
    run = start_one_shot(store)
    store.append_run_record(record(run))
    assert [(r.run_id, r.id) for r in all_session_records(store, session.id)] == [
        (root.run.run_id, "1")
    ]
