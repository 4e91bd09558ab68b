"""What the console's templates show, shaped from the API's answers (the client's types).

Nothing here trusts a payload: values reach the templates as text and Jinja2 escapes
them (autoescape on); images and documents are described, never decoded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from runtime_store_client import (
    InvalidTranscriptError,
    LifecycleRecordType,
    Record,
    TranscriptViolation,
)
from runtime_store_client.times import format_rfc3339
from runtime_store_client.transcript import decode_messages, encode_message

#: Payloads up to this many bytes are shown open in the timeline.
OPEN_PAYLOAD_BYTES: Final = 600

_LOCAL_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?")


def api_time(value: str) -> str:
    """A ``datetime-local`` form value (taken as UTC) as the API's RFC 3339 time; any
    other text unchanged, for the API to accept or refuse."""
    value = value.strip()
    if not _LOCAL_TIME.fullmatch(value):
        return value
    date_time, _, fraction = value.partition(".")
    if date_time.count(":") == 1:
        date_time += ":00"
    return f"{date_time}.{fraction.ljust(3, '0')}Z"


class _Unfaithful(ValueError):
    """Re-indented, the text would not show what the payload holds."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Unfaithful("a duplicate key would be dropped")
    return obj


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unfaithful(f"{text} would read as {value}")
    return value


def _reject_constant(name: str) -> Any:
    raise _Unfaithful(f"{name} is not JSON")


def parse_payload(text: str) -> Any:
    """The value of a payload's JSON text: ``ValueError`` for text that is not one JSON
    value, or a value that re-indented would not read as the text does (a duplicate key,
    a number beyond floating point, ``NaN``), or nested past what the console can walk.

    The API accepts nothing nested deeper than 128 (CONTRACT.md 2.8); a payload stored
    before that bound may be deeper, and is then shown as it is.
    """
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_pairs,
            parse_float=_finite,
            parse_constant=_reject_constant,
        )
    except RecursionError as exc:
        raise ValueError("nested too deep to show indented") from exc


