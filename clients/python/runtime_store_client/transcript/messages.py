"""Transcript messages (CONTRACT.md 10.1 and 10.2) and their strict JSON codec.

A transcript record's payload is a JSON array of messages. :func:`decode_messages` reads
it strictly: every listed key present, unknown keys and kinds rejected (case-sensitive),
values of the wrong JSON type rejected, duplicate keys rejected, base64 canonical, and
every rule of the 10.2 table applied. :func:`encode_messages` writes every key in the
documented shape, so ``encode_messages(decode_messages(payload))`` is JSON-equal to
``payload``, with one documented normalisation: ``"parts": null`` (which means *no
parts*) decodes to ``[]`` and encodes back as ``[]``.

Errors: every decoding or encoding failure raises
:class:`~runtime_store_client.InvalidTranscriptError` (code ``invalid_transcript``, HTTP
422) carrying exactly one :class:`TranscriptViolation` whose ``rule`` is a
:class:`TranscriptRule` and whose message starts with the JSON path of the offending value
(``$[2].parts[0].input: must be a JSON object, got array``). Nothing else escapes.
Not ``invalid_argument``: the store accepted these payloads as opaque JSON (1.7), so no
argument of any store call was wrong; what breaks a rule is the transcript, which is what
``invalid_transcript`` names. One class also lets a worker catch every transcript problem
(decoding, replay, validation) at once, each with its structured violations.

Base64 fields are ``bytes`` (``None`` for JSON ``null`` where null is allowed, so ``""``
and ``null`` stay distinct); JSON-valued fields (``input``, ``content``, ``meta``) are
plain Python JSON values (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``,
``None``).
"""

from __future__ import annotations

import base64
import builtins
import enum
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NoReturn, TypeAlias

from ..errors import InvalidTranscriptError
from .violations import TranscriptRule, TranscriptViolation

#: A JSON value as Python holds it: ``dict[str, JSONValue]``, ``list[JSONValue]``,
#: ``str``, ``int``, ``float`` (finite), ``bool`` or ``None``.
JSONValue: TypeAlias = Any

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


class Role(enum.StrEnum):
    """The speaker of a message (10.1)."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


class ImageFormat(enum.StrEnum):
    PNG = "png"
    JPEG = "jpeg"
    GIF = "gif"
    WEBP = "webp"


class DocumentFormat(enum.StrEnum):
    PDF = "pdf"
    CSV = "csv"
    DOC = "doc"
    DOCX = "docx"
    XLS = "xls"
    XLSX = "xlsx"
    HTML = "html"
    TXT = "txt"
    MD = "md"


# --- parts ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TextPart:
    """Visible text."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(frozen=True, kw_only=True)
class ThinkingPart:
    """Provider reasoning: plaintext with a signature, or redacted bytes."""

    kind: ClassVar[str] = "thinking"
    text: str = ""
    signature: str = ""
    redacted: builtins.bytes | None = None
    index: int = 0
    final: bool = False


@dataclass(frozen=True, kw_only=True)
class ImagePart:
    """Image bytes in one of the :class:`ImageFormat` formats; bytes must be non-empty."""

    kind: ClassVar[str] = "image"
    format: ImageFormat
    bytes: builtins.bytes


@dataclass(frozen=True, kw_only=True)
class DocumentPart:
    """A document: ``name`` required and exactly one of bytes, text, chunks and uri."""

    kind: ClassVar[str] = "document"
    name: str
    format: DocumentFormat
    bytes: builtins.bytes | None = None
    text: str = ""
    chunks: list[str] | None = None
    uri: str = ""
    context: str = ""
    cite: bool = False


@dataclass(frozen=True, kw_only=True)
class DocumentLocation:
    """A span in a source document: characters, chunks or pages depending on its slot."""

    document_index: int = 0
    start: int = 0
    end: int = 0


@dataclass(frozen=True, kw_only=True)
class CitationLocation:
    """Where cited content lies; each slot is ``None`` (JSON null) or a location."""

    document_char: DocumentLocation | None = None
    document_chunk: DocumentLocation | None = None
    document_page: DocumentLocation | None = None


@dataclass(frozen=True, kw_only=True)
class Citation:
    """A link from generated text to a source document.

    ``source_content`` is the cited excerpt as an array of strings; ``None`` is JSON
    ``null`` (the contract leaves its type open; this follows the Goa-AI model).
    """

    title: str = ""
    source: str = ""
    location: CitationLocation = field(default_factory=CitationLocation)
    source_content: list[str] | None = None


