"""``record_run_suspension`` (CONTRACT.md 3.9) and ``load_run_suspension`` (3.12)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from runtime_store_client import (
    AppendResult,
    Checkpoint,
    EventConflictError,
    InvalidArgumentError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStatus,
    RunSuspensionConflictError,
    RunSuspensionNotFoundError,
    RunTerminalConflictError,
    SessionStatus,
)
from tests.contract.builders import (
    Backend,
    all_records,
    assert_rejected,
    at,
    checkpoint,
    dumps,
    new_session,
    observe,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)

BINARY = bytes(range(256)) * 4 + b"\x00\xff\xfe"

# --------------------------------------------------------------------------- helpers


@pytest.fixture
def session_id(store: Backend) -> str:
    return new_session(store).id


@pytest.fixture
def run(store: Backend, session_id: str) -> RunStart:
    """A running root run; its ``run_started`` record has ID "1"."""
    return start_root(store, session_id).run


# --------------------------------------------------------------------------- first suspension


def test_suspension_stores_record_and_sets_status_suspended(store: Backend, run: RunStart) -> None:
    rec = suspended_record(run)

    result = store.record_run_suspension(run.run_id, checkpoint(), rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert store.load_run(run.run_id).status == RunStatus.SUSPENDED
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


def test_checkpoint_bytes_are_returned_byte_for_byte(store: Backend, run: RunStart) -> None:
    cp = Checkpoint(id="cp-1", data=BINARY)

    store.record_run_suspension(run.run_id, cp, suspended_record(run))

    assert store.load_run_suspension(run.run_id) == Checkpoint(id="cp-1", data=BINARY)


def test_suspension_changes_updated_at(store: Backend, run: RunStart) -> None:
    before = store.load_run(run.run_id).updated_at
    time.sleep(0.01)

    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))

    assert store.load_run(run.run_id).updated_at > before


def test_suspension_of_sessionless_run_has_no_session_status(store: Backend) -> None:
    run = run_start()
    store.start_one_shot_run(run, started_record(run))

    result = store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))

    assert result == AppendResult(id="2", inserted=True, session_status=None)


# --------------------------------------------------------------------------- validation


def test_suspension_id_must_equal_checkpoint_id(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = suspended_record(run, "cp-other")

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint("cp-1"), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_empty_checkpoint_data_is_invalid_argument(
    store: Backend, run: RunStart, session_id: str
) -> None:
    cp = checkpoint("cp-1", b"")

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, cp, suspended_record(run)),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_empty_checkpoint_id_is_invalid_argument(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = suspended_record(run, "")

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(""), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_empty_run_id_is_invalid_argument(store: Backend, run: RunStart, session_id: str) -> None:
    rec = suspended_record(run)

    assert_rejected(
        store,
        lambda: store.record_run_suspension("", checkpoint(), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_record_type_must_be_run_suspended(store: Backend, run: RunStart, session_id: str) -> None:
    rec = dataclasses.replace(suspended_record(run), type="planner_note")

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_record_must_name_the_command_run(store: Backend, session_id: str) -> None:
    first = start_root(store, session_id).run
    second = start_root(store, session_id).run
    rec = suspended_record(second)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(first.run_id, checkpoint(), rec),
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
    rec = dataclasses.replace(suspended_record(run), **changes)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(), rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=session_id,
    )


def test_unknown_run_is_run_not_found(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)
    rec = suspended_record(ghost)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(ghost.run_id, checkpoint(), rec),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- conflicts and retries


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(RunStatus.COMPLETED, id="completed"),
        pytest.param(RunStatus.FAILED, id="failed"),
        pytest.param(RunStatus.CANCELED, id="canceled"),
    ],
)
def test_run_terminal_in_other_status_is_terminal_conflict(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    store.record_run_terminal(run.run_id, status, terminal_record(run, status))
    rec = suspended_record(run)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(), rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_run_stopped_at_start_is_terminal_conflict(store: Backend, session_id: str) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    rec = suspended_record(run)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(), rec),
        RunTerminalConflictError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("event_key", ["suspend", "suspend-2"], ids=["same_key", "other_key"])
def test_stored_checkpoint_with_other_id_is_suspension_conflict(
    store: Backend, run: RunStart, session_id: str, event_key: str
) -> None:
    store.record_run_suspension(run.run_id, checkpoint("cp-1"), suspended_record(run, "cp-1"))
    rec = suspended_record(run, "cp-2", event_key=event_key)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint("cp-2"), rec),
        RunSuspensionConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_stored_checkpoint_with_other_bytes_is_suspension_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = suspended_record(run)
    store.record_run_suspension(run.run_id, checkpoint("cp-1", b"first"), rec)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint("cp-1", b"second"), rec),
        RunSuspensionConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_same_suspension_under_other_key_is_suspension_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    rec = suspended_record(run, event_key="suspend-2")

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(), rec),
        RunSuspensionConflictError,
        run.run_id,
        session_id=session_id,
    )


def test_same_key_and_checkpoint_other_record_content_is_event_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = suspended_record(run)
    store.record_run_suspension(run.run_id, checkpoint(), rec)
    payload = {"SuspensionID": "cp-1", "Version": "v1", "PendingCount": 2, "RequiredTools": None}
    changed = dataclasses.replace(rec, payload=dumps(payload))

    err = assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(), changed),
        EventConflictError,
        run.run_id,
        session_id=session_id,
    )
    assert (err.run_id, err.event_key) == (run.run_id, rec.event_key)


def test_exact_retry_returns_original_id_not_inserted(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = suspended_record(run)
    store.record_run_suspension(run.run_id, checkpoint(), rec)
    before = observe(store, run.run_id, session_id=session_id)
    time.sleep(0.01)

    result = store.record_run_suspension(run.run_id, checkpoint(), rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)
    assert observe(store, run.run_id, session_id=session_id) == before


def test_exact_retry_after_session_ended_reports_ended(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = suspended_record(run)
    store.record_run_suspension(run.run_id, checkpoint(), rec)
    store.end_session(session_id, at(50))

    result = store.record_run_suspension(run.run_id, checkpoint(), rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED)


# --------------------------------------------------------------------------- load_run_suspension


def test_load_suspension_of_running_run_is_suspension_not_found(
    store: Backend, run: RunStart
) -> None:
    with pytest.raises(RunSuspensionNotFoundError) as info:
        store.load_run_suspension(run.run_id)
    assert info.value.code == "run_suspension_not_found"


def test_load_suspension_of_completed_run_is_suspension_not_found(
    store: Backend, run: RunStart
) -> None:
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )

    with pytest.raises(RunSuspensionNotFoundError) as info:
        store.load_run_suspension(run.run_id)
    assert info.value.code == "run_suspension_not_found"


def test_load_suspension_of_unknown_run_is_run_not_found(store: Backend) -> None:
    with pytest.raises(RunNotFoundError) as info:
        store.load_run_suspension("run-unknown")
    assert info.value.code == "run_not_found"
