"""Contract rules of ``start_child_run`` (CONTRACT.md 3.4, with 1.8, 2 and 5)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from runtime_store_client import (
    AppendResult,
    ChildRunStartResult,
    EventConflictError,
    InvalidArgumentError,
    Record,
    RunConflictError,
    RunMeta,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    SessionStatus,
    StoreError,
)
from tests.contract.builders import (
    T0,
    Backend,
    all_records,
    all_session_records,
    at,
    canceled_record,
    checkpoint,
    dumps,
    expect_rejected,
    link_record,
    new_session,
    observe,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)

SITE = {"site": "one"}


@dataclass(frozen=True)
class ChildStart:
    """A child start request whose parent is already running."""

    parent: RunStart
    run: RunStart
    link: Record
    started: Record
    canceled: Record

    def send(self, store: Backend) -> ChildRunStartResult:
        return store.start_child_run(self.run, self.link, self.started, self.canceled)

    def changed(self, **changes: object) -> ChildStart:
        """The same request for a child run changed by ``changes``, records rebuilt."""
        run = replace(self.run, **changes)  # type: ignore[arg-type]
        return child_request(self.parent, run)


def child_request(parent: RunStart, run: RunStart) -> ChildStart:
    return ChildStart(
        parent=parent,
        run=run,
        link=link_record(parent, run),
        started=started_record(run),
        canceled=canceled_record(run),
    )


def child_of(parent: RunStart, **changes: object) -> ChildStart:
    """A valid child start under ``parent`` (agent ``agent-child``, labels ``SITE``)."""
    run = run_start(
        agent_id="agent-child",
        session_id=parent.session_id,
        parent_run_id=parent.run_id,
        labels=SITE,
    )
    return child_request(parent, replace(run, **changes))  # type: ignore[arg-type]


def running_parent(store: Backend) -> RunStart:
    session = new_session(store)
    return start_root(store, session.id).run


def expect_child_rejected(
    store: Backend,
    request: ChildStart,
    error: type[StoreError] = InvalidArgumentError,
    code: str = "invalid_argument",
) -> StoreError:
    """The start fails with ``code`` and neither parent, child nor session changed."""
    return expect_rejected(
        store,
        lambda: request.send(store),
        error,
        code,
        request.parent.run_id,
        request.run.run_id,
        session_id=request.parent.session_id,
    )


# --- validation ----------------------------------------------------------------------------


def test_start_child_without_parent_run_id_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    run = replace(request.run, parent_run_id="")
    bad = replace(request, run=run, started=started_record(run), canceled=canceled_record(run))
    expect_child_rejected(store, bad)


def test_start_child_without_session_id_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    expect_child_rejected(store, child_of(parent, session_id=""))


def test_start_child_sub_millisecond_started_at_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    expect_child_rejected(store, child_of(parent, started_at=T0 + timedelta(microseconds=1)))


def test_start_child_link_of_another_type_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    expect_child_rejected(store, replace(request, link=replace(request.link, type="planner_note")))


def test_start_child_link_not_on_parent_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    link = replace(request.link, run_id=request.run.run_id, agent_id=request.run.agent_id)
    expect_child_rejected(store, replace(request, link=link))


def test_start_child_link_in_another_session_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    link = replace(request.link, session_id=uid("sess-other"))
    expect_child_rejected(store, replace(request, link=link))


@pytest.mark.parametrize(
    "payload_change",
    [
        pytest.param({"ChildRunID": "run-other"}, id="child-run"),
        pytest.param({"ChildAgentID": "agent-other"}, id="child-agent"),
        pytest.param({"ToolName": ""}, id="no-tool-name"),
        pytest.param({"ToolCallID": ""}, id="no-tool-call-id"),
        pytest.param({"Extra": "x"}, id="unknown-key"),
        pytest.param({"ToolName": 7}, id="wrong-type"),
        pytest.param({"ToolCallID": None}, id="null-string"),
    ],
)
def test_start_child_link_payload_not_matching_is_invalid_argument(
    store: Backend, payload_change: dict[str, object]
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    payload = {
        "ToolName": "search",
        "ToolCallID": "call-1",
        "ChildRunID": request.run.run_id,
        "ChildAgentID": request.run.agent_id,
        **payload_change,
    }
    link = replace(request.link, payload=dumps(payload))
    expect_child_rejected(store, replace(request, link=link))


@pytest.mark.parametrize(
    "payload",
    [b"null", b"{} {}", b'{"ToolName":"search","ToolName":"search"}', b"\xff"],
    ids=["top-level-null", "second-value", "duplicate-key", "invalid-utf8"],
)
def test_start_child_link_payload_not_strict_is_invalid_argument(
    store: Backend, payload: bytes
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    expect_child_rejected(store, replace(request, link=replace(request.link, payload=payload)))


def test_start_child_link_without_event_key_is_invalid_argument(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    expect_child_rejected(store, replace(request, link=replace(request.link, event_key="")))


def test_start_child_started_payload_parent_other_than_start_is_invalid_argument(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    payload = dumps({"ParentRunID": "", "PredecessorRunID": "", "Labels": SITE})
    expect_child_rejected(
        store, replace(request, started=replace(request.started, payload=payload))
    )


def test_start_child_started_of_another_owner_is_run_record_owner_mismatch(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    started = replace(request.started, agent_id=parent.agent_id)
    expect_child_rejected(
        store,
        replace(request, started=started),
        RunRecordOwnerMismatchError,
        "run_record_owner_mismatch",
    )


def test_start_child_canceled_reason_other_than_session_ended_is_invalid_argument(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    payload = dumps(
        {
            "status": "canceled",
            "phase": "canceled",
            "cancellation": {"reason": "user_requested"},
            "labels": SITE,
        }
    )
    expect_child_rejected(
        store, replace(request, canceled=replace(request.canceled, payload=payload))
    )


def test_start_child_started_and_canceled_with_equal_keys_is_invalid_argument(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    canceled = replace(request.canceled, event_key=request.started.event_key)
    expect_child_rejected(store, replace(request, canceled=canceled))


def test_start_child_validation_comes_before_parent_lookup(store: Backend) -> None:
    session = new_session(store)
    parent = run_start(session_id=session.id)
    request = child_of(parent)
    expect_child_rejected(store, replace(request, link=replace(request.link, payload=b"null")))


def test_start_child_link_timestamp_need_not_equal_started_at(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    link = replace(request.link, timestamp=at(12345))
    result = replace(request, link=link).send(store)
    assert result.outcome is RunStartOutcome.PROCEED
    assert all_records(store, parent.run_id)[-1] == replace(link, id="2")


# --- state checks ---------------------------------------------------------------------------


def test_start_child_of_unknown_parent_is_run_not_found(store: Backend) -> None:
    session = new_session(store)
    parent = run_start(session_id=session.id)
    error = expect_child_rejected(store, child_of(parent), RunNotFoundError, "run_not_found")
    assert error.status == 404


def test_start_child_link_agent_not_parents_is_run_record_owner_mismatch(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    link = replace(request.link, agent_id="agent-other")
    expect_child_rejected(
        store,
        replace(request, link=link),
        RunRecordOwnerMismatchError,
        "run_record_owner_mismatch",
    )


def test_start_child_parent_in_another_session_is_run_record_owner_mismatch(
    store: Backend,
) -> None:
    parent = running_parent(store)
    other = new_session(store)
    request = child_of(parent, session_id=other.id)
    expect_rejected(
        store,
        lambda: request.send(store),
        RunRecordOwnerMismatchError,
        "run_record_owner_mismatch",
        parent.run_id,
        request.run.run_id,
        session_id=other.id,
    )


@pytest.mark.parametrize("status", [RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED])
def test_start_child_of_finished_parent_is_run_not_active(
    store: Backend, status: RunStatus
) -> None:
    parent = running_parent(store)
    store.record_run_terminal(parent.run_id, status, terminal_record(parent, status))
    expect_child_rejected(store, child_of(parent), RunNotActiveError, "run_not_active")


def test_start_child_of_suspended_parent_is_run_not_active(store: Backend) -> None:
    parent = running_parent(store)
    store.record_run_suspension(parent.run_id, checkpoint(), suspended_record(parent))
    expect_child_rejected(store, child_of(parent), RunNotActiveError, "run_not_active")


def test_start_child_of_stopped_parent_is_run_not_active(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    parent = start_root(store, session.id).run
    expect_child_rejected(store, child_of(parent), RunNotActiveError, "run_not_active")


# --- proceed and stop -------------------------------------------------------------------------


def test_start_child_in_active_session_proceeds(store: Backend) -> None:
    parent = running_parent(store)
    result = child_of(parent).send(store)
    active = SessionStatus.ACTIVE
    assert result == ChildRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="2", inserted=True, session_status=active),
        started=AppendResult(id="1", inserted=True, session_status=active),
        canceled=None,
    )


def test_start_child_stores_child_run_meta(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    meta = store.load_run(request.run.run_id)
    assert meta == RunMeta(
        run_id=request.run.run_id,
        agent_id="agent-child",
        session_id=parent.session_id,
        parent_run_id=parent.run_id,
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=T0,
        updated_at=meta.updated_at,
        labels=SITE,
        cancellation_reason="",
    )


def test_start_child_writes_link_on_parent_then_run_started_on_child(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    parent_started = all_records(store, parent.run_id)[0]
    request.send(store)
    link, started = replace(request.link, id="2"), replace(request.started, id="1")
    assert all_records(store, parent.run_id) == [parent_started, link]
    assert all_records(store, request.run.run_id) == [started]
    assert all_session_records(store, parent.session_id) == [parent_started, link, started]


def test_start_child_does_not_change_parent_state(store: Backend) -> None:
    parent = running_parent(store)
    meta = store.load_run(parent.run_id)
    child_of(parent).send(store)
    assert store.load_run(parent.run_id) == meta


def test_start_child_in_ended_session_stops(store: Backend) -> None:
    parent = running_parent(store)
    store.end_session(parent.session_id, at(1))
    result = child_of(parent).send(store)
    ended = SessionStatus.ENDED
    assert result == ChildRunStartResult(
        outcome=RunStartOutcome.STOP,
        run_status=RunStatus.CANCELED,
        parent_record=AppendResult(id="2", inserted=True, session_status=ended),
        started=AppendResult(id="1", inserted=True, session_status=ended),
        canceled=AppendResult(id="2", inserted=True, session_status=ended),
    )


def test_start_child_stop_cancels_child_with_session_ended(store: Backend) -> None:
    parent = running_parent(store)
    store.end_session(parent.session_id, at(1))
    request = child_of(parent)
    request.send(store)
    meta = store.load_run(request.run.run_id)
    assert meta.status is RunStatus.CANCELED
    assert meta.start_outcome is RunStartOutcome.STOP
    assert meta.cancellation_reason == "session_ended"
    assert store.load_run(parent.run_id).status is RunStatus.RUNNING


def test_start_child_stop_writes_link_then_started_then_canceled(store: Backend) -> None:
    parent = running_parent(store)
    store.end_session(parent.session_id, at(1))
    request = child_of(parent)
    parent_started = all_records(store, parent.run_id)[0]
    request.send(store)
    link = replace(request.link, id="2")
    started, canceled = replace(request.started, id="1"), replace(request.canceled, id="2")
    assert all_records(store, parent.run_id) == [parent_started, link]
    assert all_records(store, request.run.run_id) == [started, canceled]
    assert all_session_records(store, parent.session_id) == [
        parent_started,
        link,
        started,
        canceled,
    ]


# --- retries ------------------------------------------------------------------------------


def test_start_child_exact_retry_returns_original_ids_and_outcome(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    before = observe(store, parent.run_id, request.run.run_id, session_id=parent.session_id)
    retry = request.send(store)
    active = SessionStatus.ACTIVE
    assert retry == ChildRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="2", inserted=False, session_status=active),
        started=AppendResult(id="1", inserted=False, session_status=active),
        canceled=None,
    )
    assert observe(store, parent.run_id, request.run.run_id, session_id=parent.session_id) == (
        before
    )


def test_start_child_exact_retry_of_stop_returns_original_ids_and_outcome(
    store: Backend,
) -> None:
    parent = running_parent(store)
    store.end_session(parent.session_id, at(1))
    request = child_of(parent)
    request.send(store)
    before = observe(store, parent.run_id, request.run.run_id, session_id=parent.session_id)
    retry = request.send(store)
    ended = SessionStatus.ENDED
    assert retry == ChildRunStartResult(
        outcome=RunStartOutcome.STOP,
        run_status=RunStatus.CANCELED,
        parent_record=AppendResult(id="2", inserted=False, session_status=ended),
        started=AppendResult(id="1", inserted=False, session_status=ended),
        canceled=AppendResult(id="2", inserted=False, session_status=ended),
    )
    assert observe(store, parent.run_id, request.run.run_id, session_id=parent.session_id) == (
        before
    )


def test_start_child_exact_retry_is_valid_after_parent_stopped(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )
    before = observe(store, parent.run_id, request.run.run_id, session_id=parent.session_id)
    retry = request.send(store)
    assert retry.outcome is RunStartOutcome.PROCEED
    assert retry.run_status is RunStatus.RUNNING
    assert retry.parent_record == AppendResult(
        id="2", inserted=False, session_status=SessionStatus.ACTIVE
    )
    assert retry.started == AppendResult(
        id="1", inserted=False, session_status=SessionStatus.ACTIVE
    )
    assert observe(store, parent.run_id, request.run.run_id, session_id=parent.session_id) == (
        before
    )


def test_start_child_exact_retry_returns_current_child_status(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    store.record_run_terminal(
        request.run.run_id, RunStatus.FAILED, terminal_record(request.run, RunStatus.FAILED)
    )
    retry = request.send(store)
    assert retry.outcome is RunStartOutcome.PROCEED
    assert retry.run_status is RunStatus.FAILED


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"agent_id": "agent-other"}, id="agent"),
        pytest.param({"labels": {"site": "two"}}, id="labels"),
        pytest.param({"started_at": at(1)}, id="started-at"),
    ],
)
def test_start_child_changed_retry_is_run_conflict(
    store: Backend, change: dict[str, object]
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    expect_child_rejected(store, request.changed(**change), RunConflictError, "run_conflict")


def test_start_child_retry_under_another_parent_is_run_conflict(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    other_parent = start_root(store, parent.session_id).run
    moved = child_request(other_parent, replace(request.run, parent_run_id=other_parent.run_id))
    expect_rejected(
        store,
        lambda: moved.send(store),
        RunConflictError,
        "run_conflict",
        parent.run_id,
        other_parent.run_id,
        request.run.run_id,
        session_id=parent.session_id,
    )


def test_start_child_retry_with_other_parent_link_key_is_run_conflict(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    link = replace(request.link, event_key="link-other")
    expect_child_rejected(store, replace(request, link=link), RunConflictError, "run_conflict")


def test_start_child_retry_with_other_start_key_is_run_conflict(store: Backend) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    started = replace(request.started, event_key="start-other")
    expect_child_rejected(
        store, replace(request, started=started), RunConflictError, "run_conflict"
    )


def test_start_child_retry_of_stop_with_other_terminal_key_is_run_conflict(
    store: Backend,
) -> None:
    parent = running_parent(store)
    store.end_session(parent.session_id, at(1))
    request = child_of(parent)
    request.send(store)
    canceled = replace(request.canceled, event_key="canceled-other")
    expect_child_rejected(
        store, replace(request, canceled=canceled), RunConflictError, "run_conflict"
    )


def test_start_child_retry_same_link_key_other_content_is_event_conflict(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    link = link_record(parent, request.run, tool_call_id="call-2")
    error = expect_child_rejected(
        store, replace(request, link=link), EventConflictError, "event_conflict"
    )
    assert error.run_id == parent.run_id
    assert error.event_key == request.link.event_key


def test_start_child_retry_same_start_key_other_content_is_event_conflict(
    store: Backend,
) -> None:
    parent = running_parent(store)
    request = child_of(parent)
    request.send(store)
    started = replace(request.started, turn_id="turn-2")
    error = expect_child_rejected(
        store, replace(request, started=started), EventConflictError, "event_conflict"
    )
    assert error.run_id == request.run.run_id
    assert error.event_key == "start"


def test_start_child_run_id_used_by_a_root_is_run_conflict(store: Backend) -> None:
    parent = running_parent(store)
    root = start_root(store, parent.session_id, agent_id="agent-child", labels=SITE).run
    request = child_of(parent, run_id=root.run_id)
    expect_rejected(
        store,
        lambda: request.send(store),
        RunConflictError,
        "run_conflict",
        parent.run_id,
        root.run_id,
        session_id=parent.session_id,
    )
