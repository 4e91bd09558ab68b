"""``record_run_cancellation`` (CONTRACT.md 3.8) and cancellation provenance (3.10)."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    RunCancellationConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    SessionStatus,
)
from tests.contract.builders import (
    Backend,
    all_records,
    assert_rejected,
    at,
    cancellation_record,
    checkpoint,
    dumps,
    new_session,
    observe,
    record,
    run_start,
    start_root,
    suspended_record,
    terminal_record,
)

# --------------------------------------------------------------------------- helpers


def finish(store: Backend, run: RunStart, status: RunStatus) -> None:
    """Move a running ``run`` to ``status`` with no cancellation recorded."""
    if status is RunStatus.SUSPENDED:
        store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    else:
        store.record_run_terminal(run.run_id, status, terminal_record(run, status))


def record_types(store: Backend, run_id: str) -> list[str]:
    return [r.type for r in all_records(store, run_id)]


def completed_reason(store: Backend, run_id: str) -> str:
    """The ``cancellation.reason`` of the run's final ``run_completed`` record."""
    final = all_records(store, run_id)[-1]
    assert final.type == "run_completed"
    reason = json.loads(final.payload)["cancellation"]["reason"]
    assert isinstance(reason, str)
    return reason


@pytest.fixture
def session_id(store: Backend) -> str:
    return new_session(store).id


@pytest.fixture
def run(store: Backend, session_id: str) -> RunStart:
    """A running root run; its ``run_started`` record has ID "1"."""
    return start_root(store, session_id).run


# --------------------------------------------------------------------------- first cancellation


def test_cancellation_stores_reason_and_record(store: Backend, run: RunStart) -> None:
    rec = cancellation_record(run, "user_requested")

    result = store.record_run_cancellation(run.run_id, "user_requested", rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert store.load_run(run.run_id).cancellation_reason == "user_requested"
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


def test_cancellation_leaves_status_running(store: Backend, run: RunStart) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))

    assert store.load_run(run.run_id).status == RunStatus.RUNNING


def test_running_run_still_accepts_records_after_cancellation(
    store: Backend, run: RunStart
) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))

    result = store.append_run_record(record(run))

    assert result == AppendResult(id="3", inserted=True, session_status=SessionStatus.ACTIVE)


def test_cancellation_changes_updated_at(store: Backend, run: RunStart) -> None:
    before = store.load_run(run.run_id).updated_at
    time.sleep(0.01)

    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))

    assert store.load_run(run.run_id).updated_at > before


def test_any_non_empty_reason_is_allowed_for_explicit_cancellation(
    store: Backend, run: RunStart
) -> None:
    rec = cancellation_record(run, "operator_shutdown")

    result = store.record_run_cancellation(run.run_id, "operator_shutdown", rec)

    assert result.inserted is True
    assert store.load_run(run.run_id).cancellation_reason == "operator_shutdown"


def test_other_payload_keys_are_ignored_and_stored_byte_for_byte(
    store: Backend, run: RunStart
) -> None:
    payload = b'{"requested_by":"alice","reason":"user_requested","extra":[1,2]}'
    rec = dataclasses.replace(cancellation_record(run), payload=payload)

    store.record_run_cancellation(run.run_id, "user_requested", rec)

    assert all_records(store, run.run_id)[-1].payload == payload


# --------------------------------------------------------------------------- provenance (3.10)


def test_provenance_explicit_cancellation_then_canceled_terminal(
    store: Backend, run: RunStart
) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))

    store.record_run_terminal(
        run.run_id,
        RunStatus.CANCELED,
        terminal_record(run, RunStatus.CANCELED, reason="user_requested"),
    )

    meta = store.load_run(run.run_id)
    assert (meta.status, meta.cancellation_reason) == (RunStatus.CANCELED, "user_requested")
    assert record_types(store, run.run_id) == [
        "run_started",
        "runtime.cancellation_intent",
        "run_completed",
    ]
    assert completed_reason(store, run.run_id) == "user_requested"


def test_provenance_start_in_ended_session_is_session_ended_without_intent(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))

    started = start_root(store, session_id)

    assert started.result.outcome == RunStartOutcome.STOP
    meta = store.load_run(started.run.run_id)
    assert (meta.status, meta.cancellation_reason) == (RunStatus.CANCELED, "session_ended")
    assert record_types(store, started.run.run_id) == ["run_started", "run_completed"]
    assert completed_reason(store, started.run.run_id) == "session_ended"


