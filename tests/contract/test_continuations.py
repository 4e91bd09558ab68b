"""Contract rules of continuation starts (CONTRACT.md 3.13, with 1.4 and 3.3/3.4)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace

import pytest

from runtime_store_client import (
    AppendResult,
    ChildRunStartResult,
    InvalidArgumentError,
    Record,
    RootRunStartResult,
    RunConflictError,
    RunMeta,
    RunNotFoundError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    SessionStatus,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    all_records,
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


def suspend(store: Backend, run: RunStart) -> None:
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))


def suspended_root(store: Backend, session_id: str, *, agent_id: str = "agent-1") -> RunStart:
    run = start_root(store, session_id, agent_id=agent_id).run
    suspend(store, run)
    return run


def successor_root(session_id: str, predecessor_run_id: str, **changes: object) -> RunStart:
    run = run_start(session_id=session_id, predecessor_run_id=predecessor_run_id)
    return replace(run, **changes)  # type: ignore[arg-type]


def send_root(store: Backend, run: RunStart) -> RootRunStartResult:
    return store.start_root_run(run, started_record(run), canceled_record(run))


def expect_root_rejected(
    store: Backend, run: RunStart, error: type[StoreError], code: str
) -> StoreError:
    """The root continuation fails and neither run nor the session changed."""
    return expect_rejected(
        store,
        lambda: send_root(store, run),
        error,
        code,
        run.predecessor_run_id,
        run.run_id,
        session_id=run.session_id,
    )


# --- root continuations -------------------------------------------------------------------


def test_root_continuation_of_suspended_run_proceeds(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    run = successor_root(session.id, predecessor.run_id)
    result = send_root(store, run)
    assert result == RootRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        started=AppendResult(id="1", inserted=True, session_status=SessionStatus.ACTIVE),
        canceled=None,
    )


def test_root_continuation_stores_predecessor_in_run_started_payload(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    run = successor_root(session.id, predecessor.run_id)
    started = started_record(run)
    store.start_root_run(run, started, canceled_record(run))
    records = all_records(store, run.run_id)
    assert records == [replace(started, id="1")]
    assert json.loads(records[0].payload)["PredecessorRunID"] == predecessor.run_id


def test_root_continuation_does_not_store_predecessor_on_run_meta(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    run = successor_root(session.id, predecessor.run_id)
    send_root(store, run)
    meta = store.load_run(run.run_id)
    assert "predecessor_run_id" not in {field.name for field in fields(RunMeta)}
    assert meta == RunMeta(
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=session.id,
        parent_run_id="",
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=run.started_at,
        updated_at=meta.updated_at,
        labels={},
        cancellation_reason="",
    )


def test_first_continuation_sets_successor_and_leaves_predecessor_suspended(
    store: Backend,
) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    before = store.load_run(predecessor.run_id)
    records = all_records(store, predecessor.run_id)
    checkpoint_before = store.load_run_suspension(predecessor.run_id)
    run = successor_root(session.id, predecessor.run_id)
    send_root(store, run)
    after = store.load_run(predecessor.run_id)
    assert before.successor_run_id == ""
    assert after.successor_run_id == run.run_id
    assert replace(after, successor_run_id="", updated_at=before.updated_at) == before
    assert all_records(store, predecessor.run_id) == records
    assert store.load_run_suspension(predecessor.run_id) == checkpoint_before
    assert store.load_run(run.run_id).successor_run_id == ""


def test_second_continuation_of_one_predecessor_is_run_conflict_writing_nothing(
    store: Backend,
) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    first = successor_root(session.id, predecessor.run_id)
    send_root(store, first)
    second = successor_root(session.id, predecessor.run_id)
    error = expect_root_rejected(store, second, RunConflictError, "run_conflict")
    assert first.run_id in error.message
    with pytest.raises(RunNotFoundError):
        store.load_run(second.run_id)


def test_admitted_successor_retry_succeeds_after_it_finished(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    run = successor_root(session.id, predecessor.run_id)
    first = send_root(store, run)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    retry = send_root(store, run)
    assert retry.started == replace(first.started, inserted=False)
    assert retry.run_status is RunStatus.COMPLETED
    assert store.load_run(predecessor.run_id).successor_run_id == run.run_id


def test_continuation_refused_after_its_check_leaves_successor_unset(store: Backend) -> None:
    """The continuation check passes, the retry path then refuses the start (its run ID is
    taken by another run): the whole start is one transaction, so nothing is set."""
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    taken = start_root(store, session.id).run
    run = successor_root(session.id, predecessor.run_id, run_id=taken.run_id)
    before = observe(store, predecessor.run_id, taken.run_id, session_id=session.id)
    with pytest.raises(StoreError) as info:
        send_root(store, run)
    assert info.value.code in ("run_conflict", "event_conflict")
    assert observe(store, predecessor.run_id, taken.run_id, session_id=session.id) == before
    assert store.load_run(predecessor.run_id).successor_run_id == ""


def test_root_continuation_exact_retry_returns_original_ids(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    run = successor_root(session.id, predecessor.run_id)
    send_root(store, run)
    before = observe(store, predecessor.run_id, run.run_id, session_id=session.id)
    retry = send_root(store, run)
    assert retry.started == AppendResult(
        id="1", inserted=False, session_status=SessionStatus.ACTIVE
    )
    assert observe(store, predecessor.run_id, run.run_id, session_id=session.id) == before


def test_root_continuation_in_ended_session_stops(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    store.end_session(session.id, at(1))
    run = successor_root(session.id, predecessor.run_id)
    result = send_root(store, run)
    assert result.outcome is RunStartOutcome.STOP
    assert result.run_status is RunStatus.CANCELED
    payload = json.loads(all_records(store, run.run_id)[0].payload)
    assert payload["PredecessorRunID"] == predecessor.run_id


def test_root_continuation_of_itself_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = successor_root(session.id, "")
    run = replace(run, predecessor_run_id=run.run_id)
    expect_root_rejected(store, run, InvalidArgumentError, "invalid_argument")


def test_root_continuation_payload_without_predecessor_is_invalid_argument(
    store: Backend,
) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id)
    run = successor_root(session.id, predecessor.run_id)
    started = replace(started_record(run), payload=dumps({"ParentRunID": ""}))
    expect_rejected(
        store,
        lambda: store.start_root_run(run, started, canceled_record(run)),
        InvalidArgumentError,
        "invalid_argument",
        predecessor.run_id,
        run.run_id,
        session_id=session.id,
    )


def test_root_continuation_of_unknown_predecessor_is_run_not_found(store: Backend) -> None:
    session = new_session(store)
    run = successor_root(session.id, uid("run-unknown"))
    expect_root_rejected(store, run, RunNotFoundError, "run_not_found")


def test_root_continuation_of_running_predecessor_is_run_conflict_naming_status(
    store: Backend,
) -> None:
    session = new_session(store)
    predecessor = start_root(store, session.id).run
    run = successor_root(session.id, predecessor.run_id)
    error = expect_root_rejected(store, run, RunConflictError, "run_conflict")
    assert "running" in error.message


@pytest.mark.parametrize("status", [RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED])
def test_root_continuation_of_finished_predecessor_is_run_conflict(
    store: Backend, status: RunStatus
) -> None:
    session = new_session(store)
    predecessor = start_root(store, session.id).run
    store.record_run_terminal(predecessor.run_id, status, terminal_record(predecessor, status))
    run = successor_root(session.id, predecessor.run_id)
    error = expect_root_rejected(store, run, RunConflictError, "run_conflict")
    assert str(status) in error.message


def test_root_continuation_of_predecessor_in_another_session_is_run_conflict(
    store: Backend,
) -> None:
    other = new_session(store)
    predecessor = suspended_root(store, other.id)
    session = new_session(store)
    run = successor_root(session.id, predecessor.run_id)
    before_other = observe(store, predecessor.run_id, session_id=other.id)
    expect_root_rejected(store, run, RunConflictError, "run_conflict")
    assert observe(store, predecessor.run_id, session_id=other.id) == before_other


def test_root_continuation_of_predecessor_of_another_agent_is_run_conflict(
    store: Backend,
) -> None:
    session = new_session(store)
    predecessor = suspended_root(store, session.id, agent_id="agent-other")
    run = successor_root(session.id, predecessor.run_id)
    expect_root_rejected(store, run, RunConflictError, "run_conflict")


def test_root_continuation_of_child_predecessor_is_run_conflict(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    child = ChildRequest.under(parent)
    child.send(store)
    suspend(store, child.run)
    run = successor_root(session.id, child.run.run_id)
    expect_rejected(
        store,
        lambda: send_root(store, run),
        RunConflictError,
        "run_conflict",
        parent.run_id,
        child.run.run_id,
        run.run_id,
        session_id=session.id,
    )


def test_root_continuation_of_one_shot_predecessor_is_run_conflict(store: Backend) -> None:
    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    suspend(store, one_shot)
    session = new_session(store)
    run = successor_root(session.id, one_shot.run_id)
    expect_root_rejected(store, run, RunConflictError, "run_conflict")


def test_root_continuation_check_comes_before_retry_path(store: Backend) -> None:
    session = new_session(store)
    existing = start_root(store, session.id).run
    run = replace(existing, predecessor_run_id=uid("run-unknown"))
    expect_root_rejected(store, run, RunNotFoundError, "run_not_found")


def test_root_continuation_check_comes_before_session_lookup(store: Backend) -> None:
    run = successor_root(uid("sess-unknown"), uid("run-unknown"))
    expect_root_rejected(store, run, RunNotFoundError, "run_not_found")


# --- child continuations -----------------------------------------------------------------


@dataclass(frozen=True)
class ChildRequest:
    """A child start under a running parent."""

    parent: RunStart
    run: RunStart
    link: Record

    @staticmethod
    def under(
        parent: RunStart, *, predecessor_run_id: str = "", agent_id: str = "agent-child"
    ) -> ChildRequest:
        run = run_start(
            agent_id=agent_id,
            session_id=parent.session_id,
            parent_run_id=parent.run_id,
            predecessor_run_id=predecessor_run_id,
        )
        return ChildRequest(parent=parent, run=run, link=link_record(parent, run))

    def send(self, store: Backend) -> ChildRunStartResult:
        return store.start_child_run(
            self.run, self.link, started_record(self.run), canceled_record(self.run)
        )


def suspended_child(store: Backend, parent: RunStart, *, agent_id: str = "agent-child") -> RunStart:
    request = ChildRequest.under(parent, agent_id=agent_id)
    request.send(store)
    suspend(store, request.run)
    return request.run


def expect_child_rejected(
    store: Backend, request: ChildRequest, error: type[StoreError], code: str
) -> None:
    """The child continuation fails and neither parent, predecessor nor child changed."""
    expect_rejected(
        store,
        lambda: request.send(store),
        error,
        code,
        request.parent.run_id,
        request.run.predecessor_run_id,
        request.run.run_id,
        session_id=request.parent.session_id,
    )


def test_child_continuation_of_suspended_sibling_proceeds(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    predecessor = suspended_child(store, parent)
    request = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    result = request.send(store)
    active = SessionStatus.ACTIVE
    assert result == ChildRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="3", inserted=True, session_status=active),
        started=AppendResult(id="1", inserted=True, session_status=active),
        canceled=None,
    )


def test_child_continuation_stores_predecessor_in_payload_not_on_meta(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    predecessor = suspended_child(store, parent)
    request = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    request.send(store)
    records = all_records(store, request.run.run_id)
    assert records == [replace(started_record(request.run), id="1")]
    payload = json.loads(records[0].payload)
    assert payload == {
        "ParentRunID": parent.run_id,
        "PredecessorRunID": predecessor.run_id,
        "Labels": None,
    }
    meta = store.load_run(request.run.run_id)
    assert meta.parent_run_id == parent.run_id
    assert predecessor.run_id not in {meta.run_id, meta.parent_run_id, meta.session_id}


def test_child_continuation_of_unknown_predecessor_is_run_not_found_without_link(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    request = ChildRequest.under(parent, predecessor_run_id=uid("run-unknown"))
    expect_child_rejected(store, request, RunNotFoundError, "run_not_found")


def test_child_continuation_of_running_predecessor_is_run_conflict_without_link(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    running = ChildRequest.under(parent)
    running.send(store)
    request = ChildRequest.under(parent, predecessor_run_id=running.run.run_id)
    expect_child_rejected(store, request, RunConflictError, "run_conflict")


def test_child_continuation_of_completed_predecessor_is_run_conflict_without_link(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    done = ChildRequest.under(parent)
    done.send(store)
    store.record_run_terminal(
        done.run.run_id, RunStatus.COMPLETED, terminal_record(done.run, RunStatus.COMPLETED)
    )
    request = ChildRequest.under(parent, predecessor_run_id=done.run.run_id)
    expect_child_rejected(store, request, RunConflictError, "run_conflict")


# A child continuation under another parent than its predecessor's: 12.4,
# tests/contract/test_child_continuations.py.


def test_child_continuation_of_root_predecessor_is_run_conflict(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    predecessor = suspended_root(store, session.id, agent_id="agent-child")
    request = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    expect_child_rejected(store, request, RunConflictError, "run_conflict")


def test_child_continuation_of_predecessor_of_another_agent_is_run_conflict(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    predecessor = suspended_child(store, parent, agent_id="agent-other")
    request = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    expect_child_rejected(store, request, RunConflictError, "run_conflict")


def test_child_continuation_of_predecessor_in_another_session_is_run_conflict(
    store: Backend,
) -> None:
    other = new_session(store)
    other_parent = start_root(store, other.id).run
    predecessor = suspended_child(store, other_parent)
    session = new_session(store)
    parent = start_root(store, session.id).run
    request = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    before_other = observe(store, other_parent.run_id, session_id=other.id)
    expect_child_rejected(store, request, RunConflictError, "run_conflict")
    assert observe(store, other_parent.run_id, session_id=other.id) == before_other


def test_child_continuation_check_comes_before_parent_check(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )
    request = ChildRequest.under(parent, predecessor_run_id=uid("run-unknown"))
    expect_child_rejected(store, request, RunNotFoundError, "run_not_found")


def test_child_continuation_exact_retry_returns_original_ids(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    predecessor = suspended_child(store, parent)
    request = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    request.send(store)
    ids = [predecessor.run_id, parent.run_id, request.run.run_id]
    before = observe(store, *ids, session_id=session.id)
    retry = request.send(store)
    assert retry.parent_record == AppendResult(
        id="3", inserted=False, session_status=SessionStatus.ACTIVE
    )
    assert retry.started == AppendResult(
        id="1", inserted=False, session_status=SessionStatus.ACTIVE
    )
    assert observe(store, *ids, session_id=session.id) == before


def test_second_child_continuation_of_one_predecessor_is_run_conflict_without_link(
    store: Backend,
) -> None:
    session = new_session(store)
    parent = start_root(store, session.id).run
    predecessor = suspended_child(store, parent)
    first = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    first.send(store)
    assert store.load_run(predecessor.run_id).successor_run_id == first.run.run_id
    second = ChildRequest.under(parent, predecessor_run_id=predecessor.run_id)
    expect_child_rejected(store, second, RunConflictError, "run_conflict")
