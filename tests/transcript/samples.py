"""Sample transcripts and helpers shared by the transcript tests."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from runtime_store_client import (
    InvalidTranscriptError,
    Message,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    TranscriptViolation,
    decode_messages,
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def dumps(value: Any) -> bytes:
    """Compact JSON bytes, as the Go runtime writes them."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def same_json(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ``==``, tells ``true`` from ``1`` and ``1`` from ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def rejection(payload: bytes) -> TranscriptViolation:
    """The one violation ``decode_messages`` reports for ``payload``."""
    with pytest.raises(InvalidTranscriptError) as info:
        decode_messages(payload)
    error = info.value
    assert error.code == "invalid_transcript"
    assert error.status == 422
    assert len(error.violations) == 1
    assert str(error.violations[0]) in str(error)
    return error.violations[0]


# --- one valid JSON object per part kind, every key present ------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00"

TEXT: dict[str, Any] = {"kind": "text", "text": "What changed in the Q3 report?"}
THINKING: dict[str, Any] = {
    "kind": "thinking",
    "text": "The user wants a diff of two reports.",
    "signature": "c2lnbmF0dXJl",
    "redacted": None,
    "index": 0,
    "final": True,
}
REDACTED_THINKING: dict[str, Any] = {
    "kind": "thinking",
    "text": "",
    "signature": "",
    "redacted": b64(b"\x00opaque reasoning\xff"),
    "index": 1,
    "final": False,
}
IMAGE: dict[str, Any] = {"kind": "image", "format": "png", "bytes": b64(PNG)}
DOCUMENT: dict[str, Any] = {
    "kind": "document",
    "name": "q3-report",
    "format": "md",
    "bytes": None,
    "text": "# Q3\nRevenue grew 12%.",
    "chunks": None,
    "uri": "",
    "context": "Quarterly report",
    "cite": True,
}
CITATIONS: dict[str, Any] = {
    "kind": "citations",
    "text": "Revenue grew 12%.",
    "citations": [
        {
            "title": "q3-report",
            "source": "doc-0",
            "location": {
                "document_char": {"document_index": 0, "start": 5, "end": 22},
                "document_chunk": None,
                "document_page": None,
            },
            "source_content": ["Revenue grew 12%."],
        }
    ],
}
TOOL_USE: dict[str, Any] = {
    "kind": "tool_use",
    "id": "toolu_01",
    "name": "search.documents",
    "input": {"query": "Q3 revenue", "limit": 5, "filters": {"year": 2026}},
    "thought_signature": "",
}
TOOL_RESULT: dict[str, Any] = {
    "kind": "tool_result",
    "tool_use_id": "toolu_01",
    "content": {"hits": [{"id": "doc-0", "score": 0.93}]},
    "is_error": False,
}
CACHE_CHECKPOINT: dict[str, Any] = {"kind": "cache_checkpoint"}

#: Every kind with a valid JSON part holding every key.
PARTS: dict[str, dict[str, Any]] = {
    "text": TEXT,
    "thinking": THINKING,
    "image": IMAGE,
    "document": DOCUMENT,
    "citations": CITATIONS,
    "tool_use": TOOL_USE,
    "tool_result": TOOL_RESULT,
    "cache_checkpoint": CACHE_CHECKPOINT,
}


def message_json(role: str, *parts: Any, meta: Any = None) -> dict[str, Any]:
    """A message object holding deep copies of ``parts`` (so tests may mutate it)."""
    return {"role": role, "parts": copy.deepcopy(list(parts)), "meta": copy.deepcopy(meta)}


def conversation_json() -> list[dict[str, Any]]:
    """A realistic tool-using conversation touching every part kind."""
    return [
        message_json("system", {"kind": "text", "text": "You are a careful analyst."}),
        message_json("user", TEXT, IMAGE, DOCUMENT, meta={"turn_id": "turn-1"}),
        message_json(
            "assistant",
            THINKING,
            {"kind": "text", "text": "Let me search both reports."},
            TOOL_USE,
            {
                "kind": "tool_use",
                "id": "toolu_02",
                "name": "search.documents",
                "input": {},
                "thought_signature": "Z2VtaW5p",
            },
        ),
        message_json(
            "user",
            TOOL_RESULT,
            {
                "kind": "tool_result",
                "tool_use_id": "toolu_02",
                "content": "index unavailable",
                "is_error": True,
            },
            {"kind": "text", "text": "Ignore the Q2 one."},
        ),
        message_json("assistant", REDACTED_THINKING, CITATIONS, CACHE_CHECKPOINT),
        message_json(
            "user",
            {
                "kind": "document",
                "name": "notes",
                "format": "txt",
                "bytes": None,
                "text": "",
                "chunks": ["first chunk", "second chunk"],
                "uri": "",
                "context": "",
                "cite": False,
            },
            {
                "kind": "document",
                "name": "scan",
                "format": "pdf",
                "bytes": b64(b"%PDF-1.7"),
                "text": "",
                "chunks": [],
                "uri": "",
                "context": "",
                "cite": False,
            },
            {
                "kind": "document",
                "name": "remote",
                "format": "docx",
                "bytes": "",
                "text": "",
                "chunks": None,
                "uri": "s3://bucket/remote.docx",
                "context": "",
                "cite": False,
            },
        ),
        message_json(
            "assistant",
            {"kind": "text", "text": "Done: revenue grew 12% (é, 日本, \u0000)."},
            meta={"usage": {"input_tokens": 1200, "output_tokens": 85}, "ratio": 0.25},
        ),
        {"role": "user", "parts": [], "meta": None},
    ]


# --- Python-side builders for the validators ---------------------------------------------


def user(*parts: Part) -> Message:
    return Message(role=Role.USER, parts=list(parts))


def assistant(*parts: Part) -> Message:
    return Message(role=Role.ASSISTANT, parts=list(parts))


def system(*parts: Part) -> Message:
    return Message(role=Role.SYSTEM, parts=list(parts))


def text(value: str = "hello") -> TextPart:
    return TextPart(text=value)


def think(value: str = "reasoning") -> ThinkingPart:
    return ThinkingPart(text=value, signature="sig", final=True)


def use(tool_id: str, name: str = "search") -> ToolUsePart:
    return ToolUsePart(id=tool_id, name=name, input={"q": tool_id})


def result(tool_id: str, content: Any = "ok") -> ToolResultPart:
    return ToolResultPart(tool_use_id=tool_id, content=content)