def test_provenance_engine_canceled_has_empty_reason_without_intent(
    store: Backend, run: RunStart
) -> None:
    store.record_run_terminal(
        run.run_id,
        RunStatus.CANCELED,
        terminal_record(run, RunStatus.CANCELED, reason="engine_canceled"),
    )

    meta = store.load_run(run.run_id)
    assert (meta.status, meta.cancellation_reason) == (RunStatus.CANCELED, "")
    assert record_types(store, run.run_id) == ["run_started", "run_completed"]
    assert completed_reason(store, run.run_id) == "engine_canceled"


# --------------------------------------------------------------------------- retries and conflicts


def test_exact_retry_returns_original_id_not_inserted(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = cancellation_record(run)
    store.record_run_cancellation(run.run_id, "user_requested", rec)
    before = observe(store, run.run_id, session_id=session_id)
    time.sleep(0.01)

    result = store.record_run_cancellation(run.run_id, "user_requested", rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)
    assert observe(store, run.run_id, session_id=session_id) == before


def test_exact_retry_after_canceled_terminal_returns_original_id(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = cancellation_record(run)
    store.record_run_cancellation(run.run_id, "user_requested", rec)
    store.record_run_terminal(
        run.run_id,
        RunStatus.CANCELED,
        terminal_record(run, RunStatus.CANCELED, reason="user_requested"),
    )
    before = observe(store, run.run_id, session_id=session_id)

    result = store.record_run_cancellation(run.run_id, "user_requested", rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)
    assert observe(store, run.run_id, session_id=session_id) == before


@pytest.mark.parametrize("event_key", ["cancel", "cancel-2"], ids=["same_key", "other_key"])
def test_differing_stored_reason_is_cancellation_conflict(
    store: Backend, run: RunStart, session_id: str, event_key: str
) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    rec = cancellation_record(run, "timeout", event_key=event_key)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "timeout", rec),
        RunCancellationConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_cancelling_run_stopped_at_start_with_other_reason_is_cancellation_conflict(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    rec = cancellation_record(run, "user_requested")

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        RunCancellationConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_cancelling_run_stopped_at_start_with_session_ended_is_run_not_active(
    store: Backend, session_id: str
) -> None:
    """3.8: a stopped start stores the reason but no cancellation key, so it is terminal."""
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    rec = cancellation_record(run, "session_ended")

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "session_ended", rec),
        RunNotActiveError,
        run.run_id,
        session_id=session_id,
    )


def test_same_reason_under_other_key_is_cancellation_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    rec = cancellation_record(run, "user_requested", event_key="cancel-2")

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        RunCancellationConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_same_key_same_reason_other_content_is_event_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = cancellation_record(run)
    store.record_run_cancellation(run.run_id, "user_requested", rec)
    changed = dataclasses.replace(rec, timestamp=at(21))

    err = assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", changed),
        EventConflictError,
        run.run_id,
        session_id=session_id,
    )
    assert (err.run_id, err.event_key) == (run.run_id, rec.event_key)


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(RunStatus.COMPLETED, id="completed"),
        pytest.param(RunStatus.FAILED, id="failed"),
        pytest.param(RunStatus.CANCELED, id="engine_canceled"),
        pytest.param(RunStatus.SUSPENDED, id="suspended"),
    ],
)
def test_terminal_run_without_cancellation_is_run_not_active(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    finish(store, run, status)
    rec = cancellation_record(run)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        RunNotActiveError,
        run.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- validation


def test_payload_reason_must_equal_command_reason(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = cancellation_record(run, "timeout")

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b'"user_requested"', id="string"),
        pytest.param(b'["user_requested"]', id="array"),
        pytest.param(b"{}", id="reason_missing"),
        pytest.param(b'{"Reason":"user_requested"}', id="reason_wrong_case"),
        pytest.param(b'{"reason":1}', id="reason_not_string"),
    ],
)
def test_payload_must_be_object_with_reason(
    store: Backend, run: RunStart, session_id: str, payload: bytes
) -> None:
    rec = dataclasses.replace(cancellation_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_empty_reason_is_invalid_argument(store: Backend, run: RunStart, session_id: str) -> None:
    rec = dataclasses.replace(cancellation_record(run), payload=dumps({"reason": ""}))

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_empty_run_id_is_invalid_argument(store: Backend, run: RunStart, session_id: str) -> None:
    rec = cancellation_record(run)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation("", "user_requested", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_record_type_must_be_cancellation_intent(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = dataclasses.replace(cancellation_record(run), type="planner_note")

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_record_must_name_the_command_run(store: Backend, session_id: str) -> None:
    first = start_root(store, session_id).run
    second = start_root(store, session_id).run
    rec = cancellation_record(second)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(first.run_id, "user_requested", rec),
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
    rec = dataclasses.replace(cancellation_record(run), **changes)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=session_id,
    )


def test_unknown_run_is_run_not_found(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)
    rec = cancellation_record(ghost)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(ghost.run_id, "user_requested", rec),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )
