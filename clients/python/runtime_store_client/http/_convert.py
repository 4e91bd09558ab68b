"""The generated wire models of answers as the contract dataclasses."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from .._generated.models import (
    AppendResultBody,
    AppendResultsBody,
    CheckpointBody,
    ChildRunStartResultBody,
    MemoryEventBodyData,
    MemoryEventBodyLabelsType0,
    OneShotChildRunStartResultBody,
    OneShotRunStartResultBody,
    RecordBody,
    RecordCountsBody,
    RecordPageBody,
    RepairResultBody,
    RootRunStartResultBody,
    RunMetaBody,
    RunPageBody,
    SessionBody,
    SessionPageBody,
    SnapshotBody,
    StatusCountsBody,
    TranscriptPageBody,
)
from .._generated.types import Unset
from .._records import trusted_record
from ..errors import InvalidTranscriptError
from ..times import to_utc
from ..transcript import Message, decode_message
from ..types import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
    RecordCounts,
    RepairOutcome,
    RepairResult,
    RootRunStartResult,
    RunMeta,
    RunPage,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    Session,
    SessionPage,
    SessionStatus,
    Snapshot,
    StatusCounts,
)

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
        seed_end_id=body.seed_end_id,
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


def status_counts(body: StatusCountsBody) -> StatusCounts:
    return StatusCounts(counts=dict(body.counts.additional_properties), limit=body.limit)


def record_counts(body: RecordCountsBody) -> RecordCounts:
    return RecordCounts(
        runs=dict(body.runs.additional_properties),
        sessions=dict(body.sessions.additional_properties),
    )


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
                type=item.type_.value,
                timestamp=to_utc(item.timestamp),
                data=data,
                labels=dict(labels),
            )
        )
    return Snapshot(agent_id=body.agent_id, run_id=body.run_id, events=events)


def transcript_page(body: TranscriptPageBody) -> tuple[list[Message], str]:
    return [decode_message(item.to_dict()) for item in body.messages], body.next_cursor


def transcript_page_json(body: Any) -> tuple[list[Message], str]:
    """``transcript_page(TranscriptPageBody.from_dict(body))`` in one layer: the models of
    a message's parts cost more than decoding the message. A body it cannot read, or a
    message the decoder refuses, is ``ValueError``: the generated models then read it,
    and raise, as before."""
    try:
        messages = [decode_message(item) for item in body["messages"]]
    except InvalidTranscriptError as exc:
        raise ValueError(str(exc)) from None
    return messages, _str(body["next_cursor"])