@dataclass(frozen=True, kw_only=True)
class CitationsPart:
    """Generated text with its citations (``citations`` is always a JSON array)."""

    kind: ClassVar[str] = "citations"
    text: str = ""
    citations: list[Citation] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class ToolUsePart:
    """A tool call by the model; ``id`` is the model's tool-call ID, ``input`` an object."""

    kind: ClassVar[str] = "tool_use"
    id: str
    name: str
    input: dict[str, JSONValue] = field(default_factory=dict)
    thought_signature: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolResultPart:
    """The result of the tool call whose model ID is ``tool_use_id``."""

    kind: ClassVar[str] = "tool_result"
    tool_use_id: str
    content: JSONValue = None
    is_error: bool = False


@dataclass(frozen=True, kw_only=True)
class CacheCheckpointPart:
    """A prompt-cache boundary marker."""

    kind: ClassVar[str] = "cache_checkpoint"


Part: TypeAlias = (
    TextPart
    | ThinkingPart
    | ImagePart
    | DocumentPart
    | CitationsPart
    | ToolUsePart
    | ToolResultPart
    | CacheCheckpointPart
)


@dataclass(frozen=True, kw_only=True)
class Message:
    """One transcript message: a role, ordered parts and optional metadata (10.1)."""

    role: Role
    parts: list[Part] = field(default_factory=list)
    meta: dict[str, JSONValue] | None = None


# --- failures -------------------------------------------------------------------------


def _fail(index: int, rule: TranscriptRule, path: str, text: str) -> NoReturn:
    violation = TranscriptViolation(index, str(rule), f"{path}: {text}")
    raise InvalidTranscriptError(violations=[violation])


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return f"a Python {type(value).__name__} (not JSON)"


# --- JSON text ------------------------------------------------------------------------


class _JSONObject(dict[str, Any]):
    """A parsed JSON object that remembers the keys it saw more than once."""

    duplicates: tuple[str, ...] = ()


def _object_pairs(pairs: list[tuple[str, Any]]) -> _JSONObject:
    obj = _JSONObject()
    duplicates: list[str] = []
    for key, value in pairs:
        if key in obj:
            duplicates.append(key)
        obj[key] = value
    if duplicates:
        obj.duplicates = tuple(duplicates)
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def _parse(payload: bytes) -> Any:
    if not isinstance(payload, bytes | bytearray | memoryview):
        _fail(
            -1, TranscriptRule.WRONG_TYPE, "$", f"payload must be bytes, got {_json_type(payload)}"
        )
    try:
        text = bytes(payload).decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(-1, TranscriptRule.INVALID_JSON, "$", f"not valid UTF-8: {exc.reason}")
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_pairs,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except RecursionError:
        _fail(-1, TranscriptRule.INVALID_JSON, "$", "nesting too deep")
    except ValueError as exc:
        _fail(-1, TranscriptRule.INVALID_JSON, "$", f"not exactly one JSON value: {exc}")


# --- value readers --------------------------------------------------------------------


def _check_string(value: str, path: str, index: int) -> str:
    if _SURROGATE.search(value):
        _fail(index, TranscriptRule.INVALID_STRING, path, "string holds an unpaired surrogate")
    return value


