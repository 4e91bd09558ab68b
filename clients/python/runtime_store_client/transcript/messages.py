"""The strict JSON codec of transcript messages (CONTRACT.md 10.1 and 10.2).

A transcript record's payload is a JSON array of messages. :func:`decode_messages` reads
it strictly: every listed key present, unknown keys and kinds rejected (case-sensitive),
values of the wrong JSON type rejected, duplicate keys rejected, base64 canonical, and
every rule of the 10.2 table applied. :func:`encode_messages` writes every key in the
documented shape, so ``encode_messages(decode_messages(payload))`` is JSON-equal to
``payload``, with one documented normalisation: ``"parts": null`` (which means *no
parts*) decodes to ``[]`` and encodes back as ``[]``.

A part's keys and their JSON types are not written here: each part class's fields (see
:mod:`.model`) give its keys, in order, and each field's type how its value is read and
written (:mod:`._fields`).

Errors: every decoding or encoding failure raises
:class:`~runtime_store_client.InvalidTranscriptError` (code ``invalid_transcript``, HTTP
422) carrying exactly one :class:`TranscriptViolation` whose ``rule`` is a
:class:`TranscriptRule` and whose message starts with the JSON path of the offending value
(``$[2].parts[0].input: must be a JSON object, got array``). Nothing else escapes.
Not ``invalid_argument``: the store accepted these payloads as opaque JSON (1.7), so no
argument of any store call was wrong; what breaks a rule is the transcript, which is what
``invalid_transcript`` names. One class also lets a worker catch every transcript problem
(decoding, replay, validation) at once, each with its structured violations.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from typing import Any, get_args

from ._fields import keys_of, read_enum, read_fields, write_fields
from ._json import fail, json_type, json_value, parse_json_text, require_object
from .model import DocumentPart, JSONValue, Message, Part, Role
from .violations import TranscriptRule

#: Every part class, in the order of the ``Part`` union; the encoder tries them in turn.
_PART_TYPES: tuple[type[Part], ...] = get_args(Part)
_PART_BY_KIND: dict[str, type[Part]] = {cls.kind: cls for cls in _PART_TYPES}
#: ``kind`` is a class variable, not a field: its key comes first.
_PART_KEYS: dict[str, tuple[str, ...]] = {
    kind: ("kind", *keys_of(cls)) for kind, cls in _PART_BY_KIND.items()
}
# A message is read by hand below (``"parts": null`` means no parts, and both containers'
# types are checked before any part), but its keys are its fields all the same.
_MESSAGE_KEYS = tuple(field.name for field in dataclasses.fields(Message))

#: The sources of a document, of which exactly one is given (10.2).
_DOCUMENT_SOURCES = ("bytes", "text", "chunks", "uri")


def _check_document(part: Part, path: str, index: int) -> None:
    sources = [source for source in _DOCUMENT_SOURCES if getattr(part, source)]
    if len(sources) != 1:
        found = ", ".join(sources) or "none"
        fail(
            index,
            TranscriptRule.DOCUMENT_SOURCE_COUNT,
            path,
            f"exactly one of {', '.join(_DOCUMENT_SOURCES)} must be given (found: {found})",
        )


#: Rules of a part that span its fields, checked once every field is read.
_PART_CHECKS: dict[type[Part], Callable[[Part, str, int], None]] = {
    DocumentPart: _check_document,
}

# --- decoding -------------------------------------------------------------------------


def _decode_part(value: Any, path: str, index: int) -> Part:
    if not isinstance(value, dict):
        fail(index, TranscriptRule.WRONG_TYPE, path, f"must be an object, got {json_type(value)}")
    if "kind" not in value:
        fail(index, TranscriptRule.MISSING_KEY, path, "missing key 'kind'")
    kind = value["kind"]
    if not isinstance(kind, str):
        fail(
            index,
            TranscriptRule.WRONG_TYPE,
            f"{path}.kind",
            f"must be a string, got {json_type(kind)}",
        )
    cls = _PART_BY_KIND.get(kind)
    if cls is None:
        fail(index, TranscriptRule.UNKNOWN_KIND, f"{path}.kind", f"unknown part kind {kind!r}")
    obj = require_object(value, path, index, _PART_KEYS[kind])
    part = read_fields(cls, obj, path, index)
    check = _PART_CHECKS.get(cls)
    if check is not None:
        check(part, path, index)
    return part


def _decode_message(value: Any, path: str, index: int) -> Message:
    obj = require_object(value, path, index, _MESSAGE_KEYS)
    role = read_enum(Role, obj["role"], f"{path}.role", index)
    raw_parts = obj["parts"]
    parts_path = f"{path}.parts"
    if raw_parts is None:
        raw_parts = []
    elif not isinstance(raw_parts, list):
        fail(
            index,
            TranscriptRule.WRONG_TYPE,
            parts_path,
            f"must be an array or null, got {json_type(raw_parts)}",
        )
    meta = obj["meta"]
    if meta is not None and not isinstance(meta, dict):
        fail(
            index,
            TranscriptRule.WRONG_TYPE,
            f"{path}.meta",
            f"must be an object or null, got {json_type(meta)}",
        )
    parts = [_decode_part(part, f"{parts_path}[{i}]", index) for i, part in enumerate(raw_parts)]
    return Message(role=role, parts=parts, meta=json_value(meta, f"{path}.meta", index))


def decode_message(obj: Any) -> Message:
    """Decode one parsed JSON message object (paths are rooted at ``$``, index 0)."""
    try:
        return _decode_message(obj, "$", 0)
    except RecursionError:
        fail(0, TranscriptRule.INVALID_JSON, "$", "nesting too deep")


def decode_messages(payload: bytes) -> list[Message]:
    """Decode a transcript record payload: UTF-8 JSON text holding an array of messages.

    Raises :class:`~runtime_store_client.InvalidTranscriptError` naming the JSON path and
    the rule broken; the violation's index is the message's position (``-1`` when the
    payload itself is wrong).
    """
    value = parse_json_text(payload)
    if not isinstance(value, list):
        fail(
            -1,
            TranscriptRule.WRONG_TYPE,
            "$",
            f"must be an array of messages, got {json_type(value)}",
        )
    try:
        return [_decode_message(item, f"$[{i}]", i) for i, item in enumerate(value)]
    except RecursionError:
        fail(-1, TranscriptRule.INVALID_JSON, "$", "nesting too deep")


# --- encoding -------------------------------------------------------------------------


def _part_json(part: Part, path: str, index: int) -> dict[str, Any]:
    # isinstance, not the exact type: a subclass of a part encodes as that part.
    cls = next((cls for cls in _PART_TYPES if isinstance(part, cls)), None)
    if cls is None:
        fail(
            index,
            TranscriptRule.UNKNOWN_KIND,
            path,
            f"not a transcript part: {type(part).__name__}",
        )
    return {"kind": cls.kind, **write_fields(cls, part, path, index)}


def _encode_message(message: Message, path: str, index: int) -> dict[str, Any]:
    if not isinstance(message, Message):
        fail(index, TranscriptRule.WRONG_TYPE, path, f"not a Message: {type(message).__name__}")
    parts_path = f"{path}.parts"
    if not isinstance(message.parts, list | tuple):
        fail(index, TranscriptRule.WRONG_TYPE, parts_path, "must be a list of parts")
    obj = {
        "role": str(message.role),
        "parts": [
            _part_json(part, f"{parts_path}[{i}]", index) for i, part in enumerate(message.parts)
        ],
        "meta": json_value(message.meta, f"{path}.meta", index),
    }
    # The encoder never writes what the decoder would reject.
    _decode_message(obj, path, index)
    return obj


def encode_message(message: Message) -> dict[str, JSONValue]:
    """The JSON object of one message, every documented key present.

    Raises :class:`~runtime_store_client.InvalidTranscriptError` when the message breaks a
    rule of 10.1/10.2 (the same checks :func:`decode_message` applies).
    """
    try:
        return _encode_message(message, "$", 0)
    except RecursionError:
        fail(0, TranscriptRule.INVALID_JSON, "$", "nesting too deep")


def encode_messages(messages: Iterable[Message]) -> bytes:
    """A transcript record payload: compact UTF-8 JSON text of the array of messages."""
    try:
        array = [_encode_message(m, f"$[{i}]", i) for i, m in enumerate(messages)]
        text = json.dumps(array, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except RecursionError:
        fail(-1, TranscriptRule.INVALID_JSON, "$", "nesting too deep")
    return text.encode("utf-8")
