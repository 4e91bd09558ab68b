"""Validation that needs no stored state: records, run starts and lifecycle inputs.

Each function either returns the checked input in storage form (times as epoch ms) or
raises the contract error the rule names. Nothing here performs I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from runtime_store_client import (
    CancellationReason,
    Checkpoint,
    InvalidArgumentError,
    Record,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStatus,
)

from . import payloads
from .json_bounds import check_text_depth
from .text import check_plain_text, check_unicode
from .times import to_millis


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A validated record about to be written (or compared with a stored one)."""

    event_key: str
    run_id: str
    agent_id: str
    session_id: str
    turn_id: str
    type: str
    payload: bytes
    timestamp_ms: int


@dataclass(frozen=True, slots=True)
class NewRun:
    """A validated run start in storage form."""

    run_id: str
    agent_id: str
    session_id: str
    parent_run_id: str
    predecessor_run_id: str
    started_at_ms: int
    labels: dict[str, str]
    #: The seed history end the start attaches (15.5); "" for none.
    seed_end_id: str = ""

    @property
    def labels_json(self) -> str:
        return labels_json(self.labels)


def labels_json(labels: Mapping[str, str]) -> str:
    """Canonical text of a label map, so stored labels compare as strings."""
    return json.dumps(dict(labels), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def require_id(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    if not value:
        raise InvalidArgumentError(f"{what} is required")
    check_plain_text(value, what)
    return value


def optional_text(value: object, what: str) -> str:
    """An optional plain-column string: "" or text under the rules of 2.6."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    check_plain_text(value, what)
    return value


def check_labels(labels: Mapping[str, str] | None, what: str) -> dict[str, str]:
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise InvalidArgumentError(f"{what} must be a map of strings")
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError(f"{what} must map strings to strings")
        # Kept as JSON text: an escaped NUL is allowed, a lone surrogate is not (2.6).
        check_unicode(key, f"{what} key")
        check_unicode(value, f"{what}[{key!r}]")
    return dict(labels)


def check_record(record: Record, what: str = "record") -> NewRecord:
    """The envelope rules of 1.7; the payload must be UTF-8 JSON text.

    Lifecycle payloads are checked again, strictly, by their operation's decoder.
    """
    if not isinstance(record, Record):
        raise InvalidArgumentError(f"{what} must be a Record")
    for name in ("event_key", "run_id", "agent_id", "type"):
        require_id(getattr(record, name), f"{what}.{name}")
    for name in ("session_id", "turn_id"):
        optional_text(getattr(record, name), f"{what}.{name}")
    if not isinstance(record.payload, bytes | bytearray):
        raise InvalidArgumentError(f"{what}.payload must be bytes")
    payload = bytes(record.payload)
    if record.type not in payloads.LIFECYCLE_TYPES:
        payloads.check_json_text(payload)  # measured (2.8), then parsed
    elif not payload:
        raise InvalidArgumentError(f"{what}.payload is required")
    else:  # parsed later by its operation's decoder; bounded here, before any of it (2.8)
        check_text_depth(payload, f"{what}.payload")
    return NewRecord(
        event_key=record.event_key,
        run_id=record.run_id,
        agent_id=record.agent_id,
        session_id=record.session_id,
        turn_id=record.turn_id,
        type=record.type,
        payload=payload,
        timestamp_ms=to_millis(record.timestamp, f"{what}.timestamp"),
    )


def check_ordinary_record(record: Record) -> NewRecord:
    """A record for ``append_run_record``: lifecycle types need their own operation."""
    checked = check_record(record)
    if checked.type in payloads.LIFECYCLE_TYPES:
        raise InvalidArgumentError(f"record type {checked.type!r} requires a lifecycle operation")
    return checked


def _check_type(record: NewRecord, expected: str, what: str) -> None:
    if record.type != expected:
        raise InvalidArgumentError(f"{what} must have type {expected!r}, not {record.type!r}")


def _check_owner(record: NewRecord, run: NewRun, what: str) -> None:
    if (record.run_id, record.agent_id, record.session_id) != (
        run.run_id,
        run.agent_id,
        run.session_id,
    ):
        raise RunRecordOwnerMismatchError(
            f"{what} must belong to run {run.run_id!r}, agent {run.agent_id!r} "
            f"and session {run.session_id!r}",
            run_id=run.run_id,
            event_key=record.event_key,
        )


def _check_parent(run: RunStart, *, child: bool) -> None:
    if child and not run.parent_run_id:
        raise InvalidArgumentError("run.parent_run_id is required for a child start")
    if not child and run.parent_run_id:
        raise InvalidArgumentError("run.parent_run_id must be empty for a root start")
    if child and run.parent_run_id == run.run_id:
        raise InvalidArgumentError("run.parent_run_id must differ from run.run_id")


def _check_predecessor(run: RunStart, *, continuation_allowed: bool) -> None:
    if not run.predecessor_run_id:
        return
    if not continuation_allowed:
        raise InvalidArgumentError("run.predecessor_run_id must be empty for a one-shot start")
    if run.predecessor_run_id == run.run_id:
        raise InvalidArgumentError("run.predecessor_run_id must differ from run.run_id")


def check_run_start(
    run: RunStart, *, sessionful: bool, child: bool, continuation_allowed: bool
) -> NewRun:
    """The run start rules of 1.4 for one start kind."""
    if not isinstance(run, RunStart):
        raise InvalidArgumentError("run must be a RunStart")
    require_id(run.run_id, "run.run_id")
    require_id(run.agent_id, "run.agent_id")
    for name in ("session_id", "parent_run_id", "predecessor_run_id"):
        optional_text(getattr(run, name), f"run.{name}")
    if sessionful and not run.session_id:
        raise InvalidArgumentError("run.session_id is required")
    if not sessionful and run.session_id:
        raise InvalidArgumentError("run.session_id must be empty for a one-shot start")
    _check_parent(run, child=child)
    _check_predecessor(run, continuation_allowed=continuation_allowed)
    return NewRun(
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        parent_run_id=run.parent_run_id,
        predecessor_run_id=run.predecessor_run_id,
        started_at_ms=to_millis(run.started_at, "run.started_at"),
        labels=check_labels(run.labels, "run.labels"),
        seed_end_id=optional_text(run.seed_end_id, "run.seed_end_id"),
    )


#: The length of a request digest (12.1): a SHA-256.
REQUEST_DIGEST_BYTES = 32


def check_request_digest(value: object) -> bytes | None:
    """An engine start's optional request digest (12.1): 32 bytes, not all zero."""
    if value is None:
        return None
    if not isinstance(value, bytes | bytearray):
        raise InvalidArgumentError("request_digest must be bytes")
    if len(value) != REQUEST_DIGEST_BYTES:
        raise InvalidArgumentError(
            f"request_digest must be {REQUEST_DIGEST_BYTES} bytes, not {len(value)}"
        )
    if not any(value):
        raise InvalidArgumentError("request_digest must not be all zero")
    return bytes(value)


def check_no_request_digest(value: object) -> None:
    """A synchronous start carries no request digest (12.2)."""
    if value is not None:
        raise InvalidArgumentError("a synchronous start takes no request_digest")


def check_started_record(record: Record, run: NewRun) -> NewRecord:
    """The ``run_started`` record of a start (3.3 step 2)."""
    started = check_record(record, "started")
    _check_type(started, payloads.RUN_STARTED, "started")
    payload = payloads.decode_run_started(started.payload)
    _check_owner(started, run, "started")
    if started.timestamp_ms != run.started_at_ms:
        raise InvalidArgumentError("started.timestamp must equal run.started_at")
    if payload.parent_run_id != run.parent_run_id:
        raise InvalidArgumentError("run_started ParentRunID must equal run.parent_run_id")
    if payload.predecessor_run_id != run.predecessor_run_id:
        raise InvalidArgumentError("run_started PredecessorRunID must equal run.predecessor_run_id")
    if payload.labels != run.labels:
        raise InvalidArgumentError("run_started Labels must equal run.labels")
    return started


def check_canceled_record(record: Record, run: NewRun) -> NewRecord:
    """The canceled ``run_completed`` a start writes when the session ended (3.3 step 3)."""
    canceled = check_record(record, "canceled")
    _check_type(canceled, payloads.RUN_COMPLETED, "canceled")
    payload = payloads.decode_run_completed(canceled.payload)
    _check_owner(canceled, run, "canceled")
    if canceled.timestamp_ms != run.started_at_ms:
        raise InvalidArgumentError("canceled.timestamp must equal run.started_at")
    if payload.run_status != RunStatus.CANCELED:
        raise InvalidArgumentError("canceled must be a run_completed with status canceled")
    if payload.cancellation_reason != CancellationReason.SESSION_ENDED:
        raise InvalidArgumentError(
            f"canceled must carry cancellation reason {CancellationReason.SESSION_ENDED.value!r}"
        )
    if payload.labels != run.labels:
        raise InvalidArgumentError("canceled labels must equal run.labels")
    return canceled


def check_link_record(record: Record, run: NewRun) -> NewRecord:
    """The ``child_run_linked`` record a child start stores on its parent (3.4, 3.6)."""
    link = check_record(record, "parent_linked")
    _check_type(link, payloads.CHILD_RUN_LINKED, "parent_linked")
    payload = payloads.decode_child_run_linked(link.payload)
    if link.run_id != run.parent_run_id:
        raise InvalidArgumentError("parent_linked.run_id must equal run.parent_run_id")
    if link.session_id != run.session_id:
        if not run.session_id:
            raise InvalidArgumentError("parent_linked of a one-shot child must carry no session")
        raise InvalidArgumentError("parent_linked.session_id must equal run.session_id")
    if payload.child_run_id != run.run_id:
        raise InvalidArgumentError("child_run_linked ChildRunID must equal run.run_id")
    if payload.child_agent_id != run.agent_id:
        raise InvalidArgumentError("child_run_linked ChildAgentID must equal run.agent_id")
    if not payload.tool_name:
        raise InvalidArgumentError("child_run_linked ToolName is required")
    if not payload.tool_call_id:
        raise InvalidArgumentError("child_run_linked ToolCallID is required")
    return link


def _check_command_record(record: Record, run_id: str, record_type: str) -> NewRecord:
    require_id(run_id, "run_id")
    checked = check_record(record)
    _check_type(checked, record_type, "record")
    if checked.run_id != run_id:
        raise InvalidArgumentError(f"record.run_id must equal the run_id {run_id!r}")
    return checked


def check_cancellation(run_id: str, reason: str, record: Record) -> NewRecord:
    """Input rules of ``record_run_cancellation`` (3.8)."""
    require_id(run_id, "run_id")
    require_id(reason, "reason")
    checked = _check_command_record(record, run_id, payloads.CANCELLATION_INTENT)
    if payloads.decode_cancellation_intent(checked.payload) != reason:
        raise InvalidArgumentError("cancellation record reason must equal the reason")
    return checked


def check_suspension(run_id: str, checkpoint: Checkpoint, record: Record) -> NewRecord:
    """Input rules of ``record_run_suspension`` (3.9)."""
    require_id(run_id, "run_id")
    if not isinstance(checkpoint, Checkpoint):
        raise InvalidArgumentError("checkpoint must be a Checkpoint")
    require_id(checkpoint.id, "checkpoint.id")
    if not isinstance(checkpoint.data, bytes | bytearray) or not checkpoint.data:
        raise InvalidArgumentError("checkpoint.data is required")
    checked = _check_command_record(record, run_id, payloads.RUN_SUSPENDED)
    if payloads.decode_run_suspended(checked.payload).suspension_id != checkpoint.id:
        raise InvalidArgumentError("run_suspended SuspensionID must equal checkpoint.id")
    return checked


def check_terminal(
    run_id: str, status: RunStatus | str, record: Record
) -> tuple[RunStatus, NewRecord, payloads.RunCompletedPayload]:
    """Input rules of ``record_run_terminal`` (3.10) that need no stored state."""
    require_id(run_id, "run_id")
    try:
        terminal = RunStatus(status)
    except ValueError:
        raise InvalidArgumentError(f"status {status!r} is not a run status") from None
    if not terminal.is_finished:
        raise InvalidArgumentError("status must be completed, failed or canceled")
    checked = _check_command_record(record, run_id, payloads.RUN_COMPLETED)
    payload = payloads.decode_run_completed(checked.payload)
    if payload.run_status != terminal:
        raise InvalidArgumentError(
            f"run_completed status {payload.status!r} does not mean run status {terminal!r}"
        )
    return terminal, checked, payload
