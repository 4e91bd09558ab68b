"""Builders of valid contract inputs, so each test states only what it is about.

Every builder returns a *valid* value for the contract; tests derive invalid variants with
``dataclasses.replace``. Record builders take the owning ``RunStart`` and copy its run,
agent and session into the record envelope.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import pytest

from runtime_store_client import (
    Checkpoint,
    Record,
    RootRunStartResult,
    RunStart,
    RunStatus,
    Session,
    StoreError,
    error_class_for_code,
)
from runtime_store_client.protocols import MemoryStore, RunSearch, SessionAdmin, Store

T0 = datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=UTC)

_TERMINAL_PAYLOAD_STATUS = {
    RunStatus.COMPLETED: "success",
    RunStatus.FAILED: "failed",
    RunStatus.CANCELED: "canceled",
}


def at(ms: int) -> datetime:
    """``T0`` plus ``ms`` milliseconds."""
    return T0 + timedelta(milliseconds=ms)


def uid(prefix: str) -> str:
    """A fresh identifier, so no two tests ever share a row."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def dumps(value: Any) -> bytes:
    """Compact JSON bytes, as the Go runtime writes them (text that is not valid Unicode,
    such as a lone surrogate, escaped: tests of rule 2.6 build such records)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode()


def run_start(
    *,
    run_id: str | None = None,
    agent_id: str = "agent-1",
    session_id: str = "",
    parent_run_id: str = "",
    predecessor_run_id: str = "",
    started_at: datetime = T0,
    labels: Mapping[str, str] | None = None,
) -> RunStart:
    return RunStart(
        run_id=run_id or uid("run"),
        agent_id=agent_id,
        session_id=session_id,
        parent_run_id=parent_run_id,
        predecessor_run_id=predecessor_run_id,
        started_at=started_at,
        labels=dict(labels or {}),
    )


def record(
    run: RunStart,
    *,
    event_key: str | None = None,
    type: str = "planner_note",
    payload: bytes = b'{"note":"thinking"}',
    timestamp: datetime | None = None,
    turn_id: str = "",
) -> Record:
    """An ordinary record on ``run``."""
    return Record(
        event_key=event_key or uid("evt"),
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        turn_id=turn_id,
        type=type,
        payload=payload,
        timestamp=timestamp or at(10),
    )


def started_record(run: RunStart, *, event_key: str = "start") -> Record:
    """The ``run_started`` record matching ``run``."""
    payload = {
        "ParentRunID": run.parent_run_id,
        "PredecessorRunID": run.predecessor_run_id,
        "Labels": dict(run.labels) or None,
    }
    return record(
        run,
        event_key=event_key,
        type="run_started",
        payload=dumps(payload),
        timestamp=run.started_at,
    )


def completed_payload(
    status: RunStatus, *, reason: str = "", labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``run_completed`` payload for ``status`` (``reason`` used when canceled)."""
    payload: dict[str, Any] = {"status": _TERMINAL_PAYLOAD_STATUS[status], "phase": str(status)}
    if status is RunStatus.FAILED:
        payload["failure"] = {"message": "tool timed out", "kind": "timeout", "retryable": True}
    if status is RunStatus.CANCELED:
        payload["cancellation"] = {"reason": reason or "engine_canceled"}
    if labels:
        payload["labels"] = dict(labels)
    return payload


def canceled_record(run: RunStart, *, event_key: str = "start-canceled") -> Record:
    """The canceled ``run_completed`` record a start uses when the session has ended."""
    payload = completed_payload(RunStatus.CANCELED, reason="session_ended", labels=run.labels)
    return record(
        run,
        event_key=event_key,
        type="run_completed",
        payload=dumps(payload),
        timestamp=run.started_at,
    )


def link_record(
    parent: RunStart,
    child: RunStart,
    *,
    event_key: str | None = None,
    tool_name: str = "search",
    tool_call_id: str = "call-1",
    timestamp: datetime | None = None,
) -> Record:
    """The ``child_run_linked`` record stored on ``parent`` for ``child``."""
    payload = {
        "ToolName": tool_name,
        "ToolCallID": tool_call_id,
        "ChildRunID": child.run_id,
        "ChildAgentID": child.agent_id,
    }
    return Record(
        event_key=event_key or f"link-{child.run_id}",
        run_id=parent.run_id,
        agent_id=parent.agent_id,
        session_id=child.session_id,
        type="child_run_linked",
        payload=dumps(payload),
        timestamp=timestamp or at(5),
    )


def cancellation_record(
    run: RunStart, reason: str = "user_requested", *, event_key: str = "cancel"
) -> Record:
    """A ``runtime.cancellation_intent`` record carrying ``reason``."""
    return record(
        run,
        event_key=event_key,
        type="runtime.cancellation_intent",
        payload=dumps({"reason": reason}),
        timestamp=at(20),
    )


def checkpoint(checkpoint_id: str = "cp-1", data: bytes = b"\x00\x01opaque\xff") -> Checkpoint:
    return Checkpoint(id=checkpoint_id, data=data)


