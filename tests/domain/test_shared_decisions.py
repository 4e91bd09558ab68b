"""Decisions that the writes, the import's replay and ``db verify`` all take: a moved
child's link (12.4), a stopped start's fields (3.3 step 5), a terminal record's labels
(3.10). Each is proved here without a database."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import commands, starts
from app.domain.payloads import ChildRunLinkedPayload, RunCompletedPayload
from app.domain.state import RunState, StoredRecord
from app.domain.validation import NewRecord, NewRun
from runtime_store_client import RunConflictError, RunStartOutcome, RunStatus

ORIGINAL = starts.LinkFacts("search", "call-1", "child-agent", "parent-agent")


def test_link_facts_of_a_link_are_its_payload_and_its_writer() -> None:
    linked = ChildRunLinkedPayload("search", "call-1", "child-run", "child-agent")
    assert starts.LinkFacts.of(linked, "parent-agent") == ORIGINAL


def test_a_link_that_repeats_every_fact_has_no_difference() -> None:
    assert starts.link_difference(ORIGINAL, replace(ORIGINAL)) is None


@pytest.mark.parametrize(
    ("field", "name"),
    [
        ("tool_name", "ToolName"),
        ("tool_call_id", "ToolCallID"),
        ("child_agent_id", "ChildAgentID"),
        ("parent_agent_id", "agent_id"),
    ],
)
def test_the_first_differing_link_fact_is_named_with_both_values(field: str, name: str) -> None:
    moved = replace(ORIGINAL, **{field: "other"})
    assert starts.link_difference(ORIGINAL, moved) == (name, getattr(ORIGINAL, field), "other")


def test_a_moved_continuation_is_refused_naming_the_link_fact_it_changes() -> None:
    """``check_moved_parent`` decides with ``link_difference``: its answer is unchanged."""
    parent = RunState(
        run_id="p2",
        agent_id="parent-agent",
        session_id="s1",
        parent_run_id="",
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at_ms=1,
        updated_at_ms=1,
        labels="{}",
        cancellation_reason="",
        record_count=1,
        start_key="start",
    )
    new = NewRun("c2", "child-agent", "s1", "p2", "c1", 2, {})
    link = NewRecord("link", "p2", "parent-agent", "s1", "", "child_run_linked", b"{}", 2)
    original = StoredRecord(3, replace(link, run_id="p1", event_key="old"))
    same = ChildRunLinkedPayload("search", "call-1", "c2", "child-agent")
    starts.check_moved_parent(parent, new, link, same, original, replace(same, child_run_id="c1"))
    with pytest.raises(RunConflictError, match="ToolCallID 'call-1', not 'call-2'"):
        starts.check_moved_parent(
            parent, new, link, replace(same, tool_call_id="call-2"), original, same
        )


def test_a_stopped_start_is_canceled_for_session_ended_and_nothing_else() -> None:
    assert starts.stopped_differences("canceled", "session_ended") == []
    assert starts.stopped_differences(RunStatus.CANCELED, "session_ended") == []
    assert starts.stopped_differences("completed", "user_requested") == [
        ("status", "completed", "canceled"),
        ("cancellation_reason", "user_requested", "session_ended"),
    ]
    fields = starts.stopped(NewRecord("stop", "r", "a", "s", "", "run_completed", b"{}", 1))
    assert starts.stopped_differences(fields["status"], fields["cancellation_reason"]) == []


def test_a_terminal_record_carries_the_runs_labels() -> None:
    completed = RunCompletedPayload("success", "completed", RunStatus.COMPLETED, "", {"b": "2"})
    assert commands.labels_match('{"b":"2"}', completed)
    assert not commands.labels_match("{}", completed)
    assert commands.labels_match("{}", replace(completed, labels={}))
