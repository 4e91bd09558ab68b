"""``record_run_terminal`` (CONTRACT.md 3.10)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    Record,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStatus,
    RunTerminalConflictError,
    SessionStatus,
)
from tests.contract.builders import (
    Backend,
    all_records,
    assert_rejected,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    completed_payload,
    dumps,
    new_session,
    observe,
    run_start,
    start_root,
    suspended_record,
    terminal_record,
)

FAILURE = {"message": "tool timed out", "kind": "timeout"}

# --------------------------------------------------------------------------- helpers


def completed_with(
    run: RunStart, payload: Mapping[str, Any], *, event_key: str = "terminal"
) -> Record:
    """A ``run_completed`` record on ``run`` carrying exactly ``payload``."""
    rec = terminal_record(run, RunStatus.COMPLETED, event_key=event_key)
    return dataclasses.replace(rec, payload=dumps(payload))


@pytest.fixture
def session_id(store: Backend) -> str:
    return new_session(store).id


@pytest.fixture
def run(store: Backend, session_id: str) -> RunStart:
    """A running root run without labels; its ``run_started`` record has ID "1"."""
    return start_root(store, session_id).run


STATUSES = [
    pytest.param(RunStatus.COMPLETED, id="completed"),
    pytest.param(RunStatus.FAILED, id="failed"),
    pytest.param(RunStatus.CANCELED, id="canceled"),
]

# --------------------------------------------------------------------------- state change


@pytest.mark.parametrize("status", STATUSES)
def test_terminal_sets_status_and_stores_record(
    store: Backend, run: RunStart, status: RunStatus
) -> None:
    rec = terminal_record(run, status)

    result = store.record_run_terminal(run.run_id, status, rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert store.load_run(run.run_id).status == status
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


def test_terminal_changes_updated_at(store: Backend, run: RunStart) -> None:
    before = store.load_run(run.run_id).updated_at
    time.sleep(0.01)

    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )

    assert store.load_run(run.run_id).updated_at > before


def test_terminal_of_labelled_run_with_equal_labels(store: Backend, session_id: str) -> None:
    run = start_root(store, session_id, labels={"site": "one", "tier": "gold"}).run
    rec = terminal_record(run, RunStatus.COMPLETED)

    result = store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec)

    assert result.inserted is True
    assert store.load_run(run.run_id).status == RunStatus.COMPLETED


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b'{"status":"success","phase":"completed"}', id="omitted"),
        pytest.param(b'{"status":"success","phase":"completed","labels":null}', id="null"),
        pytest.param(b'{"status":"success","phase":"completed","labels":{}}', id="empty"),
    ],
)
def test_absent_labels_equal_empty_labels(store: Backend, run: RunStart, payload: bytes) -> None:
    rec = dataclasses.replace(terminal_record(run, RunStatus.COMPLETED), payload=payload)

    result = store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec)

    assert result.inserted is True
    assert all_records(store, run.run_id)[-1].payload == payload


# --------------------------------------------------------------------------- payload ↔ status

STATUS_MISMATCHES = [
    pytest.param(
        RunStatus.COMPLETED,
        {"status": "failed", "phase": "failed", "failure": FAILURE},
        id="completed_vs_failed_payload",
    ),
    pytest.param(
        RunStatus.COMPLETED,
        {"status": "canceled", "phase": "canceled", "cancellation": {"reason": "engine_canceled"}},
        id="completed_vs_canceled_payload",
    ),
    pytest.param(
        RunStatus.FAILED, {"status": "success", "phase": "completed"}, id="failed_vs_success"
    ),
    pytest.param(
        RunStatus.CANCELED, {"status": "success", "phase": "completed"}, id="canceled_vs_success"
    ),
    pytest.param(RunStatus.COMPLETED, {"status": "success", "phase": "failed"}, id="phase_differs"),
    pytest.param(
        RunStatus.COMPLETED, {"status": "success", "phase": "success"}, id="phase_success"
    ),
    pytest.param(
        RunStatus.COMPLETED, {"status": "completed", "phase": "completed"}, id="status_completed"
    ),
    pytest.param(RunStatus.COMPLETED, {"status": "", "phase": ""}, id="status_phase_empty"),
    pytest.param(RunStatus.COMPLETED, {"phase": "completed"}, id="status_missing"),
    pytest.param(RunStatus.COMPLETED, {"status": "success"}, id="phase_missing"),
    pytest.param(
        RunStatus.RUNNING, {"status": "running", "phase": "running"}, id="command_running"
    ),
    pytest.param(
        RunStatus.SUSPENDED, {"status": "suspended", "phase": "suspended"}, id="command_suspended"
    ),
]


@pytest.mark.parametrize(("status", "payload"), STATUS_MISMATCHES)
def test_payload_status_and_phase_must_map_to_command_status(
    store: Backend, run: RunStart, session_id: str, status: RunStatus, payload: dict[str, Any]
) -> None:
    rec = completed_with(run, payload)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, status, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


REQUIRED_IFF = [
    pytest.param(
        RunStatus.FAILED, {"status": "failed", "phase": "failed"}, id="failed_without_failure"
    ),
    pytest.param(
        RunStatus.COMPLETED,
        {"status": "success", "phase": "completed", "failure": FAILURE},
        id="completed_with_failure",
    ),
    pytest.param(
        RunStatus.CANCELED,
        {
            "status": "canceled",
            "phase": "canceled",
            "failure": FAILURE,
            "cancellation": {"reason": "engine_canceled"},
        },
        id="canceled_with_failure",
    ),
    pytest.param(
        RunStatus.CANCELED,
        {"status": "canceled", "phase": "canceled"},
        id="canceled_without_cancellation",
    ),
    pytest.param(
        RunStatus.COMPLETED,
        {"status": "success", "phase": "completed", "cancellation": {"reason": "engine_canceled"}},
        id="completed_with_cancellation",
    ),
    pytest.param(
        RunStatus.FAILED,
        {
            "status": "failed",
            "phase": "failed",
            "failure": FAILURE,
            "cancellation": {"reason": "engine_canceled"},
        },
        id="failed_with_cancellation",
    ),
    pytest.param(
        RunStatus.CANCELED,
        {"status": "canceled", "phase": "canceled", "cancellation": {"reason": ""}},
        id="canceled_with_empty_reason",
    ),
    pytest.param(
        RunStatus.FAILED,
        {"status": "failed", "phase": "failed", "failure": {"kind": "timeout"}},
        id="failure_without_message",
    ),
    pytest.param(
        RunStatus.FAILED,
        {"status": "failed", "phase": "failed", "failure": {"message": "boom", "kind": ""}},
        id="failure_with_empty_kind",
    ),
]


@pytest.mark.parametrize(("status", "payload"), REQUIRED_IFF)
def test_failure_required_iff_failed_and_cancellation_iff_canceled(
    store: Backend, run: RunStart, session_id: str, status: RunStatus, payload: dict[str, Any]
) -> None:
    rec = completed_with(run, payload)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, status, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize(
    "labels",
    [
        pytest.param(None, id="omitted"),
        pytest.param({"site": "two"}, id="other_value"),
        pytest.param({"site": "one", "extra": "x"}, id="extra_label"),
        pytest.param({"Site": "one"}, id="key_case"),
    ],
)
def test_payload_labels_must_equal_run_labels(
    store: Backend, session_id: str, labels: dict[str, str] | None
) -> None:
    run = start_root(store, session_id, labels={"site": "one"}).run
    payload = completed_payload(RunStatus.COMPLETED, labels=labels)
    rec = completed_with(run, payload)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_labels_on_unlabelled_run_are_invalid_argument(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = completed_with(run, completed_payload(RunStatus.COMPLETED, labels={"site": "one"}))

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- canceled reason


def test_canceled_without_stored_reason_must_be_engine_canceled(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = terminal_record(run, RunStatus.CANCELED, reason="user_requested")

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.CANCELED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("reason", ["engine_canceled", "timeout"])
def test_canceled_reason_must_equal_stored_reason(
    store: Backend, run: RunStart, session_id: str, reason: str
) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    rec = terminal_record(run, RunStatus.CANCELED, reason=reason)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.CANCELED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_canceled_with_stored_reason_is_accepted(store: Backend, run: RunStart) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    rec = terminal_record(run, RunStatus.CANCELED, reason="user_requested")

    result = store.record_run_terminal(run.run_id, RunStatus.CANCELED, rec)

    assert result == AppendResult(id="3", inserted=True, session_status=SessionStatus.ACTIVE)
    assert store.load_run(run.run_id).status == RunStatus.CANCELED


# --------------------------------------------------------------------------- record envelope


def test_record_type_must_be_run_completed(store: Backend, run: RunStart, session_id: str) -> None:
    rec = dataclasses.replace(terminal_record(run, RunStatus.COMPLETED), type="planner_note")

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_record_must_name_the_command_run(store: Backend, session_id: str) -> None:
    first = start_root(store, session_id).run
    second = start_root(store, session_id).run
    rec = terminal_record(second, RunStatus.COMPLETED)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(first.run_id, RunStatus.COMPLETED, rec),
        InvalidArgumentError,
        first.run_id,
        second.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"agent_id": "agent-other"}, id="other_agent"),
        pytest.param({"session_id": ""}, id="missing_session"),
    ],
)
def test_record_owner_must_equal_run_owner(
    store: Backend, run: RunStart, session_id: str, changes: dict[str, Any]
) -> None:
    rec = dataclasses.replace(terminal_record(run, RunStatus.COMPLETED), **changes)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=session_id,
    )


def test_unknown_run_is_run_not_found(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)
    rec = terminal_record(ghost, RunStatus.COMPLETED)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(ghost.run_id, RunStatus.COMPLETED, rec),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )


def test_run_existence_is_checked_before_run_dependent_validation(
    store: Backend, session_id: str
) -> None:
    ghost = run_start(session_id=session_id)
    rec = completed_with(ghost, completed_payload(RunStatus.COMPLETED, labels={"a": "b"}))

    assert_rejected(
        store,
        lambda: store.record_run_terminal(ghost.run_id, RunStatus.COMPLETED, rec),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- conflicts and retries


@pytest.mark.parametrize("event_key", ["terminal", "terminal-2"], ids=["same_key", "other_key"])
def test_other_terminal_status_is_terminal_conflict(
    store: Backend, run: RunStart, session_id: str, event_key: str
) -> None:
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    rec = terminal_record(run, RunStatus.FAILED, event_key=event_key)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.FAILED, rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("status", STATUSES)
def test_suspended_run_is_terminal_conflict(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    rec = terminal_record(run, status)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, status, rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_run_stopped_at_start_is_terminal_conflict_for_other_status(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    rec = terminal_record(run, RunStatus.COMPLETED)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_run_stopped_at_start_is_terminal_conflict_for_other_key(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    rec = terminal_record(run, RunStatus.CANCELED, reason="session_ended")

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.CANCELED, rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_start_canceled_record_is_exact_retry_of_stopped_start_terminal(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    before = observe(store, run.run_id, session_id=session_id)

    result = store.record_run_terminal(run.run_id, RunStatus.CANCELED, canceled_record(run))

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED)
    assert observe(store, run.run_id, session_id=session_id) == before


@pytest.mark.parametrize("status", STATUSES)
def test_same_status_under_other_key_is_terminal_conflict(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    store.record_run_terminal(run.run_id, status, terminal_record(run, status))
    rec = terminal_record(run, status, event_key="terminal-2")

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, status, rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_same_key_same_status_other_content_is_event_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = terminal_record(run, RunStatus.COMPLETED)
    store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec)
    changed = dataclasses.replace(rec, timestamp=at(41))

    err = assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.COMPLETED, changed),
        EventConflictError,
        run.run_id,
        session_id=session_id,
    )
    assert (err.run_id, err.event_key) == (run.run_id, rec.event_key)


@pytest.mark.parametrize("status", STATUSES)
def test_exact_retry_after_terminal_returns_original_id_and_keeps_updated_at(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    rec = terminal_record(run, status)
    store.record_run_terminal(run.run_id, status, rec)
    before = observe(store, run.run_id, session_id=session_id)
    time.sleep(0.01)

    result = store.record_run_terminal(run.run_id, status, rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)
    assert observe(store, run.run_id, session_id=session_id) == before


def test_exact_retry_after_session_ended_reports_ended(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = terminal_record(run, RunStatus.COMPLETED)
    store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec)
    store.end_session(session_id, at(50))

    result = store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED)