def showable(text: str) -> str:
    """``text`` with each lone surrogate written as its JSON escape (``\\ud83d``): a
    payload may hold one escaped (CONTRACT.md 2.8), decoded it is text no UTF-8 page can
    carry. Every other character is unchanged."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def pretty_json(text: str) -> str:
    """JSON text indented for reading; any other text (or JSON that re-indenting could
    not show faithfully, ``parse_payload``) exactly as it is. A lone surrogate the payload
    holds escaped stays escaped."""
    try:
        pretty = json.dumps(parse_payload(text), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return text
    return showable(pretty)


def _shown(value: Any) -> Any:
    """A decoded value with its strings made showable (lone surrogates escaped)."""
    if isinstance(value, str):
        return showable(value)
    if isinstance(value, dict):
        return {showable(key): _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def base64_size(text: str | None) -> int:
    """Bytes a base64 text decodes to, counted without decoding it."""
    if not text:
        return 0
    stripped = text.rstrip("=")
    return len(stripped) * 3 // 4


def human_bytes(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


@dataclass
class RecordView:
    id: str
    type: str
    run_id: str
    event_key: str
    turn_id: str
    timestamp: str
    payload: str
    size: int

    @property
    def open(self) -> bool:
        return self.size <= OPEN_PAYLOAD_BYTES

    @classmethod
    def of(cls, record: Record) -> RecordView:
        payload = record.payload.decode()
        return cls(
            id=record.id,
            type=record.type,
            run_id=record.run_id,
            event_key=record.event_key,
            turn_id=record.turn_id,
            timestamp=format_rfc3339(record.timestamp),
            payload=pretty_json(payload),
            size=len(record.payload),
        )


#: Record types a timeline's filter always offers: the lifecycle types and the ordinary
#: types the runtime writes (CONTRACT.md 1.7); the types on the page are added.
KNOWN_RECORD_TYPES: Final = (
    *(kind.value for kind in LifecycleRecordType),
    "prompt_rendered",
    "transcript_messages_seeded",
    "transcript_messages_appended",
    "tool_call_scheduled",
    "tool_result_received",
    "planner_note",
    "usage",
)


def record_types(selected: Iterable[str], records: Iterable[RecordView]) -> list[str]:
    """The types a timeline's filter offers: the known ones, then those selected or on
    the page, in that order, each once."""
    return list(dict.fromkeys((*KNOWN_RECORD_TYPES, *sorted(selected), *(r.type for r in records))))


def run_facts(records: list[Record]) -> dict[str, Any]:
    """What a run's meta lacks but its lifecycle records say: the predecessor (in
    ``run_started``) and the final outcome (``run_completed``), when among ``records``."""
    facts: dict[str, Any] = {"predecessor_run_id": "", "outcome": None}
    for record in records:
        try:
            payload = _shown(parse_payload(record.payload.decode()))
        except (ValueError, RecursionError):
            continue
        if not isinstance(payload, dict):
            continue
        if record.type == LifecycleRecordType.RUN_STARTED:
            facts["predecessor_run_id"] = str(payload.get("PredecessorRunID") or "")
        elif record.type == LifecycleRecordType.RUN_COMPLETED:
            facts["outcome"] = {
                "status": str(payload.get("status", "")),
                "failure": payload.get("failure")
                if isinstance(payload.get("failure"), dict)
                else None,
                "cancellation": payload.get("cancellation")
                if isinstance(payload.get("cancellation"), dict)
                else None,
            }
    return facts


# --- transcripts -----------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Finding:
    validator: str
    rule: str
    message: str


@dataclass
class MessageView:
    index: int
    role: str
    parts: list[dict[str, Any]]
    findings: list[Finding] = field(default_factory=list)


def _part_view(part: dict[str, Any]) -> dict[str, Any]:
    """A part as the template shows it: untrusted text stays text, bytes become sizes."""
    kind = part.get("kind")
    view = dict(part)
    if kind == "image":
        view["size"] = human_bytes(base64_size(part.get("bytes")))
        view.pop("bytes", None)
    elif kind == "document":
        if part.get("bytes"):
            view["source"] = f"{human_bytes(base64_size(part.get('bytes')))} of bytes"
        elif part.get("chunks"):
            view["source"] = f"{len(part['chunks'])} text chunk(s)"
        elif part.get("uri"):
            view["source"] = f"at {part['uri']}"
        else:
            view["source"] = f"{len(str(part.get('text', '')))} characters of text"
        view.pop("bytes", None)
    elif kind == "thinking":
        view["redacted_size"] = human_bytes(base64_size(part.get("redacted")))
    elif kind == "tool_use":
        view["input_text"] = json.dumps(part.get("input"), indent=2, ensure_ascii=False)
    elif kind == "tool_result":
        view["content_text"] = (
            part["content"]
            if isinstance(part.get("content"), str)
            else json.dumps(part.get("content"), indent=2, ensure_ascii=False)
        )
    return view


def conversation(
    messages: list[dict[str, Any]], offset: int, findings: dict[int, list[Finding]]
) -> list[MessageView]:
    """Messages numbered from ``offset`` (their index in the whole transcript), each
    ``tool_use`` paired with its ``tool_result`` by the model's tool-use ID."""
    views = [
        MessageView(
            index=offset + number,
            role=str(message.get("role", "")),
            parts=[_part_view(part) for part in message.get("parts") or []],
            findings=findings.get(offset + number, []),
        )
        for number, message in enumerate(messages)
    ]
    calls: dict[str, tuple[MessageView, dict[str, Any]]] = {}
    for view in views:
        for part in view.parts:
            if part.get("kind") == "tool_use" and part.get("id"):
                calls.setdefault(str(part["id"]), (view, part))
            elif part.get("kind") == "tool_result":
                call = calls.get(str(part.get("tool_use_id", "")))
                if call is not None:
                    call[1].setdefault("results", []).append({**part, "message": view.index})
                    part["call_message"] = call[0].index
    return views


def transcript_messages(records: list[Record]) -> list[dict[str, Any]]:
    """The messages of transcript records (as a page carries them), in order, each as the
    API's transcript answers it. ``InvalidTranscriptError`` names the record whose payload
    is not a message array (CONTRACT.md 10.3)."""
    messages: list[dict[str, Any]] = []
    for record in records:
        try:
            decoded = decode_messages(record.payload)
        except InvalidTranscriptError as exc:
            raise InvalidTranscriptError(
                f"record {record.event_key!r} (ID {record.id}): {exc.message}",
                run_id=record.run_id,
                event_key=record.event_key,
                violations=exc.violations,
            ) from exc
        messages += [encode_message(message) for message in decoded]
    return messages


def findings_by_message(
    checks: dict[str, list[TranscriptViolation]],
) -> dict[int, list[Finding]]:
    """Violations of each validator by the message index they name (-1: the whole)."""
    found: dict[int, list[Finding]] = {}
    for validator, violations in checks.items():
        for violation in violations:
            found.setdefault(violation.index, []).append(
                Finding(validator, violation.rule, violation.message)
            )
    return found


def thinking_used(messages: list[dict[str, Any]]) -> bool:
    """Whether any message holds a thinking part: the model ran with thinking enabled."""
    return any(
        part.get("kind") == "thinking"
        for message in messages
        for part in message.get("parts") or []
    )