def suspended_record(
    run: RunStart, checkpoint_id: str = "cp-1", *, event_key: str = "suspend"
) -> Record:
    """A ``run_suspended`` record naming ``checkpoint_id``."""
    payload = {
        "SuspensionID": checkpoint_id,
        "Version": "v1",
        "PendingCount": 1,
        "RequiredTools": ["approve"],
    }
    return record(
        run,
        event_key=event_key,
        type="run_suspended",
        payload=dumps(payload),
        timestamp=at(30),
    )


def terminal_record(
    run: RunStart, status: RunStatus, *, reason: str = "", event_key: str = "terminal"
) -> Record:
    """A ``run_completed`` record for ``status`` with the run's labels."""
    payload = completed_payload(status, reason=reason, labels=run.labels)
    return record(
        run,
        event_key=event_key,
        type="run_completed",
        payload=dumps(payload),
        timestamp=at(40),
    )


class Backend(Store, SessionAdmin, RunSearch, MemoryStore, Protocol):
    """What the ``store`` fixture yields: one object implementing every protocol."""


def new_session(admin: SessionAdmin, session_id: str | None = None) -> Session:
    """Create a fresh active session."""
    return admin.create_session(session_id or uid("sess"), T0)


@dataclass(frozen=True)
class StartedRoot:
    run: RunStart
    result: RootRunStartResult


def start_root(
    store: Store,
    session_id: str,
    *,
    run_id: str | None = None,
    agent_id: str = "agent-1",
    labels: Mapping[str, str] | None = None,
    predecessor_run_id: str = "",
) -> StartedRoot:
    """Start a root run in ``session_id`` with valid records."""
    run = run_start(
        run_id=run_id,
        agent_id=agent_id,
        session_id=session_id,
        labels=labels,
        predecessor_run_id=predecessor_run_id,
    )
    result = store.start_root_run(run, started_record(run), canceled_record(run))
    return StartedRoot(run=run, result=result)


def all_records(store: Store, run_id: str) -> list[Record]:
    """Every record of a run, following cursors."""
    out: list[Record] = []
    cursor = ""
    while True:
        page = store.list_run_records(run_id, cursor=cursor, limit=1000)
        out.extend(page.records)
        if not page.next_cursor:
            return out
        cursor = page.next_cursor


def all_session_records(store: Store, session_id: str) -> list[Record]:
    """Every record of a session in commit order, following cursors."""
    out: list[Record] = []
    cursor = ""
    while True:
        page = store.list_session_run_records(session_id, cursor=cursor, limit=1000)
        out.extend(page.records)
        if not page.next_cursor:
            return out
        cursor = page.next_cursor


#: The in-process store over the database behind each store a test reaches through a
#: service (``id`` of the ``HttpStore`` → its ``SqlStore``), set by the ``store`` fixture.
_DATABASE_READERS: dict[int, Store] = {}


@contextlib.contextmanager
def observed_in_process(store: Store, reader: Store) -> Iterator[Store]:
    """``observe(store, …)`` reads through ``reader``, the same database in process."""
    _DATABASE_READERS[id(store)] = reader
    try:
        yield store
    finally:
        _DATABASE_READERS.pop(id(store), None)


def observe(store: Store, *run_ids: str, session_id: str = "") -> list[object]:
    """What is stored of some runs and a session, as a reader sees it: metas, records,
    checkpoints.

    Reads that fail are captured as their error code, so the observation of a run that
    does not exist is comparable too. Used to prove that a rejected write changed nothing:
    ``before = observe(...)``, the failing call, then ``assert observe(...) == before``.
    For a store reached through a service the reads go to its database in process
    (``observed_in_process``): "changed nothing" is a fact about what is stored, and the
    service's own reads are proven by the read tests, where they are the subject. Through
    HTTP these nine or so reads were three quarters of the contract suite's requests.
    """
    from runtime_store_client import StoreError

    store = _DATABASE_READERS.get(id(store), store)
    seen: list[object] = []
    for run_id in run_ids:
        for read in (store.load_run, store.load_run_suspension, lambda r: all_records(store, r)):
            try:
                seen.append(read(run_id))
            except StoreError as exc:
                seen.append(exc.code)
    if session_id:
        for sread in (store.load_session_status, lambda s: all_session_records(store, s)):
            try:
                seen.append(sread(session_id))
            except StoreError as exc:
                seen.append(exc.code)
    return seen


def assert_rejected(
    store: Store,
    call: Callable[[], object],
    error: type[StoreError],
    *run_ids: str,
    session_id: str = "",
) -> StoreError:
    """``call`` fails with exactly ``error`` (class, code, status) and nothing becomes visible."""
    before = observe(store, *run_ids, session_id=session_id)
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert info.value.code == error.default_code
    assert info.value.status == error.default_status
    assert observe(store, *run_ids, session_id=session_id) == before
    return info.value


def expect_rejected(
    store: Store,
    call: Callable[[], object],
    error: type[StoreError],
    code: str,
    *run_ids: str,
    session_id: str = "",
) -> StoreError:
    """``call`` fails with ``error`` carrying ``code`` and its status; nothing is written."""
    before = observe(store, *run_ids, session_id=session_id)
    with pytest.raises(error) as info:
        call()
    assert info.value.code == code
    assert info.value.status == error_class_for_code(code).default_status
    assert observe(store, *run_ids, session_id=session_id) == before
    return info.value
