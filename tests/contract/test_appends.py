"""``append_run_record`` (CONTRACT.md 3.7) and the append check shared by all writes (2.3, 2.4)."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    Record,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStatus,
    SessionPurgedError,
    SessionStatus,
)
from tests.contract.builders import (
    T0,
    Backend,
    all_records,
    assert_rejected,
    at,
    cancellation_record,
    checkpoint,
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

#: The append tests also run on PostgreSQL with statement observers attached, as tracing
#: attaches them: an observed service must take the same append path and behave the same.
pytestmark = pytest.mark.parametrize(
    "store",
    [
        "sqlite",
        "postgres",
        "postgres-observed",
        "postgres-python",
        "http-sqlite",
        "http-postgres",
        "http-postgres-python",
    ],
    indirect=True,
)

# --------------------------------------------------------------------------- helpers


def finish(store: Backend, run: RunStart, status: RunStatus) -> None:
    """Move a running ``run`` to the terminal ``status`` through its lifecycle operation."""
    if status is RunStatus.SUSPENDED:
        store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    else:
        store.record_run_terminal(run.run_id, status, terminal_record(run, status))


def start_one_shot(store: Backend) -> RunStart:
    run = run_start()
    store.start_one_shot_run(run, started_record(run))
    return run


TERMINAL_STATUSES = [
    pytest.param(RunStatus.COMPLETED, id="completed"),
    pytest.param(RunStatus.FAILED, id="failed"),
    pytest.param(RunStatus.CANCELED, id="canceled"),
    pytest.param(RunStatus.SUSPENDED, id="suspended"),
]


@pytest.fixture
def session_id(store: Backend) -> str:
    return new_session(store).id


@pytest.fixture
def run(store: Backend, session_id: str) -> RunStart:
    """A running root run; its ``run_started`` record has ID "1"."""
    return start_root(store, session_id).run


# --------------------------------------------------------------------------- inserts


def test_append_inserts_record_with_next_id(store: Backend, run: RunStart) -> None:
    rec = record(run)

    result = store.append_run_record(rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


def test_append_does_not_change_run_meta(store: Backend, run: RunStart) -> None:
    before = store.load_run(run.run_id)
    time.sleep(0.01)

    store.append_run_record(record(run))

    assert store.load_run(run.run_id) == before


def test_input_record_id_is_ignored(store: Backend, run: RunStart) -> None:
    rec = dataclasses.replace(record(run), id="42")

    result = store.append_run_record(rec)

    assert result.id == "2"
    assert [r.id for r in all_records(store, run.run_id)] == ["1", "2"]


def test_record_ids_count_from_one_per_run_and_repeat_across_runs(
    store: Backend, session_id: str
) -> None:
    first = start_root(store, session_id).run
    second = start_root(store, session_id).run

    ids: dict[str, list[str]] = {first.run_id: [], second.run_id: []}
    for _ in range(3):
        for run in (first, second):
            ids[run.run_id].append(store.append_run_record(record(run)).id)

    assert ids == {first.run_id: ["2", "3", "4"], second.run_id: ["2", "3", "4"]}
    for run in (first, second):
        assert [r.id for r in all_records(store, run.run_id)] == ["1", "2", "3", "4"]


def test_sessionless_run_append_has_no_session_status(store: Backend) -> None:
    run = start_one_shot(store)

    result = store.append_run_record(record(run))

    assert result == AppendResult(id="2", inserted=True, session_status=None)


def test_running_run_may_append_after_end_session(
    store: Backend, run: RunStart, session_id: str
) -> None:
    store.end_session(session_id, at(1))
    rec = record(run)

    result = store.append_run_record(rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ENDED)
    assert all_records(store, run.run_id)[1:] == [dataclasses.replace(rec, id="2")]


# --------------------------------------------------------------------------- record validity

INVALID_RECORDS = [
    pytest.param({"event_key": ""}, id="empty_event_key"),
    pytest.param({"run_id": ""}, id="empty_run_id"),
    pytest.param({"agent_id": ""}, id="empty_agent_id"),
    pytest.param({"type": ""}, id="empty_type"),
    pytest.param({"payload": b""}, id="empty_payload"),
    pytest.param({"payload": b"not json"}, id="payload_not_json"),
    pytest.param({"payload": b"{} {}"}, id="payload_two_values"),
    pytest.param({"payload": b'{"note":"\xff"}'}, id="payload_not_utf8"),
    pytest.param({"timestamp": datetime(1, 1, 1, tzinfo=UTC)}, id="zero_timestamp"),
    pytest.param({"timestamp": datetime(2026, 11, 30, 1, 2, 3, 456000)}, id="naive_timestamp"),
    pytest.param({"timestamp": T0 + timedelta(microseconds=1)}, id="sub_millisecond_timestamp"),
]


@pytest.mark.parametrize("changes", INVALID_RECORDS)
def test_invalid_record_is_invalid_argument(
    store: Backend, run: RunStart, session_id: str, changes: dict[str, Any]
) -> None:
    rec = dataclasses.replace(record(run), **changes)

    assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


def test_record_validity_is_checked_before_run_existence(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)
    rec = dataclasses.replace(record(ghost), type="")

    assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        InvalidArgumentError,
        ghost.run_id,
        session_id=session_id,
    )


LIFECYCLE_TYPES = [
    "run_started",
    "child_run_linked",
    "runtime.cancellation_intent",
    "run_suspended",
    "run_completed",
]


def lifecycle_record(run: RunStart, type_: str) -> Record:
    """A valid record of the lifecycle ``type_`` on ``run`` under a fresh key."""
    if type_ == "run_started":
        rec = started_record(run)
    elif type_ == "child_run_linked":
        rec = link_record(run, run_start(session_id=run.session_id, parent_run_id=run.run_id))
    elif type_ == "runtime.cancellation_intent":
        rec = cancellation_record(run)
    elif type_ == "run_suspended":
        rec = suspended_record(run)
    else:
        rec = terminal_record(run, RunStatus.COMPLETED)
    assert rec.type == type_
    return dataclasses.replace(rec, event_key=f"appended-{type_}")


@pytest.mark.parametrize("type_", LIFECYCLE_TYPES)
def test_lifecycle_type_requires_lifecycle_operation(
    store: Backend, run: RunStart, session_id: str, type_: str
) -> None:
    rec = lifecycle_record(run, type_)

    assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- append check


def test_unknown_run_is_run_not_found(store: Backend, session_id: str) -> None:
    ghost = run_start(session_id=session_id)

    assert_rejected(
        store,
        lambda: store.append_run_record(record(ghost)),
        RunNotFoundError,
        ghost.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize(
    "owner",
    [
        pytest.param("agent", id="other_agent"),
        pytest.param("session", id="other_session"),
        pytest.param("no_session", id="missing_session"),
    ],
)
def test_record_owner_must_equal_run_owner(
    store: Backend, run: RunStart, session_id: str, owner: str
) -> None:
    if owner == "agent":
        rec = dataclasses.replace(record(run), agent_id="agent-other")
    elif owner == "session":
        rec = dataclasses.replace(record(run), session_id=new_session(store).id)
    else:
        rec = dataclasses.replace(record(run), session_id="")

    assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=session_id,
    )


def test_record_naming_a_session_on_sessionless_run_is_owner_mismatch(store: Backend) -> None:
    run = start_one_shot(store)
    other_session = new_session(store).id
    rec = dataclasses.replace(record(run), session_id=other_session)

    assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        RunRecordOwnerMismatchError,
        run.run_id,
        session_id=other_session,
    )


def test_append_to_run_of_purged_session_is_session_purged(
    store: Backend, run: RunStart, session_id: str
) -> None:
    finish(store, run, RunStatus.COMPLETED)
    store.end_session(session_id, at(50))
    store.purge_session(session_id)

    assert_rejected(
        store,
        lambda: store.append_run_record(record(run)),
        SessionPurgedError,
        run.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- retries


def test_exact_retry_returns_original_id_not_inserted(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = record(run)
    store.append_run_record(rec)
    before = observe(store, run.run_id, session_id=session_id)
    time.sleep(0.01)

    result = store.append_run_record(rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)
    assert observe(store, run.run_id, session_id=session_id) == before


def test_exact_retry_ignores_input_id(store: Backend, run: RunStart) -> None:
    rec = record(run)
    store.append_run_record(rec)

    result = store.append_run_record(dataclasses.replace(rec, id="7"))

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)


@pytest.mark.parametrize("status", TERMINAL_STATUSES)
def test_exact_retry_after_run_stopped_returns_original_id(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    rec = record(run)
    store.append_run_record(rec)
    finish(store, run, status)
    before = observe(store, run.run_id, session_id=session_id)

    result = store.append_run_record(rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ACTIVE)
    assert observe(store, run.run_id, session_id=session_id) == before


def test_exact_retry_reports_current_session_status(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = record(run)
    store.append_run_record(rec)
    store.end_session(session_id, at(1))

    result = store.append_run_record(rec)

    assert result == AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED)


CHANGED_CONTENT = [
    pytest.param({"payload": b'{"note":"other"}'}, id="payload"),
    pytest.param({"payload": b'{"note": "thinking"}'}, id="payload_bytes_same_json"),
    pytest.param({"type": "usage"}, id="type"),
    pytest.param({"timestamp": at(11)}, id="timestamp"),
    pytest.param({"turn_id": "turn-2"}, id="turn_id"),
]


@pytest.mark.parametrize("changes", CHANGED_CONTENT)
def test_same_key_other_content_is_event_conflict(
    store: Backend, run: RunStart, session_id: str, changes: dict[str, Any]
) -> None:
    rec = record(run, turn_id="turn-1")
    store.append_run_record(rec)
    changed = dataclasses.replace(rec, **changes)

    err = assert_rejected(
        store,
        lambda: store.append_run_record(changed),
        EventConflictError,
        run.run_id,
        session_id=session_id,
    )
    assert err.run_id == run.run_id
    assert err.event_key == rec.event_key


def test_ordinary_record_reusing_a_lifecycle_key_is_event_conflict(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = record(run, event_key=started_record(run).event_key)

    err = assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        EventConflictError,
        run.run_id,
        session_id=session_id,
    )
    assert err.run_id == run.run_id
    assert err.event_key == rec.event_key


def test_event_conflict_is_checked_before_run_activity(
    store: Backend, run: RunStart, session_id: str
) -> None:
    rec = record(run)
    store.append_run_record(rec)
    finish(store, run, RunStatus.COMPLETED)
    changed = dataclasses.replace(rec, payload=b'{"note":"other"}')

    err = assert_rejected(
        store,
        lambda: store.append_run_record(changed),
        EventConflictError,
        run.run_id,
        session_id=session_id,
    )
    assert err.run_id == run.run_id
    assert err.event_key == rec.event_key


# --------------------------------------------------------------------------- terminal runs


@pytest.mark.parametrize("status", TERMINAL_STATUSES)
def test_append_to_terminal_run_is_run_not_active(
    store: Backend, run: RunStart, session_id: str, status: RunStatus
) -> None:
    finish(store, run, status)

    assert_rejected(
        store,
        lambda: store.append_run_record(record(run)),
        RunNotActiveError,
        run.run_id,
        session_id=session_id,
    )


def test_append_to_run_stopped_at_start_is_run_not_active(store: Backend, session_id: str) -> None:
    store.end_session(session_id, at(1))
    run = start_root(store, session_id).run
    assert store.load_run(run.run_id).status == RunStatus.CANCELED

    assert_rejected(
        store,
        lambda: store.append_run_record(record(run)),
        RunNotActiveError,
        run.run_id,
        session_id=session_id,
    )
