"""Contract rules of child continuations under another parent (CONTRACT.md 12.4).

The story: a parent ``P1`` linked a child ``C1`` (tool ``search``, call ``call-1``); both
suspended; ``P2`` continues ``P1`` (running). ``C2`` continues ``C1`` under ``P2``, its
link repeating ``C1``'s tool name, tool call ID and child agent, written by ``P1``'s agent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from runtime_store_client import (
    AppendResult,
    ChildRunStartResult,
    Record,
    RunConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunSessionMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    SessionStatus,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    canceled_record,
    checkpoint,
    expect_rejected,
    link_record,
    new_session,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)

CHILD_AGENT = "agent-child"


def suspend(store: Backend, run: RunStart) -> None:
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))


@dataclass(frozen=True)
class Story:
    session_id: str
    p1: RunStart
    c1: RunStart
    p2: RunStart

    def continuation(
        self,
        parent: RunStart | None = None,
        *,
        tool_name: str = "search",
        tool_call_id: str = "call-1",
    ) -> tuple[RunStart, Record]:
        """``C2``: ``C1``'s continuation under ``parent`` (``P2``), and its link."""
        parent = parent or self.p2
        run = run_start(
            agent_id=CHILD_AGENT,
            session_id=parent.session_id,
            parent_run_id=parent.run_id,
            predecessor_run_id=self.c1.run_id,
        )
        return run, link_record(parent, run, tool_name=tool_name, tool_call_id=tool_call_id)


def send(store: Backend, run: RunStart, link: Record) -> ChildRunStartResult:
    return store.start_child_run(run, link, started_record(run), canceled_record(run))


def story(store: Backend) -> Story:
    session = new_session(store)
    p1 = start_root(store, session.id).run
    c1 = run_start(agent_id=CHILD_AGENT, session_id=session.id, parent_run_id=p1.run_id)
    send(store, c1, link_record(p1, c1))
    suspend(store, c1)
    suspend(store, p1)
    p2 = start_root(store, session.id, predecessor_run_id=p1.run_id).run
    return Story(session.id, p1, c1, p2)


def rejected(
    store: Backend, s: Story, run: RunStart, link: Record, error: type[StoreError], code: str
) -> StoreError:
    return expect_rejected(
        store,
        lambda: send(store, run, link),
        error,
        code,
        s.p1.run_id,
        s.c1.run_id,
        run.parent_run_id,
        run.run_id,
        session_id=s.session_id,
    )


def test_child_continuation_under_the_resumed_parent_proceeds(store: Backend) -> None:
    s = story(store)
    run, link = s.continuation()
    active = SessionStatus.ACTIVE
    assert send(store, run, link) == ChildRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        parent_record=AppendResult(id="2", inserted=True, session_status=active),
        started=AppendResult(id="1", inserted=True, session_status=active),
        canceled=None,
    )
    assert store.load_run(run.run_id).parent_run_id == s.p2.run_id
    assert store.load_run(s.c1.run_id).successor_run_id == run.run_id
    assert all_records(store, s.p2.run_id)[-1] == replace(link, id="2")


def test_child_continuation_under_another_parent_exact_retry_returns_original_ids(
    store: Backend,
) -> None:
    s = story(store)
    run, link = s.continuation()
    first = send(store, run, link)
    store.record_run_terminal(
        s.p2.run_id, RunStatus.COMPLETED, terminal_record(s.p2, RunStatus.COMPLETED)
    )
    retry = send(store, run, link)
    assert retry.parent_record == replace(first.parent_record, inserted=False)
    assert retry.started == replace(first.started, inserted=False)


@pytest.mark.parametrize(
    ("link", "fact"),
    [({"tool_name": "fetch"}, "ToolName"), ({"tool_call_id": "call-2"}, "ToolCallID")],
)
def test_child_continuation_link_not_repeating_the_predecessors_is_run_conflict(
    store: Backend, link: dict[str, str], fact: str
) -> None:
    s = story(store)
    run, changed = s.continuation(
        tool_name=link.get("tool_name", "search"), tool_call_id=link.get("tool_call_id", "call-1")
    )
    error = rejected(store, s, run, changed, RunConflictError, "run_conflict")
    assert fact in error.message


def test_child_continuation_under_a_parent_of_another_agent_is_run_conflict(
    store: Backend,
) -> None:
    s = story(store)
    other = start_root(store, s.session_id, agent_id="agent-other").run
    run, link = s.continuation(other)
    error = rejected(store, s, run, link, RunConflictError, "run_conflict")
    assert "agent" in error.message


def test_child_continuation_under_a_stopped_parent_is_run_not_active(store: Backend) -> None:
    s = story(store)
    store.record_run_terminal(
        s.p2.run_id, RunStatus.COMPLETED, terminal_record(s.p2, RunStatus.COMPLETED)
    )
    run, link = s.continuation()
    rejected(store, s, run, link, RunNotActiveError, "run_not_active")


def test_child_continuation_under_the_suspended_original_parent_is_run_not_active(
    store: Backend,
) -> None:
    """Naming the predecessor's own parent is a plain 3.13 continuation: a new child
    there needs it running."""
    s = story(store)
    run, link = s.continuation(s.p1)
    rejected(store, s, run, link, RunNotActiveError, "run_not_active")


def test_child_continuation_under_a_parent_in_another_session_is_run_session_mismatch(
    store: Backend,
) -> None:
    s = story(store)
    other_session = new_session(store)
    other = start_root(store, other_session.id).run
    run, link = s.continuation(other)
    run = replace(run, session_id=s.session_id)
    link = replace(link, session_id=s.session_id)
    rejected(store, s, run, link, RunSessionMismatchError, "run_session_mismatch")


def test_child_continuation_under_an_unknown_parent_is_run_not_found(store: Backend) -> None:
    s = story(store)
    ghost = run_start(run_id=uid("ghost"), session_id=s.session_id)
    run, link = s.continuation(ghost)
    rejected(store, s, run, link, RunNotFoundError, "run_not_found")


def test_second_child_continuation_under_another_parent_is_run_conflict(store: Backend) -> None:
    s = story(store)
    run, link = s.continuation()
    send(store, run, link)
    other = start_root(store, s.session_id).run
    second, second_link = s.continuation(other)
    rejected(store, s, second, second_link, RunConflictError, "run_conflict")


def test_root_continuation_of_a_child_predecessor_is_still_run_conflict(store: Backend) -> None:
    s = story(store)
    run = run_start(agent_id=CHILD_AGENT, session_id=s.session_id, predecessor_run_id=s.c1.run_id)
    expect_rejected(
        store,
        lambda: store.start_root_run(run, started_record(run), canceled_record(run)),
        RunConflictError,
        "run_conflict",
        s.c1.run_id,
        run.run_id,
        session_id=s.session_id,
    )
