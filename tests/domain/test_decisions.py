"""The stateful rules as pure decisions: each rule proved on snapshots, without a database.

The contract suite proves the same rules through every store; these pin each decision
function to its rule, in milliseconds, so a change to a rule fails here first.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import append, commands, starts
from app.domain.payloads import RunCompletedPayload
from app.domain.state import RunState, SessionRowStatus, SessionState, StoredRecord
from app.domain.validation import NewRecord, NewRun
from runtime_store_client import (
    Checkpoint,
    EventConflictError,
    InvalidArgumentError,
    RunCancellationConflictError,
    RunConflictError,
    RunNotActiveError,
    RunRecordOwnerMismatchError,
    RunSessionMismatchError,
    RunStartOutcome,
    RunStatus,
    RunSuspensionConflictError,
    RunTerminalConflictError,
)


def _run(**changes: object) -> RunState:
    run = RunState(
        run_id="r1",
        agent_id="agent",
        session_id="s1",
        parent_run_id="",
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at_ms=1_000,
        updated_at_ms=1_000,
        labels="{}",
        cancellation_reason="",
        record_count=1,
        start_key="start",
    )
    return replace(run, **changes)  # type: ignore[arg-type]


def _record(key: str = "k", payload: bytes = b"{}", **changes: object) -> NewRecord:
    record = NewRecord(
        event_key=key,
        run_id="r1",
        agent_id="agent",
        session_id="s1",
        turn_id="",
        type="note",
        payload=payload,
        timestamp_ms=5,
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def _new(**changes: object) -> NewRun:
    new = NewRun(
        run_id="r2",
        agent_id="agent",
        session_id="s1",
        parent_run_id="",
        predecessor_run_id="r1",
        started_at_ms=2_000,
        labels={},
    )
    return replace(new, **changes)  # type: ignore[arg-type]


def _stored(record: NewRecord, seq: int = 7) -> StoredRecord:
    return StoredRecord(seq=seq, record=record)


# --- the append check (2.3) and the ordinary append (3.7) -------------------------------


def test_append_check_another_agent_or_session_is_owner_mismatch() -> None:
    for other in (_record(agent_id="other"), _record(session_id="s2")):
        with pytest.raises(RunRecordOwnerMismatchError):
            append.append_check(_run(), other, None)


def test_append_check_owner_is_checked_before_the_key() -> None:
    stored = _stored(_record(payload=b"[1]"))
    with pytest.raises(RunRecordOwnerMismatchError):
        append.append_check(_run(), _record(agent_id="other"), stored)


def test_append_check_same_record_is_an_exact_retry_with_its_original_id() -> None:
    assert append.append_check(_run(), _record(), _stored(_record(), seq=7)) == "7"


def test_append_check_other_content_under_the_key_is_event_conflict() -> None:
    for changed in (_record(payload=b"[]"), _record(turn_id="t"), _record(timestamp_ms=6)):
        with pytest.raises(EventConflictError):
            append.append_check(_run(), changed, _stored(_record()))


def test_append_check_a_free_key_may_be_inserted() -> None:
    assert append.append_check(_run(), _record(), None) is None


def test_ordinary_append_on_a_terminal_run_is_not_active_but_its_retry_succeeds() -> None:
    for status in (RunStatus.SUSPENDED, RunStatus.COMPLETED, RunStatus.CANCELED):
        stopped = _run(status=status)
        with pytest.raises(RunNotActiveError):
            append.ordinary_append(stopped, _record(), None)
        assert append.ordinary_append(stopped, _record(), _stored(_record(), seq=3)) == "3"


def test_batch_a_repeated_key_is_a_retry_of_its_first_occurrence() -> None:
    records = [_record("a"), _record("b"), _record("a")]
    assert append.batch_steps(_run(), records, {}) == [None, None, 0]


def test_batch_a_repeated_key_with_other_content_is_event_conflict_naming_it() -> None:
    records = [_record("a"), _record("a", payload=b"[]")]
    with pytest.raises(EventConflictError) as raised:
        append.batch_steps(_run(), records, {})
    assert raised.value.event_key == "a"


def test_batch_the_failing_record_is_named_in_the_error() -> None:
    records = [_record("a"), _record("b", agent_id="other")]
    with pytest.raises(RunRecordOwnerMismatchError) as raised:
        append.batch_steps(_run(), records, {})
    assert raised.value.event_key == "b"


def test_batch_stored_records_answer_their_ids() -> None:
    assert append.batch_steps(_run(), [_record("a")], {"a": _stored(_record("a"), 4)}) == ["4"]


# --- starts (3.3-3.6) and continuations (3.13) ------------------------------------------


def test_retry_with_another_identity_is_run_conflict() -> None:
    existing = _run(run_id="r2", started_at_ms=2_000)
    starts.check_retry(existing, _new(), _record("start"))
    for changed in (
        _new(agent_id="x"),
        _new(session_id="s2"),
        _new(started_at_ms=1),
        _new(labels={"a": "b"}),
    ):
        with pytest.raises(RunConflictError):
            starts.check_retry(existing, changed, _record("start"))


def test_retry_with_another_start_key_is_run_conflict() -> None:
    existing = _run(run_id="r2", started_at_ms=2_000)
    starts.check_retry(existing, _new(), _record("start"))
    with pytest.raises(RunConflictError):
        starts.check_retry(existing, _new(), _record("start-2"))


def test_retry_of_a_stopped_start_compares_the_canceled_key() -> None:
    existing = _run(
        run_id="r2",
        started_at_ms=2_000,
        start_outcome=RunStartOutcome.STOP,
        status=RunStatus.CANCELED,
        terminal_key="stop",
    )
    starts.check_retry(existing, _new(), _record("start"), _record("stop"))
    with pytest.raises(RunConflictError):
        starts.check_retry(existing, _new(), _record("start"), _record("stop-2"))


def test_continuation_needs_a_suspended_predecessor_of_the_same_session_agent_parent() -> None:
    suspended = _run(status=RunStatus.SUSPENDED)
    assert starts.continuation(suspended, _new()) is True
    for predecessor in (
        _run(),
        replace(suspended, session_id="s2"),
        replace(suspended, agent_id="x"),
        replace(suspended, parent_run_id="p"),
    ):
        with pytest.raises(RunConflictError):
            starts.continuation(predecessor, _new())


def test_continuation_one_successor_per_predecessor() -> None:
    continued = _run(status=RunStatus.SUSPENDED, successor_run_id="r2")
    assert starts.continuation(continued, _new()) is False  # the admitted one's retry
    with pytest.raises(RunConflictError):
        starts.continuation(continued, _new(run_id="r3"))


def test_new_child_needs_a_running_parent_of_its_session_with_the_link_key_free() -> None:
    child = _new(parent_run_id="r1", predecessor_run_id="")
    starts.check_new_child_parent(_run(), child, None)
    with pytest.raises(RunSessionMismatchError):
        starts.check_new_child_parent(_run(session_id="s2"), child, None)
    with pytest.raises(RunNotActiveError):
        starts.check_new_child_parent(_run(status=RunStatus.COMPLETED), child, None)
    with pytest.raises(RunConflictError):
        starts.check_new_child_parent(_run(), child, "7")


def test_a_start_in_an_ended_session_stops_canceled_for_session_ended() -> None:
    active = SessionState("s1", SessionRowStatus.ACTIVE, 1, None, None, 0)
    ended = replace(active, status=SessionRowStatus.ENDED, ended_at_ms=2)
    assert starts.outcome(active) is RunStartOutcome.PROCEED
    assert starts.outcome(ended) is RunStartOutcome.STOP
    assert starts.stopped(_record("stop")) == {
        "status": RunStatus.CANCELED,
        "cancellation_reason": "session_ended",
        "terminal_key": "stop",
    }


# --- commands (3.8-3.11) ----------------------------------------------------------------


def test_cancellation_another_reason_is_cancellation_conflict() -> None:
    with pytest.raises(RunCancellationConflictError):
        commands.cancellation(_run(cancellation_reason="a"), "b", _record(), None)


def test_cancellation_of_a_run_stopped_at_start_is_not_active() -> None:
    stopped = _run(status=RunStatus.CANCELED, cancellation_reason="session_ended")
    with pytest.raises(RunNotActiveError):
        commands.cancellation(stopped, "session_ended", _record(), None)


def test_cancellation_under_another_key_is_cancellation_conflict() -> None:
    canceled = _run(cancellation_reason="a", cancellation_key="first")
    with pytest.raises(RunCancellationConflictError):
        commands.cancellation(canceled, "a", _record("second"), None)
    assert commands.cancellation(canceled, "a", _record("first"), _stored(_record("first"))) == "7"


def test_suspension_of_a_finished_run_is_terminal_conflict() -> None:
    with pytest.raises(RunTerminalConflictError):
        commands.suspension(
            _run(status=RunStatus.FAILED), Checkpoint(id="c", data=b"x"), _record(), None, None
        )


def test_suspension_with_another_checkpoint_or_key_is_suspension_conflict() -> None:
    suspended = _run(status=RunStatus.SUSPENDED, suspension_key="s", terminal_key="s")
    with pytest.raises(RunSuspensionConflictError):
        commands.suspension(
            suspended, Checkpoint(id="c", data=b"y"), _record("s"), None, ("c", b"x")
        )
    with pytest.raises(RunSuspensionConflictError):
        commands.suspension(
            suspended, Checkpoint(id="c", data=b"x"), _record("t"), None, ("c", b"x")
        )


def test_terminal_in_another_status_is_terminal_conflict() -> None:
    for status in (RunStatus.SUSPENDED, RunStatus.FAILED):
        with pytest.raises(RunTerminalConflictError):
            commands.terminal(_run(status=status), RunStatus.COMPLETED, _record(), None)


def test_terminal_under_another_key_is_terminal_conflict() -> None:
    done = _run(status=RunStatus.COMPLETED, terminal_key="end")
    with pytest.raises(RunTerminalConflictError):
        commands.terminal(done, RunStatus.COMPLETED, _record("other"), None)


def _completed(reason: str = "", labels: dict[str, str] | None = None) -> RunCompletedPayload:
    return RunCompletedPayload(
        status="canceled",
        phase="canceled",
        run_status=RunStatus.CANCELED,
        cancellation_reason=reason,
        labels=labels or {},
    )


def test_terminal_cancellation_provenance_the_three_valid_pairings() -> None:
    # explicit cancellation: the stored reason; stopped start: session_ended; engine: none.
    commands.check_terminal_against_run(
        "{}", "user_requested", RunStatus.CANCELED, _completed("user_requested")
    )
    commands.check_terminal_against_run(
        "{}", "session_ended", RunStatus.CANCELED, _completed("session_ended")
    )
    commands.check_terminal_against_run("{}", "", RunStatus.CANCELED, _completed("engine_canceled"))
    for stored, reason in (("", "user_requested"), ("user_requested", "engine_canceled")):
        with pytest.raises(InvalidArgumentError):
            commands.check_terminal_against_run(
                "{}", stored, RunStatus.CANCELED, _completed(reason)
            )


def test_terminal_labels_must_equal_the_runs() -> None:
    with pytest.raises(InvalidArgumentError):
        commands.check_terminal_against_run(
            "{}", "", RunStatus.CANCELED, _completed("engine_canceled", {"a": "b"})
        )


def test_accepted_cancellation_reasons_are_what_the_fast_path_compares() -> None:
    assert commands.accepted_cancellation_reasons(RunStatus.COMPLETED, "") is None
    assert commands.accepted_cancellation_reasons(RunStatus.CANCELED, "engine_canceled") == (
        "engine_canceled",
        "",
    )
    assert commands.accepted_cancellation_reasons(RunStatus.CANCELED, "x") == ("x",)


def test_repairs_write_on_running_report_stored_or_different() -> None:
    assert commands.repair_terminal(_run(), RunStatus.FAILED, _record()) is commands.Repair.WRITE
    done = _run(status=RunStatus.FAILED, terminal_key="k")
    assert (
        commands.repair_terminal(done, RunStatus.FAILED, _record("k"))
        is commands.Repair.ALREADY_STORED
    )
    assert (
        commands.repair_terminal(done, RunStatus.COMPLETED, _record("k"))
        is commands.Repair.DIFFERENT
    )
    suspended = _run(status=RunStatus.SUSPENDED, suspension_key="k")
    checkpoint = Checkpoint(id="c", data=b"x")
    assert (
        commands.repair_suspension(suspended, checkpoint, _record("k"), ("c", b"x"))
        is commands.Repair.ALREADY_STORED
    )
    assert (
        commands.repair_suspension(suspended, checkpoint, _record("k"), ("c", b"y"))
        is commands.Repair.DIFFERENT
    )
