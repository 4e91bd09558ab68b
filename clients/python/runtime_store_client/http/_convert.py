"""Conversions between the contract dataclasses and the generated wire models.

Input that cannot even be sent (an empty path ID, payload bytes that are not UTF-8, a
naive or sub-millisecond time) raises the error the server would, before any request.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from .._generated.models import (
    AppendResultBody,
    AppendResultsBody,
    CheckpointBody,
    ChildRunStartResultBody,
    MemoryEventBody,
    MemoryEventBodyData,
    MemoryEventBodyLabelsType0,
    OneShotChildRunStartResultBody,
    OneShotRunStartResultBody,
    RecordBody,
    RecordPageBody,
    RepairResultBody,
    RootRunStartResultBody,
    RunMetaBody,
    RunPageBody,
    RunStartBody,
    RunStartBodyLabelsType0,
    SessionBody,
    SessionPageBody,
    SnapshotBody,
    TranscriptPageBody,
)
from .._generated.models import RunStatus as WireRunStatus
from .._generated.types import UNSET, Unset
from .._records import trusted_record
from ..errors import (
    InvalidArgumentError,
    InvalidTranscriptError,
    SessionNotFoundError,
    StoreError,
    UnavailableError,
    error_class_for_code,
)
from ..times import TimeError, check_time, to_utc
from ..transcript import Message, TranscriptViolation, decode_message
from ..types import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
    RepairOutcome,
    RepairResult,
    RootRunStartResult,
    RunMeta,
    RunPage,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    Session,
    SessionPage,
    SessionStatus,
    Snapshot,
)

# --- requests --------------------------------------------------------------------------


def path_id(value: str, what: str) -> str:
    """A path segment the server can route; empty is ``invalid_argument``."""
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"{what} is required")
    return value


def session_path_id(value: str) -> str:
    """Reads of a session answer ``session_not_found`` for "" (CONTRACT.md 3.2)."""
    if not isinstance(value, str) or not value:
        raise SessionNotFoundError(f"session {value!r} not found", session_id="")
    return value


def wire_time(value: datetime, what: str) -> datetime:
    """A contract time in UTC; one the server would refuse is refused before the request."""
    try:
        return to_utc(check_time(value))
    except TimeError as exc:
        raise InvalidArgumentError(f"{what} {exc}") from None


def wire_payload(payload: bytes, what: str) -> str:
    if not isinstance(payload, bytes | bytearray):
        raise InvalidArgumentError(f"{what} must be bytes")
    try:
        return bytes(payload).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError(f"{what} is not valid UTF-8: {exc.reason}") from None


def _labels(labels: Mapping[str, str] | None, model: Any) -> Any:
    if not labels:
        return UNSET
    return model.from_dict(dict(labels))


def record_body(record: Record, what: str = "record") -> RecordBody:
    if not isinstance(record, Record):
        raise InvalidArgumentError(f"{what} must be a Record")
    return RecordBody(
        id=record.id,
        event_key=record.event_key,
        run_id=record.run_id,
        agent_id=record.agent_id,
        session_id=record.session_id,
        turn_id=record.turn_id,
        type_=record.type,
        payload=wire_payload(record.payload, f"{what}.payload"),
        timestamp=wire_time(record.timestamp, f"{what}.timestamp"),
    )


def digest_text(digest: bytes | None) -> str | Unset:
    """A request digest on the wire (CONTRACT.md 12.1): lowercase hex; absent for none."""
    if digest is None:
        return UNSET
    if not isinstance(digest, bytes | bytearray):
        raise InvalidArgumentError("request_digest must be bytes")
    return bytes(digest).hex()


def run_start_body(run: RunStart) -> RunStartBody:
    if not isinstance(run, RunStart):
        raise InvalidArgumentError("run must be a RunStart")
    return RunStartBody(
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        parent_run_id=run.parent_run_id,
        predecessor_run_id=run.predecessor_run_id,
        started_at=wire_time(run.started_at, "run.started_at"),
        labels=_labels(run.labels, RunStartBodyLabelsType0),
    )


def checkpoint_body(checkpoint: Checkpoint) -> CheckpointBody:
    if not isinstance(checkpoint, Checkpoint):
        raise InvalidArgumentError("checkpoint must be a Checkpoint")
    if not isinstance(checkpoint.data, bytes | bytearray):
        raise InvalidArgumentError("checkpoint.data must be bytes")
    return CheckpointBody(id=checkpoint.id, data=base64.b64encode(checkpoint.data).decode())


def wire_run_status(status: RunStatus | str) -> WireRunStatus:
    try:
        return WireRunStatus(str(status))
    except ValueError:
        raise InvalidArgumentError(f"status {status!r} is not a run status") from None


def memory_event_body(event: MemoryEvent, what: str) -> MemoryEventBody:
    if not isinstance(event, MemoryEvent):
        raise InvalidArgumentError(f"{what} must be a MemoryEvent")
    if not isinstance(event.data, Mapping):
        raise InvalidArgumentError(f"{what}.data must be a JSON object")
    try:
        data = json.loads(json.dumps(dict(event.data), allow_nan=False, default=_as_dict))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{what}.data is not JSON: {exc}") from None
    return MemoryEventBody(
        type_=event.type,
        timestamp=wire_time(event.timestamp, f"{what}.timestamp"),
        data=MemoryEventBodyData.from_dict(data),
        labels=_labels(event.labels, MemoryEventBodyLabelsType0),
    )


def _as_dict(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


# --- responses -------------------------------------------------------------------------


def _text(value: str | Unset | None) -> str:
    return value if isinstance(value, str) else ""


def record(body: RecordBody) -> Record:
    return Record(
        id=_text(body.id),
        event_key=body.event_key,
        run_id=body.run_id,
        agent_id=body.agent_id,
        session_id=_text(body.session_id),
        turn_id=_text(body.turn_id),
        type=body.type_,
        payload=body.payload.encode("utf-8"),
        timestamp=to_utc(body.timestamp),
    )


def append_result(body: AppendResultBody) -> AppendResult:
    status = body.session_status
    return AppendResult(
        id=body.id,
        inserted=body.inserted,
        session_status=None if status is None else SessionStatus(status.value),
    )


def append_results(body: AppendResultsBody) -> list[AppendResult]:
    return [append_result(item) for item in body.results]


def _optional_append(body: AppendResultBody | None) -> AppendResult | None:
    return None if body is None else append_result(body)


def root_start(body: RootRunStartResultBody) -> RootRunStartResult:
    return RootRunStartResult(
        outcome=RunStartOutcome(body.outcome.value),
        run_status=RunStatus(body.run_status.value),
        started=append_result(body.started),
        canceled=_optional_append(body.canceled),
    )


def child_start(body: ChildRunStartResultBody) -> ChildRunStartResult:
    return ChildRunStartResult(
        outcome=RunStartOutcome(body.outcome.value),
        run_status=RunStatus(body.run_status.value),
        parent_record=append_result(body.parent_record),
        started=append_result(body.started),
        canceled=_optional_append(body.canceled),
    )


def one_shot_start(body: OneShotRunStartResultBody) -> OneShotRunStartResult:
    return OneShotRunStartResult(
        run_status=RunStatus(body.run_status.value), record=append_result(body.record)
    )


def one_shot_child_start(body: OneShotChildRunStartResultBody) -> OneShotChildRunStartResult:
    return OneShotChildRunStartResult(
        run_status=RunStatus(body.run_status.value),
        parent_record=append_result(body.parent_record),
        started=append_result(body.started),
    )


def repair_result(body: RepairResultBody) -> RepairResult:
    return RepairResult(
        outcome=RepairOutcome(body.outcome.value),
        status=RunStatus(body.status.value),
        record=_optional_append(body.record),
    )


def run_meta(body: RunMetaBody) -> RunMeta:
    return RunMeta(
        run_id=body.run_id,
        agent_id=body.agent_id,
        session_id=body.session_id,
        parent_run_id=body.parent_run_id,
        status=RunStatus(body.status.value),
        start_outcome=RunStartOutcome(body.start_outcome.value),
        started_at=to_utc(body.started_at),
        updated_at=to_utc(body.updated_at),
        labels=dict(body.labels.additional_properties),
        cancellation_reason=body.cancellation_reason,
        successor_run_id=body.successor_run_id,
        start_kind=RunStartKind(body.start_kind.value),
    )


def checkpoint(body: CheckpointBody) -> Checkpoint:
    return Checkpoint(id=body.id, data=base64.b64decode(body.data))


def session(body: SessionBody) -> Session:
    ended = body.ended_at
    return Session(
        id=body.id,
        status=SessionStatus(body.status.value),
        created_at=to_utc(body.created_at),
        ended_at=to_utc(ended) if isinstance(ended, datetime) else None,
    )


def record_page(body: RecordPageBody) -> Page:
    return Page(records=[record(item) for item in body.records], next_cursor=body.next_cursor)


def _str_or_empty(value: object) -> str:
    return value if isinstance(value, str) else ""


def record_page_json(body: Any) -> Page:
    """``record_page(RecordPageBody.from_dict(body))`` in one layer (a few µs a record
    instead of two model layers); any body it cannot read raises, and the caller falls
    back to the generated models."""
    records = [
        trusted_record(
            _str_or_empty(item.get("id")),
            _str(item["event_key"]),
            _str(item["run_id"]),
            _str(item["agent_id"]),
            _str_or_empty(item.get("session_id")),
            _str_or_empty(item.get("turn_id")),
            _str(item["type"]),
            item["payload"].encode("utf-8"),
            _from_iso(item["timestamp"]).astimezone(UTC),
        )
        for item in body["records"]
    ]
    return Page(records=records, next_cursor=_str(body["next_cursor"]))


def _str(value: object) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


_from_iso = datetime.fromisoformat


def session_page(body: SessionPageBody) -> SessionPage:
    return SessionPage(
        sessions=[session(item) for item in body.sessions], next_cursor=body.next_cursor
    )


def run_page(body: RunPageBody) -> RunPage:
    return RunPage(runs=[run_meta(item) for item in body.runs], next_cursor=body.next_cursor)


def snapshot(body: SnapshotBody) -> Snapshot:
    events = []
    for item in body.events:
        data = item.data.additional_properties if isinstance(item.data, MemoryEventBodyData) else {}
        labels = (
            item.labels.additional_properties
            if isinstance(item.labels, MemoryEventBodyLabelsType0)
            else {}
        )
        events.append(
            MemoryEvent(
                type=item.type_, timestamp=to_utc(item.timestamp), data=data, labels=dict(labels)
            )
        )
    return Snapshot(agent_id=body.agent_id, run_id=body.run_id, events=events)


def transcript_page(body: TranscriptPageBody) -> tuple[list[Message], str]:
    return [decode_message(item.to_dict()) for item in body.messages], body.next_cursor


# --- problems --------------------------------------------------------------------------


def problem_error(response: httpx.Response) -> StoreError:
    """The contract error of an error response (a problem body, or a bare status)."""
    retry_after = _retry_after(response.headers.get("retry-after"))
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        if response.status_code in (502, 503, 504):
            error: StoreError = UnavailableError(
                f"HTTP {response.status_code} from {response.request.url.host}"
            )
        else:
            error = StoreError(
                f"HTTP {response.status_code} without a problem body",
                code="unknown",
                status=response.status_code,
            )
        error.retry_after = retry_after
        return error
    code: str = body["code"]
    if code == "invalid_transcript":
        error = InvalidTranscriptError(
            str(body.get("detail") or code),
            status=int(body.get("status") or response.status_code),
            run_id=str(body.get("run_id") or ""),
            violations=_violations(body.get("violations")),
        )
        error.retry_after = retry_after
        return error
    error = error_class_for_code(code)(
        str(body.get("detail") or body.get("title") or code),
        code=code,
        status=int(body.get("status") or response.status_code),
        run_id=str(body.get("run_id") or ""),
        session_id=str(body.get("session_id") or ""),
        event_key=str(body.get("event_key") or ""),
    )
    if isinstance(error, InvalidArgumentError) and isinstance(body.get("line"), int):
        error.line = body["line"]  # the broken line of an imported session file (11.4)
    error.retry_after = retry_after
    return error


def _violations(value: object) -> list[TranscriptViolation]:
    if not isinstance(value, list):
        return []
    return [
        TranscriptViolation(
            index=int(item.get("index", -1)),
            rule=str(item.get("rule", "")),
            message=str(item.get("message", "")),
        )
        for item in value
        if isinstance(item, dict)
    ]


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
