"""Strict decoding of record payloads (CONTRACT.md sections 1.7 and 5).

Payload bytes are never re-serialised: these decoders only *check* the bytes and extract
the facts the lifecycle rules compare. Lifecycle payloads decode Go-style (a missing key
takes its zero value) but strictly: exactly one JSON value, no unknown or duplicate keys,
no value of the wrong JSON type, no top-level ``null``, valid UTF-8 only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from runtime_store_client import InvalidArgumentError, LifecycleRecordType, RunStatus

from .json_bounds import check_text_depth

RUN_STARTED: Final = LifecycleRecordType.RUN_STARTED.value
CHILD_RUN_LINKED: Final = LifecycleRecordType.CHILD_RUN_LINKED.value
CANCELLATION_INTENT: Final = LifecycleRecordType.CANCELLATION_INTENT.value
RUN_SUSPENDED: Final = LifecycleRecordType.RUN_SUSPENDED.value
RUN_COMPLETED: Final = LifecycleRecordType.RUN_COMPLETED.value

#: Record types only lifecycle operations may write.
LIFECYCLE_TYPES: Final = frozenset(kind.value for kind in LifecycleRecordType)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _DuplicateKeyError(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKeyError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


@dataclass(frozen=True, slots=True)
class HugeInteger:
    """An integer literal too long for Python to convert (more digits than
    ``sys.get_int_max_str_digits()``): valid JSON, kept as its text."""

    text: str


def parse_json(payload: bytes, *, what: str = "payload", allow_duplicates: bool = True) -> Any:
    """Parse exactly one JSON value from UTF-8 bytes, or raise ``invalid_argument``.

    The text is measured before it is parsed: deeper than ``MAX_JSON_DEPTH`` is refused
    without a parse (2.8). An integer with more digits than Python converts is valid JSON:
    it parses as a ``HugeInteger`` (its text), which no typed field accepts.
    """
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError(f"{what} is not valid UTF-8: {exc.reason}") from exc
    check_text_depth(payload, what)
    pairs_hook = None if allow_duplicates else _pairs_without_duplicates
    try:
        try:
            return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=pairs_hook)
        except ValueError as exc:
            if "integer string conversion" not in str(exc):
                raise
            return json.loads(
                text,
                parse_constant=_reject_constant,
                object_pairs_hook=pairs_hook,
                parse_int=_integer_literal,
            )
    except _DuplicateKeyError as exc:
        raise InvalidArgumentError(f"{what} has a {exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise InvalidArgumentError(f"{what} is not a single JSON value: {exc}") from exc


def _integer_literal(text: str) -> int | HugeInteger:
    try:
        return int(text)
    except ValueError:
        return HugeInteger(text)


def check_json_text(payload: bytes) -> None:
    """An ordinary record payload: non-empty, valid UTF-8, exactly one JSON value."""
    if not payload:
        raise InvalidArgumentError("record payload is required")
    parse_json(payload)


# --- typed field readers ---------------------------------------------------------------

_Reader = Callable[[Any, str], Any]


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{path} must be a string")
    return value


def _integer(value: Any, path: str) -> int:
    if isinstance(value, HugeInteger):
        raise InvalidArgumentError(f"{path} is out of the 64-bit integer range")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{path} must be an integer")
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise InvalidArgumentError(f"{path} is out of the 64-bit integer range")
    return value


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{path} must be a boolean")
    return value


def _labels_or_null(value: Any, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{path} must be an object of strings or null")
    for key, item in value.items():
        _string(item, f"{path}.{key}")
    return dict(value)


def _strings_or_null(value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidArgumentError(f"{path} must be an array of strings or null")
    return [_string(item, f"{path}[{index}]") for index, item in enumerate(value)]


def _object(value: Any, path: str, fields: Mapping[str, _Reader]) -> dict[str, Any]:
    """Read a strict object: unknown keys rejected, missing keys left out."""
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{path} must be a JSON object")
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise InvalidArgumentError(f"{path} has unknown key {unknown[0]!r}")
    return {key: fields[key](item, f"{path}.{key}") for key, item in value.items()}


def _decode_lifecycle(payload: bytes, record_type: str) -> Any:
    if not payload:
        raise InvalidArgumentError(f"{record_type} payload is required")
    value = parse_json(payload, what=f"{record_type} payload", allow_duplicates=False)
    if value is None:
        raise InvalidArgumentError(f"{record_type} payload must not be null")
    return value


# --- lifecycle payloads ----------------------------------------------------------------


@dataclass(frozen=True)
class RunStartedPayload:
    parent_run_id: str
    predecessor_run_id: str
    labels: dict[str, str]


def decode_run_started(payload: bytes) -> RunStartedPayload:
    obj = _object(
        _decode_lifecycle(payload, RUN_STARTED),
        RUN_STARTED,
        {"ParentRunID": _string, "PredecessorRunID": _string, "Labels": _labels_or_null},
    )
    return RunStartedPayload(
        parent_run_id=obj.get("ParentRunID", ""),
        predecessor_run_id=obj.get("PredecessorRunID", ""),
        labels=obj.get("Labels", {}),
    )


@dataclass(frozen=True)
class ChildRunLinkedPayload:
    tool_name: str
    tool_call_id: str
    child_run_id: str
    child_agent_id: str


def decode_child_run_linked(payload: bytes) -> ChildRunLinkedPayload:
    obj = _object(
        _decode_lifecycle(payload, CHILD_RUN_LINKED),
        CHILD_RUN_LINKED,
        {
            "ToolName": _string,
            "ToolCallID": _string,
            "ChildRunID": _string,
            "ChildAgentID": _string,
        },
    )
    return ChildRunLinkedPayload(
        tool_name=obj.get("ToolName", ""),
        tool_call_id=obj.get("ToolCallID", ""),
        child_run_id=obj.get("ChildRunID", ""),
        child_agent_id=obj.get("ChildAgentID", ""),
    )


@dataclass(frozen=True)
class RunSuspendedPayload:
    suspension_id: str
    version: str
    pending_count: int
    required_tools: list[str]


def decode_run_suspended(payload: bytes) -> RunSuspendedPayload:
    obj = _object(
        _decode_lifecycle(payload, RUN_SUSPENDED),
        RUN_SUSPENDED,
        {
            "SuspensionID": _string,
            "Version": _string,
            "PendingCount": _integer,
            "RequiredTools": _strings_or_null,
        },
    )
    return RunSuspendedPayload(
        suspension_id=obj.get("SuspensionID", ""),
        version=obj.get("Version", ""),
        pending_count=obj.get("PendingCount", 0),
        required_tools=obj.get("RequiredTools", []),
    )


_FAILURE_FIELDS: Final[Mapping[str, _Reader]] = {
    "message": _string,
    "kind": _string,
    "debug_message": _string,
    "provider": _string,
    "operation": _string,
    "code": _string,
    "http_status": _integer,
    "retryable": _boolean,
}

#: ``run_completed`` payload status → run status (the phase must equal the run status).
COMPLETED_STATUS_TO_RUN_STATUS: Final[Mapping[str, RunStatus]] = {
    "success": RunStatus.COMPLETED,
    "failed": RunStatus.FAILED,
    "canceled": RunStatus.CANCELED,
}


def _failure(value: Any, path: str) -> dict[str, Any]:
    failure = _object(value, path, _FAILURE_FIELDS)
    for required in ("message", "kind"):
        if not failure.get(required):
            raise InvalidArgumentError(f"{path}.{required} is required")
    return failure


def _cancellation(value: Any, path: str) -> str:
    reason: str = _object(value, path, {"reason": _string}).get("reason", "")
    if not reason:
        raise InvalidArgumentError(f"{path}.reason is required")
    return reason


@dataclass(frozen=True)
class RunCompletedPayload:
    status: str
    phase: str
    run_status: RunStatus
    cancellation_reason: str
    labels: dict[str, str] = field(default_factory=dict)


def decode_run_completed(payload: bytes) -> RunCompletedPayload:
    obj = _object(
        _decode_lifecycle(payload, RUN_COMPLETED),
        RUN_COMPLETED,
        {
            "status": _string,
            "phase": _string,
            "failure": _failure,
            "cancellation": _cancellation,
            "labels": _labels_or_null,
        },
    )
    status: str = obj.get("status", "")
    run_status = COMPLETED_STATUS_TO_RUN_STATUS.get(status)
    if run_status is None:
        raise InvalidArgumentError(
            f"run_completed status must be success, failed or canceled, not {status!r}"
        )
    phase: str = obj.get("phase", "")
    if phase != run_status:
        raise InvalidArgumentError(
            f"run_completed phase must be {run_status.value!r} for status {status!r}, not {phase!r}"
        )
    if ("failure" in obj) != (run_status is RunStatus.FAILED):
        raise InvalidArgumentError("run_completed failure is required iff status is failed")
    if ("cancellation" in obj) != (run_status is RunStatus.CANCELED):
        raise InvalidArgumentError("run_completed cancellation is required iff status is canceled")
    return RunCompletedPayload(
        status=status,
        phase=phase,
        run_status=run_status,
        cancellation_reason=obj.get("cancellation", ""),
        labels=obj.get("labels", {}),
    )


def decode_cancellation_intent(payload: bytes) -> str:
    """The ``reason`` of a ``runtime.cancellation_intent`` payload (other keys ignored)."""
    value = _decode_lifecycle(payload, CANCELLATION_INTENT)
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{CANCELLATION_INTENT} payload must be a JSON object")
    return _string(value.get("reason", ""), f"{CANCELLATION_INTENT}.reason")
