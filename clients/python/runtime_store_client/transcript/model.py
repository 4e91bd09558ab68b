"""The transcript's data model (CONTRACT.md 10.1 and 10.2): roles, formats, parts, messages.

A part's JSON keys are its dataclass fields, in order, after ``kind`` (a ``ClassVar``, so
not a field); the codec in :mod:`.messages` reads them off the classes. A field's own rule
beyond its type (a required string, say) sits in the field's metadata, set with
:func:`non_empty`.

Base64 fields are ``bytes`` (``None`` for JSON ``null`` where null is allowed, so ``""``
and ``null`` stay distinct); JSON-valued fields (``input``, ``content``, ``meta``) are
plain Python JSON values (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``,
``None``).
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from .violations import TranscriptRule

#: A JSON value as Python holds it: ``dict[str, JSONValue]``, ``list[JSONValue]``,
#: ``str``, ``int``, ``float`` (finite), ``bool`` or ``None``.
JSONValue: TypeAlias = Any

#: Field metadata key: the rule broken by an empty value, and the message saying so.
NON_EMPTY = "non_empty"


def non_empty(rule: TranscriptRule, message: str = "must be non-empty") -> Mapping[str, Any]:
    """Metadata of a field whose value (or, for a list of strings, every item) must be
    non-empty: an empty one breaks ``rule``."""
    return {NON_EMPTY: (rule, message)}


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
    bytes: builtins.bytes = field(
        metadata=non_empty(TranscriptRule.IMAGE_BYTES_EMPTY, "image bytes are required")
    )


@dataclass(frozen=True, kw_only=True)
class DocumentPart:
    """A document: ``name`` required and exactly one of bytes, text, chunks and uri."""

    kind: ClassVar[str] = "document"
    name: str = field(metadata=non_empty(TranscriptRule.DOCUMENT_NAME_EMPTY))
    format: DocumentFormat
    bytes: builtins.bytes | None = None
    text: str = ""
    chunks: list[str] | None = field(
        default=None, metadata=non_empty(TranscriptRule.DOCUMENT_CHUNK_EMPTY)
    )
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
    id: str = field(metadata=non_empty(TranscriptRule.TOOL_USE_ID_EMPTY))
    name: str = field(metadata=non_empty(TranscriptRule.TOOL_USE_NAME_EMPTY))
    input: dict[str, JSONValue] = field(default_factory=dict)
    thought_signature: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolResultPart:
    """The result of the tool call whose model ID is ``tool_use_id``."""

    kind: ClassVar[str] = "tool_result"
    tool_use_id: str = field(metadata=non_empty(TranscriptRule.TOOL_RESULT_ID_EMPTY))
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