def _json_value(value: Any, path: str, index: int) -> JSONValue:
    """Check an arbitrary JSON value and return a plain copy of it."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            _fail(index, TranscriptRule.INVALID_JSON, path, "number is not finite")
        return value
    if isinstance(value, str):
        return _check_string(value, path, index)
    if isinstance(value, list):
        return [_json_value(item, f"{path}[{i}]", index) for i, item in enumerate(value)]
    if isinstance(value, dict):
        duplicates = getattr(value, "duplicates", ())
        if duplicates:
            _fail(index, TranscriptRule.DUPLICATE_KEY, path, f"duplicate key {duplicates[0]!r}")
        out: dict[str, JSONValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                _fail(index, TranscriptRule.WRONG_TYPE, path, f"object key {key!r} is not a string")
            _check_string(key, path, index)
            out[key] = _json_value(item, f"{path}.{key}", index)
        return out
    _fail(index, TranscriptRule.WRONG_TYPE, path, f"not a JSON value: {_json_type(value)}")


def _object(value: Any, path: str, index: int, keys: Iterable[str]) -> Mapping[str, Any]:
    """An object with exactly ``keys``: none missing, none unknown, none repeated."""
    if not isinstance(value, dict):
        _fail(index, TranscriptRule.WRONG_TYPE, path, f"must be an object, got {_json_type(value)}")
    duplicates = getattr(value, "duplicates", ())
    if duplicates:
        _fail(index, TranscriptRule.DUPLICATE_KEY, path, f"duplicate key {duplicates[0]!r}")
    expected = tuple(keys)
    for key in value:
        if key not in expected:
            _fail(index, TranscriptRule.UNKNOWN_KEY, path, f"unknown key {key!r}")
    for key in expected:
        if key not in value:
            _fail(index, TranscriptRule.MISSING_KEY, path, f"missing key {key!r}")
    return value


def _string(obj: Mapping[str, Any], key: str, path: str, index: int) -> str:
    value = obj[key]
    where = f"{path}.{key}"
    if not isinstance(value, str):
        _fail(index, TranscriptRule.WRONG_TYPE, where, f"must be a string, got {_json_type(value)}")
    return _check_string(value, where, index)


def _required(obj: Mapping[str, Any], key: str, path: str, index: int, rule: TranscriptRule) -> str:
    value = _string(obj, key, path, index)
    if not value:
        _fail(index, rule, f"{path}.{key}", "must be non-empty")
    return value


def _bool(obj: Mapping[str, Any], key: str, path: str, index: int) -> bool:
    value = obj[key]
    if not isinstance(value, bool):
        _fail(
            index,
            TranscriptRule.WRONG_TYPE,
            f"{path}.{key}",
            f"must be a boolean, got {_json_type(value)}",
        )
    return value


def _int(obj: Mapping[str, Any], key: str, path: str, index: int) -> int:
    value = obj[key]
    where = f"{path}.{key}"
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(
            index, TranscriptRule.WRONG_TYPE, where, f"must be an integer, got {_json_type(value)}"
        )
    if not _INT64_MIN <= value <= _INT64_MAX:
        _fail(index, TranscriptRule.INTEGER_RANGE, where, "integer out of the signed 64-bit range")
    return value


def _base64(obj: Mapping[str, Any], key: str, path: str, index: int, *, nullable: bool) -> Any:
    value = obj[key]
    where = f"{path}.{key}"
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        wanted = "a base64 string or null" if nullable else "a base64 string"
        _fail(index, TranscriptRule.WRONG_TYPE, where, f"must be {wanted}, got {_json_type(value)}")
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except ValueError:
        raw = None
    if raw is None or base64.b64encode(raw).decode("ascii") != value:
        _fail(index, TranscriptRule.INVALID_BASE64, where, "not canonical standard base64")
    return raw


def _enum(
    obj: Mapping[str, Any],
    key: str,
    path: str,
    index: int,
    *,
    enum_type: type[enum.StrEnum],
    rule: TranscriptRule,
) -> Any:
    value = _string(obj, key, path, index)
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum_type)
        _fail(index, rule, f"{path}.{key}", f"{value!r} is not one of {allowed}")


def _string_list(
    obj: Mapping[str, Any], key: str, path: str, index: int, *, non_empty: TranscriptRule | None
) -> list[str] | None:
    value = obj[key]
    where = f"{path}.{key}"
    if value is None:
        return None
    if not isinstance(value, list):
        _fail(
            index,
            TranscriptRule.WRONG_TYPE,
            where,
            f"must be an array of strings or null, got {_json_type(value)}",
        )
    out: list[str] = []
    for i, item in enumerate(value):
        item_path = f"{where}[{i}]"
        if not isinstance(item, str):
            _fail(
                index,
                TranscriptRule.WRONG_TYPE,
                item_path,
                f"must be a string, got {_json_type(item)}",
            )
        if non_empty is not None and not item:
            _fail(index, non_empty, item_path, "must be non-empty")
        out.append(_check_string(item, item_path, index))
    return out


# --- decoding -------------------------------------------------------------------------

_PART_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("kind", "text"),
    "thinking": ("kind", "text", "signature", "redacted", "index", "final"),
    "image": ("kind", "format", "bytes"),
    "document": ("kind", "name", "format", "bytes", "text", "chunks", "uri", "context", "cite"),
    "citations": ("kind", "text", "citations"),
    "tool_use": ("kind", "id", "name", "input", "thought_signature"),
    "tool_result": ("kind", "tool_use_id", "content", "is_error"),
    "cache_checkpoint": ("kind",),
}
_MESSAGE_KEYS = ("role", "parts", "meta")
_CITATION_KEYS = ("title", "source", "location", "source_content")
_LOCATION_KEYS = ("document_char", "document_chunk", "document_page")
_SPAN_KEYS = ("document_index", "start", "end")


def _text(obj: Mapping[str, Any], path: str, index: int) -> Part:
    return TextPart(text=_string(obj, "text", path, index))


def _thinking(obj: Mapping[str, Any], path: str, index: int) -> Part:
    return ThinkingPart(
        text=_string(obj, "text", path, index),
        signature=_string(obj, "signature", path, index),
        redacted=_base64(obj, "redacted", path, index, nullable=True),
        index=_int(obj, "index", path, index),
        final=_bool(obj, "final", path, index),
    )


def _image(obj: Mapping[str, Any], path: str, index: int) -> Part:
    image_format = _enum(
        obj, "format", path, index, enum_type=ImageFormat, rule=TranscriptRule.IMAGE_FORMAT
    )
    data: builtins.bytes = _base64(obj, "bytes", path, index, nullable=False)
    if not data:
        _fail(index, TranscriptRule.IMAGE_BYTES_EMPTY, f"{path}.bytes", "image bytes are required")
    return ImagePart(format=image_format, bytes=data)


def _document(obj: Mapping[str, Any], path: str, index: int) -> Part:
    name = _required(obj, "name", path, index, TranscriptRule.DOCUMENT_NAME_EMPTY)
    doc_format = _enum(
        obj, "format", path, index, enum_type=DocumentFormat, rule=TranscriptRule.DOCUMENT_FORMAT
    )
    data: builtins.bytes | None = _base64(obj, "bytes", path, index, nullable=True)
    text = _string(obj, "text", path, index)
    chunks = _string_list(obj, "chunks", path, index, non_empty=TranscriptRule.DOCUMENT_CHUNK_EMPTY)
    uri = _string(obj, "uri", path, index)
    context = _string(obj, "context", path, index)
    cite = _bool(obj, "cite", path, index)
    sources = [
        source
        for source, present in (("bytes", data), ("text", text), ("chunks", chunks), ("uri", uri))
        if present
    ]
    if len(sources) != 1:
        found = ", ".join(sources) or "none"
        _fail(
            index,
            TranscriptRule.DOCUMENT_SOURCE_COUNT,
            path,
            f"exactly one of bytes, text, chunks, uri must be given (found: {found})",
        )
    return DocumentPart(
        name=name,
        format=doc_format,
        bytes=data,
        text=text,
        chunks=chunks,
        uri=uri,
        context=context,
        cite=cite,
    )


def _span(value: Any, path: str, index: int) -> DocumentLocation | None:
    if value is None:
        return None
    obj = _object(value, path, index, _SPAN_KEYS)
    return DocumentLocation(
        document_index=_int(obj, "document_index", path, index),
        start=_int(obj, "start", path, index),
        end=_int(obj, "end", path, index),
    )


def _citation(value: Any, path: str, index: int) -> Citation:
    obj = _object(value, path, index, _CITATION_KEYS)
    location_path = f"{path}.location"
    location = _object(obj["location"], location_path, index, _LOCATION_KEYS)
    return Citation(
        title=_string(obj, "title", path, index),
        source=_string(obj, "source", path, index),
        location=CitationLocation(
            document_char=_span(location["document_char"], f"{location_path}.document_char", index),
            document_chunk=_span(
                location["document_chunk"], f"{location_path}.document_chunk", index
            ),
            document_page=_span(location["document_page"], f"{location_path}.document_page", index),
        ),
        source_content=_string_list(obj, "source_content", path, index, non_empty=None),
    )


def _citations(obj: Mapping[str, Any], path: str, index: int) -> Part:
    text = _string(obj, "text", path, index)
    items = obj["citations"]
    where = f"{path}.citations"
    if not isinstance(items, list):
        _fail(index, TranscriptRule.WRONG_TYPE, where, f"must be an array, got {_json_type(items)}")
    return CitationsPart(
        text=text,
        citations=[_citation(item, f"{where}[{i}]", index) for i, item in enumerate(items)],
    )


def _tool_use(obj: Mapping[str, Any], path: str, index: int) -> Part:
    tool_id = _required(obj, "id", path, index, TranscriptRule.TOOL_USE_ID_EMPTY)
    name = _required(obj, "name", path, index, TranscriptRule.TOOL_USE_NAME_EMPTY)
    tool_input = obj["input"]
    if not isinstance(tool_input, dict):
        _fail(
            index,
            TranscriptRule.WRONG_TYPE,
            f"{path}.input",
            f"must be a JSON object, got {_json_type(tool_input)}",
        )
    return ToolUsePart(
        id=tool_id,
        name=name,
        input=_json_value(tool_input, f"{path}.input", index),
        thought_signature=_string(obj, "thought_signature", path, index),
    )


def _tool_result(obj: Mapping[str, Any], path: str, index: int) -> Part:
    return ToolResultPart(
        tool_use_id=_required(obj, "tool_use_id", path, index, TranscriptRule.TOOL_RESULT_ID_EMPTY),
        content=_json_value(obj["content"], f"{path}.content", index),
        is_error=_bool(obj, "is_error", path, index),
    )


def _cache_checkpoint(_obj: Mapping[str, Any], _path: str, _index: int) -> Part:
    return CacheCheckpointPart()


_PART_DECODERS: dict[str, Callable[[Mapping[str, Any], str, int], Part]] = {
    "text": _text,
    "thinking": _thinking,
    "image": _image,
    "document": _document,
    "citations": _citations,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "cache_checkpoint": _cache_checkpoint,
}


def _decode_part(value: Any, path: str, index: int) -> Part:
    if not isinstance(value, dict):
        _fail(index, TranscriptRule.WRONG_TYPE, path, f"must be an object, got {_json_type(value)}")
    if "kind" not in value:
        _fail(index, TranscriptRule.MISSING_KEY, path, "missing key 'kind'")
    kind = value["kind"]
    if not isinstance(kind, str):
        _fail(
            index,
            TranscriptRule.WRONG_TYPE,
            f"{path}.kind",
            f"must be a string, got {_json_type(kind)}",
        )
    keys = _PART_KEYS.get(kind)
    if keys is None:
        _fail(index, TranscriptRule.UNKNOWN_KIND, f"{path}.kind", f"unknown part kind {kind!r}")
    obj = _object(value, path, index, keys)
    return _PART_DECODERS[kind](obj, path, index)


def _decode_message(value: Any, path: str, index: int) -> Message:
    obj = _object(value, path, index, _MESSAGE_KEYS)
    role = _enum(obj, "role", path, index, enum_type=Role, rule=TranscriptRule.UNKNOWN_ROLE)
    raw_parts = obj["parts"]
    parts_path = f"{path}.parts"
    if raw_parts is None:
        raw_parts = []
    elif not isinstance(raw_parts, list):
        _fail(
            index,
            TranscriptRule.WRONG_TYPE,
            parts_path,
            f"must be an array or null, got {_json_type(raw_parts)}",
        )
    meta = obj["meta"]
    if meta is not None and not isinstance(meta, dict):
        _fail(
            index,
            TranscriptRule.WRONG_TYPE,
            f"{path}.meta",
            f"must be an object or null, got {_json_type(meta)}",
        )
    parts = [_decode_part(part, f"{parts_path}[{i}]", index) for i, part in enumerate(raw_parts)]
    return Message(role=role, parts=parts, meta=_json_value(meta, f"{path}.meta", index))


def decode_message(obj: Any) -> Message:
    """Decode one parsed JSON message object (paths are rooted at ``$``, index 0)."""
    try:
        return _decode_message(obj, "$", 0)
    except RecursionError:
        _fail(0, TranscriptRule.INVALID_JSON, "$", "nesting too deep")


def decode_messages(payload: bytes) -> list[Message]:
    """Decode a transcript record payload: UTF-8 JSON text holding an array of messages.

    Raises :class:`~runtime_store_client.InvalidTranscriptError` naming the JSON path and
    the rule broken; the violation's index is the message's position (``-1`` when the
    payload itself is wrong).
    """
    value = _parse(payload)
    if not isinstance(value, list):
        _fail(
            -1,
            TranscriptRule.WRONG_TYPE,
            "$",
            f"must be an array of messages, got {_json_type(value)}",
        )
    try:
        return [_decode_message(item, f"$[{i}]", i) for i, item in enumerate(value)]
    except RecursionError:
        _fail(-1, TranscriptRule.INVALID_JSON, "$", "nesting too deep")


# --- encoding -------------------------------------------------------------------------


def _b64_text(value: Any, path: str, index: int, *, nullable: bool) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, bytes | bytearray):
        _fail(index, TranscriptRule.WRONG_TYPE, path, f"must be bytes, got {_json_type(value)}")
    return base64.b64encode(value).decode("ascii")


def _span_json(span: DocumentLocation | None, path: str, index: int) -> Any:
    if span is None:
        return None
    if not isinstance(span, DocumentLocation):
        _fail(index, TranscriptRule.WRONG_TYPE, path, "must be a DocumentLocation or None")
    return {"document_index": span.document_index, "start": span.start, "end": span.end}


def _citation_json(citation: Citation, path: str, index: int) -> dict[str, Any]:
    if not isinstance(citation, Citation):
        _fail(index, TranscriptRule.WRONG_TYPE, path, "must be a Citation")
    location = citation.location
    location_path = f"{path}.location"
    if not isinstance(location, CitationLocation):
        _fail(index, TranscriptRule.WRONG_TYPE, location_path, "must be a CitationLocation")
    return {
        "title": citation.title,
        "source": citation.source,
        "location": {
            "document_char": _span_json(
                location.document_char, f"{location_path}.document_char", index
            ),
            "document_chunk": _span_json(
                location.document_chunk, f"{location_path}.document_chunk", index
            ),
            "document_page": _span_json(
                location.document_page, f"{location_path}.document_page", index
            ),
        },
        "source_content": _list_copy(citation.source_content),
    }


def _list_copy(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value


def _part_json(part: Part, path: str, index: int) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"kind": "text", "text": part.text}
    if isinstance(part, ThinkingPart):
        return {
            "kind": "thinking",
            "text": part.text,
            "signature": part.signature,
            "redacted": _b64_text(part.redacted, f"{path}.redacted", index, nullable=True),
            "index": part.index,
            "final": part.final,
        }
    if isinstance(part, ImagePart):
        return {
            "kind": "image",
            "format": str(part.format),
            "bytes": _b64_text(part.bytes, f"{path}.bytes", index, nullable=False),
        }
    if isinstance(part, DocumentPart):
        return {
            "kind": "document",
            "name": part.name,
            "format": str(part.format),
            "bytes": _b64_text(part.bytes, f"{path}.bytes", index, nullable=True),
            "text": part.text,
            "chunks": _list_copy(part.chunks),
            "uri": part.uri,
            "context": part.context,
            "cite": part.cite,
        }
    if isinstance(part, CitationsPart):
        citations_path = f"{path}.citations"
        if not isinstance(part.citations, list | tuple):
            _fail(index, TranscriptRule.WRONG_TYPE, citations_path, "must be a list of Citation")
        return {
            "kind": "citations",
            "text": part.text,
            "citations": [
                _citation_json(citation, f"{citations_path}[{i}]", index)
                for i, citation in enumerate(part.citations)
            ],
        }
    if isinstance(part, ToolUsePart):
        return {
            "kind": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": _json_value(part.input, f"{path}.input", index),
            "thought_signature": part.thought_signature,
        }
    if isinstance(part, ToolResultPart):
        return {
            "kind": "tool_result",
            "tool_use_id": part.tool_use_id,
            "content": _json_value(part.content, f"{path}.content", index),
            "is_error": part.is_error,
        }
    if isinstance(part, CacheCheckpointPart):
        return {"kind": "cache_checkpoint"}
    _fail(index, TranscriptRule.UNKNOWN_KIND, path, f"not a transcript part: {type(part).__name__}")


def _encode_message(message: Message, path: str, index: int) -> dict[str, Any]:
    if not isinstance(message, Message):
        _fail(index, TranscriptRule.WRONG_TYPE, path, f"not a Message: {type(message).__name__}")
    parts_path = f"{path}.parts"
    if not isinstance(message.parts, list | tuple):
        _fail(index, TranscriptRule.WRONG_TYPE, parts_path, "must be a list of parts")
    obj = {
        "role": str(message.role),
        "parts": [
            _part_json(part, f"{parts_path}[{i}]", index) for i, part in enumerate(message.parts)
        ],
        "meta": _json_value(message.meta, f"{path}.meta", index),
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
        _fail(0, TranscriptRule.INVALID_JSON, "$", "nesting too deep")


def encode_messages(messages: Iterable[Message]) -> bytes:
    """A transcript record payload: compact UTF-8 JSON text of the array of messages."""
    try:
        array = [_encode_message(m, f"$[{i}]", i) for i, m in enumerate(messages)]
        text = json.dumps(array, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except RecursionError:
        _fail(-1, TranscriptRule.INVALID_JSON, "$", "nesting too deep")
    return text.encode("utf-8")
