"""Contract rules of ``start_root_run`` (CONTRACT.md 3.3, with 1.4, 1.8, 2 and 5)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import cast

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    Record,
    RootRunStartResult,
    RunConflictError,
    RunMeta,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    SessionNotFoundError,
    SessionPurgedError,
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
    completed_payload,
    dumps,
    expect_rejected,
    new_session,
    observe,
    run_start,
    start_root,
    started_record,
    terminal_record,
    uid,
)

SITE = {"site": "one"}


def root_in(session_id: str, **changes: object) -> RunStart:
    """A root run start in ``session_id`` with labels, changed by ``changes``."""
    return replace(run_start(session_id=session_id, labels=SITE), **changes)  # type: ignore[arg-type]


def expect_invalid_start(
    store: Backend,
    run: RunStart,
    started: Record,
    canceled: Record,
    *,
    error: type[StoreError] = InvalidArgumentError,
    code: str = "invalid_argument",
) -> None:
    """A start rejected with ``code`` that leaves the run and its session untouched."""
    expect_rejected(
        store,
        lambda: store.start_root_run(run, started, canceled),
        error,
        code,
        run.run_id,
        session_id=run.session_id,
    )


def end(store: Backend, session_id: str) -> None:
    store.end_session(session_id, at(1))


# --- validation: run start rules (1.4) ---------------------------------------------------


def test_start_root_without_session_id_is_invalid_argument(store: Backend) -> None:
    run = run_start(session_id="", labels=SITE)
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


def test_start_root_without_run_id_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id, run_id="")
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


def test_start_root_without_agent_id_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id, agent_id="")
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


def test_start_root_with_parent_run_id_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    parent = start_root(store, session.id)
    run = root_in(session.id, parent_run_id=parent.run.run_id)
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


def test_start_root_predecessor_equal_to_run_id_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    run = replace(run, predecessor_run_id=run.run_id)
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


def test_start_root_without_started_at_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    missing = replace(run, started_at=cast(datetime, None))
    expect_invalid_start(store, missing, started_record(run), canceled_record(run))


def test_start_root_naive_started_at_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id, started_at=T0.replace(tzinfo=None))
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


def test_start_root_sub_millisecond_started_at_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id, started_at=T0 + timedelta(microseconds=1))
    expect_invalid_start(store, run, started_record(run), canceled_record(run))


# --- validation: the run_started record ---------------------------------------------------


@pytest.mark.parametrize(
    "field",
    ["event_key", "run_id", "agent_id", "type", "payload"],
)
def test_start_root_started_record_missing_required_field_is_invalid_argument(
    store: Backend, field: str
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    empty: object = b"" if field == "payload" else ""
    started = replace(started_record(run), **{field: empty})  # type: ignore[arg-type]
    expect_invalid_start(store, run, started, canceled_record(run))


def test_start_root_started_record_of_another_type_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = replace(started_record(run), type="planner_note")
    expect_invalid_start(store, run, started, canceled_record(run))


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"not json", id="not-json"),
        pytest.param(b'{"ParentRunID":""', id="truncated-json"),
        pytest.param(b'{"ParentRunID":"","Extra":1}', id="unknown-key"),
        pytest.param(b'{"parentRunID":""}', id="key-case"),
        pytest.param(b'{"ParentRunID":1}', id="wrong-type"),
        pytest.param(b'{"ParentRunID":null}', id="null-string"),
        pytest.param(b'{"Labels":{"site":1}}', id="label-not-string"),
        pytest.param(b'{"Labels":["site"]}', id="labels-not-object"),
        pytest.param(b'{"ParentRunID":"","ParentRunID":""}', id="duplicate-key"),
        pytest.param(b"{} {}", id="second-value"),
        pytest.param(b"{}x", id="trailing-bytes"),
        pytest.param(b"null", id="top-level-null"),
        pytest.param(b"[]", id="top-level-array"),
        pytest.param(b'{"Labels":{"site":"\xff"}}', id="lone-continuation-byte"),
        pytest.param(b'{"Labels":{"site":"\xe2\x82"}}', id="truncated-utf8"),
        pytest.param(b'{"Labels":{"site":"\xc0\xaf"}}', id="overlong-utf8"),
        pytest.param(b'{"Labels":{"site":"\xed\xa0\x80"}}', id="encoded-surrogate"),
        pytest.param(b'{"Labels":{"site":"\xf4\x90\x80\x80"}}', id="above-u10ffff"),
    ],
)
def test_start_root_started_payload_not_strict_is_invalid_argument(
    store: Backend, payload: bytes
) -> None:
    session = new_session(store)
    run = run_start(session_id=session.id)
    started = replace(started_record(run), payload=payload)
    expect_invalid_start(store, run, started, canceled_record(run))


@pytest.mark.parametrize(
    ("field", "value"),
    [("run_id", "run-other"), ("agent_id", "agent-other"), ("session_id", "sess-other")],
)
def test_start_root_started_record_of_another_owner_is_run_record_owner_mismatch(
    store: Backend, field: str, value: str
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = replace(started_record(run), **{field: value})  # type: ignore[arg-type]
    expect_invalid_start(
        store,
        run,
        started,
        canceled_record(run),
        error=RunRecordOwnerMismatchError,
        code="run_record_owner_mismatch",
    )


def test_start_root_started_timestamp_other_than_started_at_is_invalid_argument(
    store: Backend,
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = replace(started_record(run), timestamp=at(1))
    expect_invalid_start(store, run, started, canceled_record(run))


def test_start_root_started_payload_with_parent_run_id_is_invalid_argument(
    store: Backend,
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    payload = dumps({"ParentRunID": "run-parent", "PredecessorRunID": "", "Labels": SITE})
    started = replace(started_record(run), payload=payload)
    expect_invalid_start(store, run, started, canceled_record(run))


def test_start_root_started_payload_predecessor_other_than_start_is_invalid_argument(
    store: Backend,
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    payload = dumps({"ParentRunID": "", "PredecessorRunID": "run-41", "Labels": SITE})
    started = replace(started_record(run), payload=payload)
    expect_invalid_start(store, run, started, canceled_record(run))


@pytest.mark.parametrize(
    "labels",
    [None, {}, {"site": "two"}, {"site": "one", "extra": "x"}],
    ids=["null", "empty", "other-value", "extra-label"],
)
def test_start_root_started_payload_labels_other_than_start_is_invalid_argument(
    store: Backend, labels: dict[str, str] | None
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    payload = dumps({"ParentRunID": "", "PredecessorRunID": "", "Labels": labels})
    started = replace(started_record(run), payload=payload)
    expect_invalid_start(store, run, started, canceled_record(run))


def test_start_root_invalid_record_is_invalid_argument_before_owner_check(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = replace(started_record(run), agent_id="agent-other", payload=b"null")
    expect_invalid_start(store, run, started, canceled_record(run))


# --- validation: the canceled record (checked even when the session is active) ---------


@pytest.mark.parametrize(
    "field",
    ["event_key", "run_id", "agent_id", "type", "payload"],
)
def test_start_root_canceled_record_missing_required_field_is_invalid_argument(
    store: Backend, field: str
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    empty: object = b"" if field == "payload" else ""
    canceled = replace(canceled_record(run), **{field: empty})  # type: ignore[arg-type]
    expect_invalid_start(store, run, started_record(run), canceled)


def test_start_root_canceled_record_of_another_type_is_invalid_argument(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    canceled = replace(canceled_record(run), type="planner_note")
    expect_invalid_start(store, run, started_record(run), canceled)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"null", id="top-level-null"),
        pytest.param(
            b'{"status":"canceled","phase":"canceled",'
            b'"cancellation":{"reason":"session_ended"},"labels":{"site":"one"},"extra":1}',
            id="unknown-key",
        ),
        pytest.param(
            b'{"status":"canceled","phase":"canceled",'
            b'"cancellation":{"reason":"session_ended","extra":1},"labels":{"site":"one"}}',
            id="unknown-nested-key",
        ),
        pytest.param(
            b'{"Status":"canceled","phase":"canceled",'
            b'"cancellation":{"reason":"session_ended"},"labels":{"site":"one"}}',
            id="key-case",
        ),
        pytest.param(
            b'{"status":"canceled","phase":"canceled",'
            b'"cancellation":{"reason":"session_ended"},"labels":{"site":"one"}} {}',
            id="second-value",
        ),
        pytest.param(
            b'{"status":"canceled","status":"canceled","phase":"canceled",'
            b'"cancellation":{"reason":"session_ended"},"labels":{"site":"one"}}',
            id="duplicate-key",
        ),
        pytest.param(
            b'{"status":"canceled","phase":"canceled",'
            b'"cancellation":"session_ended","labels":{"site":"one"}}',
            id="wrong-type",
        ),
    ],
)
def test_start_root_canceled_payload_not_strict_is_invalid_argument(
    store: Backend, payload: bytes
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    canceled = replace(canceled_record(run), payload=payload)
    expect_invalid_start(store, run, started_record(run), canceled)


@pytest.mark.parametrize(
    ("field", "value"),
    [("run_id", "run-other"), ("agent_id", "agent-other"), ("session_id", "sess-other")],
)
def test_start_root_canceled_record_of_another_owner_is_run_record_owner_mismatch(
    store: Backend, field: str, value: str
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    canceled = replace(canceled_record(run), **{field: value})  # type: ignore[arg-type]
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled,
        error=RunRecordOwnerMismatchError,
        code="run_record_owner_mismatch",
    )


def test_start_root_canceled_timestamp_other_than_started_at_is_invalid_argument(
    store: Backend,
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    canceled = replace(canceled_record(run), timestamp=at(1))
    expect_invalid_start(store, run, started_record(run), canceled)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param({"status": "success", "phase": "completed", "labels": SITE}, id="completed"),
        pytest.param(
            {
                "status": "failed",
                "phase": "failed",
                "failure": {"message": "boom", "kind": "crash"},
                "labels": SITE,
            },
            id="failed",
        ),
        pytest.param(
            {
                "status": "canceled",
                "phase": "completed",
                "cancellation": {"reason": "session_ended"},
                "labels": SITE,
            },
            id="phase-not-canceled",
        ),
        pytest.param(
            {
                "status": "success",
                "phase": "canceled",
                "cancellation": {"reason": "session_ended"},
                "labels": SITE,
            },
            id="status-not-canceled",
        ),
        pytest.param(
            {"status": "canceled", "phase": "canceled", "labels": SITE},
            id="no-cancellation",
        ),
        pytest.param(
            {
                "status": "canceled",
                "phase": "canceled",
                "cancellation": {"reason": "session_ended"},
                "failure": {"message": "boom", "kind": "crash"},
                "labels": SITE,
            },
            id="failure-on-canceled",
        ),
    ],
)
def test_start_root_canceled_payload_not_canceled_is_invalid_argument(
    store: Backend, payload: dict[str, object]
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    canceled = replace(canceled_record(run), payload=dumps(payload))
    expect_invalid_start(store, run, started_record(run), canceled)


@pytest.mark.parametrize("reason", ["user_requested", "engine_canceled", ""])
def test_start_root_canceled_reason_other_than_session_ended_is_invalid_argument(
    store: Backend, reason: str
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    payload = completed_payload(RunStatus.CANCELED, labels=SITE)
    payload["cancellation"] = {"reason": reason}
    canceled = replace(canceled_record(run), payload=dumps(payload))
    expect_invalid_start(store, run, started_record(run), canceled)


@pytest.mark.parametrize(
    "labels",
    [None, {"site": "two"}, {"site": "one", "extra": "x"}],
    ids=["omitted", "other-value", "extra-label"],
)
def test_start_root_canceled_labels_other_than_start_is_invalid_argument(
    store: Backend, labels: dict[str, str] | None
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    payload = completed_payload(RunStatus.CANCELED, reason="session_ended", labels=labels)
    canceled = replace(canceled_record(run), payload=dumps(payload))
    expect_invalid_start(store, run, started_record(run), canceled)


def test_start_root_started_and_canceled_with_equal_keys_is_invalid_argument(
    store: Backend,
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = started_record(run, event_key="same")
    canceled = canceled_record(run, event_key="same")
    expect_invalid_start(store, run, started, canceled)


def test_start_root_validation_comes_before_session_lookup(store: Backend) -> None:
    run = root_in("sess-unknown")
    canceled = replace(canceled_record(run), type="planner_note")
    expect_invalid_start(store, run, started_record(run), canceled)


# --- valid payload forms -----------------------------------------------------------------


def test_start_root_started_payload_missing_keys_take_zero_values(store: Backend) -> None:
    session = new_session(store)
    run = run_start(session_id=session.id)
    started = replace(started_record(run), payload=b"{}")
    result = store.start_root_run(run, started, canceled_record(run))
    assert result.outcome is RunStartOutcome.PROCEED
    assert all_records(store, run.run_id) == [replace(started, id="1")]


@pytest.mark.parametrize(
    "payload",
    [
        b'{"ParentRunID":"","PredecessorRunID":"","Labels":null}',
        b'{"ParentRunID":"","PredecessorRunID":"","Labels":{}}',
        b'{"ParentRunID":"","PredecessorRunID":""}',
    ],
    ids=["null", "empty", "omitted"],
)
def test_start_root_absent_null_and_empty_labels_are_equal(store: Backend, payload: bytes) -> None:
    session = new_session(store)
    run = run_start(session_id=session.id, labels={})
    started = replace(started_record(run), payload=payload)
    store.start_root_run(run, started, canceled_record(run))
    assert store.load_run(run.run_id).labels == {}
    assert all_records(store, run.run_id) == [replace(started, id="1")]


@pytest.mark.parametrize(
    ("label", "escaped"),
    [("café", b"caf\\u00e9"), ("e\u0301", b"e\\u0301"), ("a\x00b", b"a\\u0000b")],
    ids=["escaped-letter", "combining-sequence", "escaped-nul"],
)
def test_start_root_escaped_payload_text_is_valid_and_stored_byte_for_byte(
    store: Backend, label: str, escaped: bytes
) -> None:
    session = new_session(store)
    run = run_start(session_id=session.id, labels={"site": label})
    payload = b'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"' + escaped + b'"}}'
    started = replace(started_record(run), payload=payload)
    store.start_root_run(run, started, canceled_record(run))
    assert store.load_run(run.run_id).labels == {"site": label}
    assert all_records(store, run.run_id)[0].payload == payload


# --- proceed and stop -------------------------------------------------------------------


def test_start_root_in_active_session_proceeds_and_runs(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    result = store.start_root_run(run, started_record(run), canceled_record(run))
    assert result == RootRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        started=AppendResult(id="1", inserted=True, session_status=SessionStatus.ACTIVE),
        canceled=None,
    )


def test_start_root_proceed_stores_run_meta(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    store.start_root_run(run, started_record(run), canceled_record(run))
    meta = store.load_run(run.run_id)
    assert meta == RunMeta(
        run_id=run.run_id,
        agent_id="agent-1",
        session_id=session.id,
        parent_run_id="",
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=T0,
        updated_at=meta.updated_at,
        labels=SITE,
        cancellation_reason="",
    )
    assert meta.updated_at.tzinfo is not None


def test_start_root_proceed_writes_only_run_started(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = started_record(run)
    store.start_root_run(run, started, canceled_record(run))
    assert all_records(store, run.run_id) == [replace(started, id="1")]
    assert all_session_records(store, session.id) == [replace(started, id="1")]


def test_start_root_record_ids_are_per_run(store: Backend) -> None:
    session = new_session(store)
    start_root(store, session.id)
    second = start_root(store, session.id)
    assert second.result.started.id == "1"


def test_start_root_in_ended_session_stops_with_canceled_run(store: Backend) -> None:
    session = new_session(store)
    end(store, session.id)
    run = root_in(session.id)
    result = store.start_root_run(run, started_record(run), canceled_record(run))
    assert result == RootRunStartResult(
        outcome=RunStartOutcome.STOP,
        run_status=RunStatus.CANCELED,
        started=AppendResult(id="1", inserted=True, session_status=SessionStatus.ENDED),
        canceled=AppendResult(id="2", inserted=True, session_status=SessionStatus.ENDED),
    )


def test_start_root_stop_stores_session_ended_cancellation(store: Backend) -> None:
    session = new_session(store)
    end(store, session.id)
    run = root_in(session.id)
    store.start_root_run(run, started_record(run), canceled_record(run))
    meta = store.load_run(run.run_id)
    assert meta == RunMeta(
        run_id=run.run_id,
        agent_id="agent-1",
        session_id=session.id,
        parent_run_id="",
        status=RunStatus.CANCELED,
        start_outcome=RunStartOutcome.STOP,
        started_at=T0,
        updated_at=meta.updated_at,
        labels=SITE,
        cancellation_reason="session_ended",
    )


def test_start_root_stop_writes_run_started_then_run_completed(store: Backend) -> None:
    session = new_session(store)
    end(store, session.id)
    run = root_in(session.id)
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    expected = [replace(started, id="1"), replace(canceled, id="2")]
    assert all_records(store, run.run_id) == expected
    assert all_session_records(store, session.id) == expected


# --- exact retries ------------------------------------------------------------------------


def test_start_root_exact_retry_returns_original_ids_and_outcome(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    before = observe(store, run.run_id, session_id=session.id)
    retry = store.start_root_run(run, started, canceled)
    assert retry == RootRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        started=AppendResult(id="1", inserted=False, session_status=SessionStatus.ACTIVE),
        canceled=None,
    )
    assert observe(store, run.run_id, session_id=session.id) == before


def test_start_root_exact_retry_keeps_updated_at(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    updated_at = store.load_run(run.run_id).updated_at
    store.start_root_run(run, started, canceled)
    assert store.load_run(run.run_id).updated_at == updated_at


def test_start_root_exact_retry_of_stop_returns_original_ids_and_outcome(store: Backend) -> None:
    session = new_session(store)
    end(store, session.id)
    run = root_in(session.id)
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    before = observe(store, run.run_id, session_id=session.id)
    retry = store.start_root_run(run, started, canceled)
    assert retry == RootRunStartResult(
        outcome=RunStartOutcome.STOP,
        run_status=RunStatus.CANCELED,
        started=AppendResult(id="1", inserted=False, session_status=SessionStatus.ENDED),
        canceled=AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED),
    )
    assert observe(store, run.run_id, session_id=session.id) == before


def test_start_root_exact_retry_after_run_finished_returns_proceed_and_current_status(
    store: Backend,
) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    before = observe(store, run.run_id, session_id=session.id)
    retry = store.start_root_run(run, started, canceled)
    assert retry == RootRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.COMPLETED,
        started=AppendResult(id="1", inserted=False, session_status=SessionStatus.ACTIVE),
        canceled=None,
    )
    assert observe(store, run.run_id, session_id=session.id) == before


def test_start_root_exact_retry_after_session_ended_keeps_proceed(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    end(store, session.id)
    before = observe(store, run.run_id, session_id=session.id)
    retry = store.start_root_run(run, started, canceled)
    assert retry == RootRunStartResult(
        outcome=RunStartOutcome.PROCEED,
        run_status=RunStatus.RUNNING,
        started=AppendResult(id="1", inserted=False, session_status=SessionStatus.ENDED),
        canceled=None,
    )
    assert observe(store, run.run_id, session_id=session.id) == before


def test_start_root_retry_of_proceed_ignores_canceled_key(store: Backend) -> None:
    session = new_session(store)
    run = root_in(session.id)
    started = started_record(run)
    store.start_root_run(run, started, canceled_record(run))
    before = observe(store, run.run_id, session_id=session.id)
    retry = store.start_root_run(run, started, canceled_record(run, event_key="other-canceled"))
    assert retry.outcome is RunStartOutcome.PROCEED
    assert retry.started == AppendResult(
        id="1", inserted=False, session_status=SessionStatus.ACTIVE
    )
    assert observe(store, run.run_id, session_id=session.id) == before


def test_start_root_retry_with_equal_labels_spelled_differently_is_exact(store: Backend) -> None:
    session = new_session(store)
    run = run_start(session_id=session.id, labels={})
    started, canceled = started_record(run), canceled_record(run)
    store.start_root_run(run, started, canceled)
    retry = store.start_root_run(replace(run, labels={}), started, canceled)
    assert retry.started == AppendResult(
        id="1", inserted=False, session_status=SessionStatus.ACTIVE
    )


# --- changed retries --------------------------------------------------------------------


def _started_root(store: Backend, *, stop: bool = False) -> RunStart:
    session = new_session(store)
    if stop:
        end(store, session.id)
    run = root_in(session.id)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"agent_id": "agent-2"}, id="agent"),
        pytest.param({"labels": {"site": "two"}}, id="labels"),
        pytest.param({"labels": {}}, id="labels-removed"),
        pytest.param({"started_at": at(1)}, id="started-at"),
    ],
)
def test_start_root_changed_retry_is_run_conflict(
    store: Backend, change: dict[str, object]
) -> None:
    original = _started_root(store)
    run = replace(original, **change)  # type: ignore[arg-type]
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled_record(run),
        error=RunConflictError,
        code="run_conflict",
    )


def test_start_root_retry_with_other_start_key_is_run_conflict(store: Backend) -> None:
    run = _started_root(store)
    started = started_record(run, event_key="start-2")
    expect_invalid_start(
        store, run, started, canceled_record(run), error=RunConflictError, code="run_conflict"
    )


def test_start_root_retry_of_stop_with_other_start_key_is_run_conflict(store: Backend) -> None:
    run = _started_root(store, stop=True)
    started = started_record(run, event_key="start-2")
    expect_invalid_start(
        store, run, started, canceled_record(run), error=RunConflictError, code="run_conflict"
    )


def test_start_root_retry_of_stop_with_other_terminal_key_is_run_conflict(
    store: Backend,
) -> None:
    run = _started_root(store, stop=True)
    canceled = canceled_record(run, event_key="start-canceled-2")
    expect_invalid_start(
        store, run, started_record(run), canceled, error=RunConflictError, code="run_conflict"
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"turn_id": "turn-2"}, id="turn"),
        pytest.param(
            {"payload": b'{"Labels":{"site":"one"},"ParentRunID":"","PredecessorRunID":""}'},
            id="payload-bytes",
        ),
    ],
)
def test_start_root_retry_same_start_key_other_content_is_event_conflict(
    store: Backend, change: dict[str, object]
) -> None:
    run = _started_root(store)
    started = replace(started_record(run), **change)  # type: ignore[arg-type]
    error = expect_rejected(
        store,
        lambda: store.start_root_run(run, started, canceled_record(run)),
        EventConflictError,
        "event_conflict",
        run.run_id,
        session_id=run.session_id,
    )
    assert error.run_id == run.run_id
    assert error.event_key == "start"


def test_start_root_retry_of_stop_same_terminal_key_other_content_is_event_conflict(
    store: Backend,
) -> None:
    run = _started_root(store, stop=True)
    canceled = replace(canceled_record(run), turn_id="turn-2")
    error = expect_rejected(
        store,
        lambda: store.start_root_run(run, started_record(run), canceled),
        EventConflictError,
        "event_conflict",
        run.run_id,
        session_id=run.session_id,
    )
    assert error.run_id == run.run_id
    assert error.event_key == "start-canceled"


def test_start_root_run_id_used_in_another_session_is_run_conflict(store: Backend) -> None:
    first = _started_root(store)
    other = new_session(store)
    run = replace(first, session_id=other.id)
    before_first = observe(store, first.run_id, session_id=first.session_id)
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled_record(run),
        error=RunConflictError,
        code="run_conflict",
    )
    assert observe(store, first.run_id, session_id=first.session_id) == before_first


def test_start_root_run_id_used_in_another_session_wins_over_unknown_session(
    store: Backend,
) -> None:
    first = _started_root(store)
    run = replace(first, session_id=uid("sess-unknown"))
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled_record(run),
        error=RunConflictError,
        code="run_conflict",
    )


def test_start_root_run_id_used_by_one_shot_run_is_run_conflict(store: Backend) -> None:
    one_shot = run_start(labels=SITE)
    store.start_one_shot_run(one_shot, started_record(one_shot))
    session = new_session(store)
    run = replace(one_shot, session_id=session.id)
    before_one_shot = observe(store, one_shot.run_id)
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled_record(run),
        error=RunConflictError,
        code="run_conflict",
    )
    assert observe(store, one_shot.run_id) == before_one_shot


# --- session state ------------------------------------------------------------------------


def test_start_root_in_unknown_session_is_session_not_found(store: Backend) -> None:
    run = root_in(uid("sess-unknown"))
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled_record(run),
        error=SessionNotFoundError,
        code="session_not_found",
    )


def test_start_root_in_purged_session_is_session_purged(store: Backend) -> None:
    session = new_session(store)
    end(store, session.id)
    store.purge_session(session.id)
    run = root_in(session.id)
    expect_invalid_start(
        store,
        run,
        started_record(run),
        canceled_record(run),
        error=SessionPurgedError,
        code="session_purged",
    )
