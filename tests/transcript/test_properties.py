"""Property tests of the message codec: round trips, and mutations always rejected."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime_store_client import (
    CacheCheckpointPart,
    Citation,
    CitationLocation,
    CitationsPart,
    DocumentFormat,
    DocumentLocation,
    DocumentPart,
    ImageFormat,
    ImagePart,
    InvalidTranscriptError,
    Message,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    TranscriptRule,
    decode_messages,
    encode_messages,
)
from tests.transcript.samples import b64, dumps, same_json

#: Hypothesis' default count (new examples every run; 200 cost more CPU than it found).
SETTINGS = settings(max_examples=100, deadline=None, database=None)

# --------------------------------------------------------------------------- strategies

texts = st.text(max_size=12)
non_empty = st.text(min_size=1, max_size=12)
int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
blobs = st.binary(max_size=16)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
string_lists = st.lists(texts, max_size=3)
non_empty_string_lists = st.lists(non_empty, max_size=3)

# --- JSON documents, exactly as 10.1/10.2 describe them


def _kind(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"kind": st.just(kind), **fields})


@st.composite
def document_jsons(draw: st.DrawFn) -> dict[str, Any]:
    source = draw(st.sampled_from(["bytes", "text", "chunks", "uri"]))
    return {
        "kind": "document",
        "name": draw(non_empty),
        "format": draw(st.sampled_from([f.value for f in DocumentFormat])),
        "bytes": b64(draw(st.binary(min_size=1, max_size=16)))
        if source == "bytes"
        else draw(st.sampled_from([None, ""])),
        "text": draw(non_empty) if source == "text" else "",
        "chunks": draw(st.lists(non_empty, min_size=1, max_size=3))
        if source == "chunks"
        else draw(st.sampled_from([None, []])),
        "uri": draw(non_empty) if source == "uri" else "",
        "context": draw(texts),
        "cite": draw(st.booleans()),
    }


span_jsons = st.none() | st.fixed_dictionaries(
    {"document_index": int64, "start": int64, "end": int64}
)
citation_jsons = st.fixed_dictionaries(
    {
        "title": texts,
        "source": texts,
        "location": st.fixed_dictionaries(
            {"document_char": span_jsons, "document_chunk": span_jsons, "document_page": span_jsons}
        ),
        "source_content": st.none() | string_lists,
    }
)
part_jsons = st.one_of(
    _kind("text", text=texts),
    _kind(
        "thinking",
        text=texts,
        signature=texts,
        redacted=st.none() | blobs.map(b64),
        index=int64,
        final=st.booleans(),
    ),
    _kind(
        "image",
        format=st.sampled_from([f.value for f in ImageFormat]),
        bytes=st.binary(min_size=1, max_size=16).map(b64),
    ),
    document_jsons(),
    _kind("citations", text=texts, citations=st.lists(citation_jsons, max_size=2)),
    _kind("tool_use", id=non_empty, name=non_empty, input=json_objects, thought_signature=texts),
    _kind("tool_result", tool_use_id=non_empty, content=json_values, is_error=st.booleans()),
    _kind("cache_checkpoint"),
)
message_jsons = st.fixed_dictionaries(
    {
        "role": st.sampled_from([r.value for r in Role]),
        "parts": st.lists(part_jsons, max_size=4),
        "meta": st.none() | json_objects,
    }
)
transcript_jsons = st.lists(message_jsons, max_size=4)

# --- Python values, built independently of the decoder

locations = st.none() | st.builds(DocumentLocation, document_index=int64, start=int64, end=int64)


@st.composite
def documents(draw: st.DrawFn) -> DocumentPart:
    source = draw(st.sampled_from(["bytes", "text", "chunks", "uri"]))
    return DocumentPart(
        name=draw(non_empty),
        format=draw(st.sampled_from(DocumentFormat)),
        bytes=draw(st.binary(min_size=1, max_size=16))
        if source == "bytes"
        else draw(st.sampled_from([None, b""])),
        text=draw(non_empty) if source == "text" else "",
        chunks=draw(st.lists(non_empty, min_size=1, max_size=3))
        if source == "chunks"
        else draw(st.sampled_from([None, []])),
        uri=draw(non_empty) if source == "uri" else "",
        context=draw(texts),
        cite=draw(st.booleans()),
    )


parts: st.SearchStrategy[Part] = st.one_of(
    st.builds(TextPart, text=texts),
    st.builds(
        ThinkingPart,
        text=texts,
        signature=texts,
        redacted=st.none() | blobs,
        index=int64,
        final=st.booleans(),
    ),
    st.builds(
        ImagePart, format=st.sampled_from(ImageFormat), bytes=st.binary(min_size=1, max_size=16)
    ),
    documents(),
    st.builds(
        CitationsPart,
        text=texts,
        citations=st.lists(
            st.builds(
                Citation,
                title=texts,
                source=texts,
                location=st.builds(
                    CitationLocation,
                    document_char=locations,
                    document_chunk=locations,
                    document_page=locations,
                ),
                source_content=st.none() | string_lists,
            ),
            max_size=2,
        ),
    ),
    st.builds(
        ToolUsePart, id=non_empty, name=non_empty, input=json_objects, thought_signature=texts
    ),
    st.builds(ToolResultPart, tool_use_id=non_empty, content=json_values, is_error=st.booleans()),
    st.just(CacheCheckpointPart()),
)
messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(Role),
        parts=st.lists(parts, max_size=4),
        meta=st.none() | json_objects,
    ),
    max_size=4,
)

# --------------------------------------------------------------------------- round trips


@SETTINGS
@given(messages)
def test_encode_then_decode_gives_the_messages_back(value: list[Message]) -> None:
    assert decode_messages(encode_messages(value)) == value


@SETTINGS
@given(transcript_jsons)
def test_decode_then_encode_gives_equal_json(doc: list[dict[str, Any]]) -> None:
    decoded = decode_messages(dumps(doc))
    assert same_json(json.loads(encode_messages(decoded)), doc)
    # Spelling does not matter: escaped, indented text decodes to the same messages.
    assert decode_messages(json.dumps(doc, ensure_ascii=True, indent=2).encode()) == decoded


# --------------------------------------------------------------------------- rejections

MESSAGE_KEYS = {"role": {"string"}, "parts": {"array", "null"}, "meta": {"object", "null"}}
PART_KEYS: dict[str, dict[str, set[str]]] = {
    "text": {"text": {"string"}},
    "thinking": {
        "text": {"string"},
        "signature": {"string"},
        "redacted": {"string", "null"},
        "index": {"integer"},
        "final": {"boolean"},
    },
    "image": {"format": {"string"}, "bytes": {"string"}},
    "document": {
        "name": {"string"},
        "format": {"string"},
        "bytes": {"string", "null"},
        "text": {"string"},
        "chunks": {"array", "null"},
        "uri": {"string"},
        "context": {"string"},
        "cite": {"boolean"},
    },
    "citations": {"text": {"string"}, "citations": {"array"}},
    "tool_use": {
        "id": {"string"},
        "name": {"string"},
        "input": {"object"},
        "thought_signature": {"string"},
    },
    "tool_result": {
        "tool_use_id": {"string"},
        "content": {"null", "boolean", "integer", "number", "string", "array", "object"},
        "is_error": {"boolean"},
    },
    "cache_checkpoint": {},
}
CITATION_KEYS = {
    "title": {"string"},
    "source": {"string"},
    "location": {"object"},
    "source_content": {"array", "null"},
}
LOCATION_KEYS = {
    key: {"object", "null"} for key in ("document_char", "document_chunk", "document_page")
}
SPAN_KEYS = {key: {"integer"} for key in ("document_index", "start", "end")}
WRONG_VALUES: list[Any] = [None, True, 0, 1.5, "s", [], {}]


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {int: "integer", float: "number", str: "string", list: "array", dict: "object"}[
        type(value)
    ]


@dataclass
class Slot:
    """A structural object of a document (not a free JSON value) and its key types."""

    obj: dict[str, Any]
    keys: dict[str, set[str]]
    index: int


def slots(doc: list[dict[str, Any]]) -> list[Slot]:
    out: list[Slot] = []
    for i, message in enumerate(doc):
        out.append(Slot(message, MESSAGE_KEYS, i))
        for part in message["parts"]:
            out.append(Slot(part, {"kind": {"string"}, **PART_KEYS[part["kind"]]}, i))
            for citation in part.get("citations") or [] if part["kind"] == "citations" else []:
                out.append(Slot(citation, CITATION_KEYS, i))
                out.append(Slot(citation["location"], LOCATION_KEYS, i))
                out.extend(
                    Slot(span, SPAN_KEYS, i) for span in citation["location"].values() if span
                )
    return out


def rejected(doc: list[dict[str, Any]]) -> tuple[int, str]:
    """Decode ``doc``, which must fail with the transcript error and nothing else."""
    try:
        decode_messages(dumps(doc))
    except InvalidTranscriptError as exc:
        (violation,) = exc.violations
        return violation.index, violation.rule
    raise AssertionError("a mutated transcript was accepted")


non_empty_transcripts = st.lists(message_jsons, min_size=1, max_size=3)


@SETTINGS
@given(non_empty_transcripts, st.data())
def test_an_unknown_key_is_always_rejected(doc: list[dict[str, Any]], data: st.DataObject) -> None:
    slot = data.draw(st.sampled_from(slots(doc)))
    variants = [k.swapcase() for k in slot.keys if k.swapcase() != k]
    key = data.draw(
        (st.sampled_from(variants) if variants else st.nothing())
        | st.text(min_size=1, max_size=8).filter(lambda k: k not in slot.keys)
    )
    slot.obj[key] = data.draw(json_values)
    assert rejected(doc) == (slot.index, TranscriptRule.UNKNOWN_KEY)


@SETTINGS
@given(non_empty_transcripts, st.data())
def test_a_missing_key_is_always_rejected(doc: list[dict[str, Any]], data: st.DataObject) -> None:
    slot = data.draw(st.sampled_from([s for s in slots(doc) if s.keys]))
    del slot.obj[data.draw(st.sampled_from(sorted(slot.keys)))]
    assert rejected(doc) == (slot.index, TranscriptRule.MISSING_KEY)


@SETTINGS
@given(non_empty_transcripts, st.data())
def test_a_wrong_type_is_always_rejected(doc: list[dict[str, Any]], data: st.DataObject) -> None:
    candidates = [
        (slot, key)
        for slot in slots(doc)
        for key, allowed in slot.keys.items()
        if len(allowed) < 7  # ``content`` takes any JSON value
    ]
    slot, key = data.draw(st.sampled_from(candidates))
    wrong = [v for v in WRONG_VALUES if json_type(v) not in slot.keys[key]]
    slot.obj[key] = data.draw(st.sampled_from(wrong))
    assert rejected(doc) == (slot.index, TranscriptRule.WRONG_TYPE)


@SETTINGS
@given(transcript_jsons, st.data())
def test_truncated_payloads_are_always_rejected(
    doc: list[dict[str, Any]], data: st.DataObject
) -> None:
    payload = dumps(doc)
    cut = data.draw(st.integers(min_value=0, max_value=len(payload) - 1))
    with pytest.raises(InvalidTranscriptError) as info:
        decode_messages(payload[:cut])
    assert info.value.violations[0].rule == TranscriptRule.INVALID_JSON
