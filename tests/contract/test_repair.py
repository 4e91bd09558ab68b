"""``repair_run_suspension`` / ``repair_run_terminal`` (CONTRACT.md 3.11)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from runtime_store_client import (
    AppendResult,
    Checkpoint,
    InvalidArgumentError,
    Record,
    RepairOutcome,
    RepairResult,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStatus,
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

# --------------------------------------------------------------------------- helpers


def assert_nothing_written(
    store: Backend, call: Callable[[], RepairResult], run: RunStart
) -> RepairResult:
    """Run a repair that must not write, and return its result."""
    before = observe(store, run.run_id, session_id=run.session_id)
    result = call()
    assert observe(store, run.run_id, session_id=run.session_id) == before
    return result


def different(status: RunStatus) -> RepairResult:
    return RepairResult(outcome=RepairOutcome.DIFFERENT_TERMINAL, status=status, record=None)


@pytest.fixture
def session_id(store: Backend) -> str:
    return new_session(store).id


@pytest.fixture
def run(store: Backend, session_id: str) -> RunStart:
    """A running root run; its ``run_started`` record has ID "1"."""
    return start_root(store, session_id).run


STATUSES = [
    pytest.param(RunStatus.COMPLETED, id="completed"),
    pytest.param(RunStatus.FAILED, id="failed"),
    pytest.param(RunStatus.CANCELED, id="canceled"),
]

STORED = AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
ALREADY = AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)

# --------------------------------------------------------------------------- repair_run_suspension


def test_repair_suspension_of_running_run_stores_it(store: Backend, run: RunStart) -> None:
    rec = suspended_record(run)

    result = store.repair_run_suspension(run.run_id, checkpoint(), rec)

    assert result == RepairResult(
        outcome=RepairOutcome.STORED, status=RunStatus.SUSPENDED, record=STORED
    )
    assert store.load_run(run.run_id).status == RunStatus.SUSPENDED
    assert store.load_run_suspension(run.run_id) == checkpoint()
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


@pytest.mark.parametrize("first_write", ["record", "repair"])
def test_repair_suspension_already_stored_returns_original_id(
    store: Backend, run: RunStart, first_write: str
) -> None:
    rec = suspended_record(run)
    if first_write == "record":
        store.record_run_suspension(run.run_id, checkpoint(), rec)
    else:
        store.repair_run_suspension(run.run_id, checkpoint(), rec)

    result = assert_nothing_written(
        store, lambda: store.repair_run_suspension(run.run_id, checkpoint(), rec), run
    )

    assert result == RepairResult(
        outcome=RepairOutcome.ALREADY_STORED, status=RunStatus.SUSPENDED, record=ALREADY
    )


@pytest.mark.parametrize("status", STATUSES)
def test_repair_suspension_of_run_in_other_terminal_is_different_terminal(
    store: Backend, run: RunStart, status: RunStatus
) -> None:
    store.record_run_terminal(run.run_id, status, terminal_record(run, status))

    result = assert_nothing_written(
        store,
        lambda: store.repair_run_suspension(run.run_id, checkpoint(), suspended_record(run)),
        run,
    )

    assert result == different(status)


def other_key(run: RunStart) -> tuple[Checkpoint, Record]:
    return checkpoint(), suspended_record(run, event_key="suspend-2")


def other_checkpoint_id(run: RunStart) -> tuple[Checkpoint, Record]:
    return checkpoint("cp-2"), suspended_record(run, "cp-2")


def other_checkpoint_bytes(run: RunStart) -> tuple[Checkpoint, Record]:
    return checkpoint("cp-1", b"other bytes"), suspended_record(run)


def other_record_content(run: RunStart) -> tuple[Checkpoint, Record]:
    return checkpoint(), dataclasses.replace(suspended_record(run), timestamp=at(31))


@pytest.mark.parametrize(
    "variant", [other_key, other_checkpoint_id, other_checkpoint_bytes, other_record_content]
)
def test_repair_suspension_differing_from_stored_one_is_different_terminal(
    store: Backend, run: RunStart, variant: Callable[[RunStart], tuple[Checkpoint, Record]]
) -> None:
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    cp, rec = variant(run)

    result = assert_nothing_written(
        store, lambda: store.repair_run_suspension(run.run_id, cp, rec), run
    )

    assert result == different(RunStatus.SUSPENDED)


def test_repair_suspension_of_run_stopped_at_start_is_different_terminal(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run

    result = assert_nothing_written(
        store,
        lambda: store.repair_run_suspension(run.run_id, checkpoint(), suspended_record(run)),
        run,
    )

    assert result == different(RunStatus.CANCELED)


INVALID_SUSPENSIONS = [
    pytest.param(
        lambda run: (checkpoint("cp-1"), suspended_record(run, "cp-other")),
        id="suspension_id_differs",
    ),
    pytest.param(lambda run: (checkpoint("cp-1", b""), suspended_record(run)), id="empty_data"),
    pytest.param(
        lambda run: (checkpoint(), dataclasses.replace(suspended_record(run), type="planner_note")),
        id="wrong_type",
    ),
    pytest.param(
        lambda run: (checkpoint(), dataclasses.replace(suspended_record(run), payload=b"null")),
        id="payload_null",
    ),
]


@pytest.mark.parametrize("make", INVALID_SUSPENSIONS)
def test_repair_suspension_validates_like_record_run_suspension(
    store: Backend,
    run: RunStart,
    session_id: str,
    make: Callable[[RunStart], tuple[Checkpoint, Record]],
) -> None:
    cp, rec = make(run)

    assert_rejected(
        store,
        lambda: store.repair_run_suspension(run.run_id, cp, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("status", STATUSES)
def test_repair_suspension_validates_even_when_run_is_terminal(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    store.record_run_terminal(run.run_id, status, terminal_record(run, status))
    rec = suspended_record(run, "cp-other")

    assert_rejected(
        store,
        lambda: store.repair_run_suspension(run.run_id, checkpoint("cp-1"), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_repair_suspension_of_unknown_run_is_run_not_found(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)
    rec = suspended_record(ghost)

    assert_rejected(
        store,
        lambda: store.repair_run_suspension(ghost.run_id, checkpoint(), rec),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )


def test_repair_suspension_owner_mismatch(store: Backend, run: RunStart, session_id: str) -> None:
    rec = dataclasses.replace(suspended_record(run), agent_id="agent-other")

    assert_rejected(
        store,
        lambda: store.repair_run_suspension(run.run_id, checkpoint(), rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- repair_run_terminal


@pytest.mark.parametrize("status", STATUSES)
def test_repair_terminal_of_running_run_stores_it(
    store: Backend, run: RunStart, status: RunStatus
) -> None:
    rec = terminal_record(run, status)

    result = store.repair_run_terminal(run.run_id, status, rec)

    assert result == RepairResult(outcome=RepairOutcome.STORED, status=status, record=STORED)
    assert store.load_run(run.run_id).status == status
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


@pytest.mark.parametrize("status", STATUSES)
def test_repair_terminal_already_stored_returns_original_id(
    store: Backend, run: RunStart, status: RunStatus
) -> None:
    rec = terminal_record(run, status)
    store.record_run_terminal(run.run_id, status, rec)

    result = assert_nothing_written(
        store, lambda: store.repair_run_terminal(run.run_id, status, rec), run
    )

    assert result == RepairResult(
        outcome=RepairOutcome.ALREADY_STORED, status=status, record=ALREADY
    )


def test_repair_terminal_after_explicit_cancellation_stores_it(
    store: Backend, run: RunStart
) -> None:
    store.record_run_cancellation(run.run_id, "user_requested", cancellation_record(run))
    rec = terminal_record(run, RunStatus.CANCELED, reason="user_requested")

    result = store.repair_run_terminal(run.run_id, RunStatus.CANCELED, rec)

    assert result == RepairResult(
        outcome=RepairOutcome.STORED,
        status=RunStatus.CANCELED,
        record=AppendResult(id="3", inserted=True, session_status=SessionStatus.ACTIVE),
    )


def test_repair_terminal_with_start_canceled_record_of_stopped_start_is_already_stored(
    store: Backend, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run

    result = assert_nothing_written(
        store,
        lambda: store.repair_run_terminal(run.run_id, RunStatus.CANCELED, canceled_record(run)),
        run,
    )

    assert result == RepairResult(
        outcome=RepairOutcome.ALREADY_STORED,
        status=RunStatus.CANCELED,
        record=AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED),
    )


@pytest.mark.parametrize(
    ("stored", "requested"),
    [
        pytest.param(RunStatus.COMPLETED, RunStatus.FAILED, id="completed_vs_failed"),
        pytest.param(RunStatus.FAILED, RunStatus.CANCELED, id="failed_vs_canceled"),
        pytest.param(RunStatus.CANCELED, RunStatus.COMPLETED, id="canceled_vs_completed"),
    ],
)
def test_repair_terminal_of_run_in_other_status_is_different_terminal(
    store: Backend, run: RunStart, stored: RunStatus, requested: RunStatus
) -> None:
    store.record_run_terminal(run.run_id, stored, terminal_record(run, stored))
    rec = terminal_record(run, requested)

    result = assert_nothing_written(
        store, lambda: store.repair_run_terminal(run.run_id, requested, rec), run
    )

    assert result == different(stored)


def test_repair_terminal_of_suspended_run_is_different_terminal(
    store: Backend, run: RunStart
) -> None:
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    rec = terminal_record(run, RunStatus.COMPLETED)

    result = assert_nothing_written(
        store, lambda: store.repair_run_terminal(run.run_id, RunStatus.COMPLETED, rec), run
    )

    assert result == different(RunStatus.SUSPENDED)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"event_key": "terminal-2"}, id="other_key"),
        pytest.param({"timestamp": at(41)}, id="other_timestamp"),
        pytest.param({"turn_id": "turn-9"}, id="other_turn"),
    ],
)
def test_repair_terminal_differing_from_stored_record_is_different_terminal(
    store: Backend, run: RunStart, changes: dict[str, Any]
) -> None:
    rec = terminal_record(run, RunStatus.COMPLETED)
    store.record_run_terminal(run.run_id, RunStatus.COMPLETED, rec)
    changed = dataclasses.replace(rec, **changes)

    result = assert_nothing_written(
        store, lambda: store.repair_run_terminal(run.run_id, RunStatus.COMPLETED, changed), run
    )

    assert result == different(RunStatus.COMPLETED)


INVALID_TERMINALS = [
    pytest.param(
        RunStatus.COMPLETED,
        dumps(completed_payload(RunStatus.FAILED)),
        id="payload_status_differs",
    ),
    pytest.param(
        RunStatus.COMPLETED,
        dumps(completed_payload(RunStatus.COMPLETED, labels={"site": "one"})),
        id="labels_differ",
    ),
    pytest.param(
        RunStatus.CANCELED,
        dumps(completed_payload(RunStatus.CANCELED, reason="user_requested")),
        id="canceled_reason_without_stored_reason",
    ),
    pytest.param(RunStatus.FAILED, b'{"status":"failed","phase":"failed"}', id="failure_missing"),
    pytest.param(
        RunStatus.COMPLETED, b'{"status":"success","phase":"completed","x":1}', id="unknown_key"
    ),
]


@pytest.mark.parametrize(("status", "payload"), INVALID_TERMINALS)
def test_repair_terminal_validates_like_record_run_terminal(
    store: Backend, run: RunStart, session_id: str, status: RunStatus, payload: bytes
) -> None:
    rec = dataclasses.replace(terminal_record(run, RunStatus.COMPLETED), payload=payload)

    assert_rejected(
        store,
        lambda: store.repair_run_terminal(run.run_id, status, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_repair_terminal_validates_even_when_run_is_terminal(
    store: Backend, run: RunStart, session_id: str
) -> None:
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    rec = dataclasses.replace(
        terminal_record(run, RunStatus.COMPLETED),
        payload=dumps(completed_payload(RunStatus.FAILED)),
    )

    assert_rejected(
        store,
        lambda: store.repair_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_repair_terminal_with_running_status_is_invalid_argument(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = terminal_record(run, RunStatus.COMPLETED)

    assert_rejected(
        store,
        lambda: store.repair_run_terminal(run.run_id, RunStatus.RUNNING, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_repair_terminal_of_unknown_run_is_run_not_found(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)
    rec = terminal_record(ghost, RunStatus.COMPLETED)

    assert_rejected(
        store,
        lambda: store.repair_run_terminal(ghost.run_id, RunStatus.COMPLETED, rec),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )


def test_repair_terminal_owner_mismatch(store: Backend, run: RunStart, session_id: str) -> None:
    rec = dataclasses.replace(terminal_record(run, RunStatus.COMPLETED), session_id="")

    assert_rejected(
        store,
        lambda: store.repair_run_terminal(run.run_id, RunStatus.COMPLETED, rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=session_id,
    )
