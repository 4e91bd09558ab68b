"""The contract dataclasses as the generated wire models of requests.

Input that cannot even be sent (an empty path ID, payload bytes that are not UTF-8, a
naive or sub-millisecond time) raises the error the server would, before any request.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .._generated.models import (
    CheckpointBody,
    MemoryEventBody,
    MemoryEventBodyData,
    MemoryEventBodyLabelsType0,
    MemoryEventBodyType,
    RecordBody,
    RunStartBody,
    RunStartBodyLabelsType0,
    SessionRunStartBody,
    SessionRunStartBodyLabelsType0,
)
from .._generated.models import RunStatus as WireRunStatus
from .._generated.types import UNSET, Unset
from ..errors import (
    InvalidArgumentError,
    SessionNotFoundError,
)
from ..times import TimeError, check_time, to_utc
from ..types import (
    MEMORY_EVENT_TYPES,
    Checkpoint,
    MemoryEvent,
    Record,
    RunStart,
    RunStatus,
)

# --- request bodies --------------------------------------------------------------------------


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
    """The run of a sessionless start (one-shot, one-shot child, synchronous)."""
    fields = _run_start_fields(run)
    return RunStartBody(**fields, labels=_labels(run.labels, RunStartBodyLabelsType0))


def session_run_start_body(run: RunStart) -> SessionRunStartBody:
    """The run of a root or child start, whose session the document requires."""
    fields = _run_start_fields(run)
    return SessionRunStartBody(**fields, labels=_labels(run.labels, SessionRunStartBodyLabelsType0))


def _run_start_fields(run: RunStart) -> dict[str, Any]:
    if not isinstance(run, RunStart):
        raise InvalidArgumentError("run must be a RunStart")
    return {
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "session_id": run.session_id,
        "parent_run_id": run.parent_run_id,
        "predecessor_run_id": run.predecessor_run_id,
        "started_at": wire_time(run.started_at, "run.started_at"),
        "seed_end_id": _seed_end_id(run.seed_end_id),
    }


def _seed_end_id(value: str) -> str | Unset:
    """A start's seed (CONTRACT.md 15.5): absent for none."""
    if not isinstance(value, str):
        raise InvalidArgumentError("run.seed_end_id must be a string")
    return value or UNSET


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
    # The document's enum; the server refuses any other type with this message (section 9).
    if event.type not in MEMORY_EVENT_TYPES:
        raise InvalidArgumentError(
            f"{what}.type must be one of {sorted(MEMORY_EVENT_TYPES)}, not {event.type!r}"
        )
    if not isinstance(event.data, Mapping):
        raise InvalidArgumentError(f"{what}.data must be a JSON object")
    try:
        data = json.loads(json.dumps(dict(event.data), allow_nan=False, default=_as_dict))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{what}.data is not JSON: {exc}") from None
    return MemoryEventBody(
        type_=MemoryEventBodyType(event.type),
        timestamp=wire_time(event.timestamp, f"{what}.timestamp"),
        data=MemoryEventBodyData.from_dict(data),
        labels=_labels(event.labels, MemoryEventBodyLabelsType0),
    )


def _as_dict(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


# --- query arguments -------------------------------------------------------------------


def page_args(cursor: str, limit: int) -> dict[str, Any]:
    """A page's query arguments; what the server would refuse, refused here."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidArgumentError("limit must be a positive integer")
    if not isinstance(cursor, str):
        raise InvalidArgumentError("cursor must be a string")
    return {"cursor": cursor, "limit": limit}


def time_args(prefix: str, after: datetime | None, before: datetime | None) -> dict[str, Any]:
    """Only the bounds given: an absent query parameter, never ``null``."""
    args: dict[str, Any] = {}
    if after is not None:
        args[f"{prefix}_after"] = wire_time(after, f"{prefix}_after")
    if before is not None:
        args[f"{prefix}_before"] = wire_time(before, f"{prefix}_before")
    return args


#: Most label filters one search takes (CONTRACT.md 2.10).
MAX_LABEL_FILTERS = 64


def label_args(labels: Mapping[str, str] | None) -> list[str]:
    """``key:value`` query values; the key ends at the first ``:``, so it cannot hold one."""
    if labels is None:
        return []
    if not isinstance(labels, Mapping):
        raise InvalidArgumentError("labels must be a map of strings")
    if len(labels) > MAX_LABEL_FILTERS:  # the service refuses more (CONTRACT.md 2.10)
        raise InvalidArgumentError(
            f"labels: a search takes at most {MAX_LABEL_FILTERS} label filters, not {len(labels)}"
        )
    args = []
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError("labels must map strings to strings")
        if not key or ":" in key:
            raise InvalidArgumentError(
                f"label key {key!r} cannot be searched: it must be non-empty, without ':'"
            )
        args.append(f"{key}:{value}")
    return args
