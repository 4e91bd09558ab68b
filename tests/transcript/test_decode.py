"""The strict message codec: every rule of CONTRACT.md 10.1 and 10.2, and the round trip."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

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
    Role,
    StoreError,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    TranscriptRule,
    decode_message,
    decode_messages,
    encode_message,
    encode_messages,
    error_class_for_code,
)
from tests.transcript.samples import (
    DOCUMENT,
    IMAGE,
    PARTS,
    PNG,
    TEXT,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    b64,
    conversation_json,
    dumps,
    message_json,
    rejection,
    same_json,
)

R = TranscriptRule

# --------------------------------------------------------------------------- round trip


def test_realistic_conversation_round_trips_to_equal_json() -> None:
    doc = conversation_json()
    messages = decode_messages(dumps(doc))
    assert [m.role for m in messages] == [
        Role.SYSTEM,
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
    ]
    assert same_json(json.loads(encode_messages(messages)), doc)
    assert decode_messages(encode_messages(messages)) == messages


def test_decoded_values_are_typed() -> None:
    messages = decode_messages(dumps(conversation_json()))
    user = messages[1]
    assert user.meta == {"turn_id": "turn-1"}
    assert user.parts == [
        TextPart(text="What changed in the Q3 report?"),
        ImagePart(format=ImageFormat.PNG, bytes=PNG),
        DocumentPart(
            name="q3-report",
            format=DocumentFormat.MD,
            text="# Q3\nRevenue grew 12%.",
            context="Quarterly report",
            cite=True,
        ),
    ]
    assistant = messages[2]
    assert isinstance(assistant.parts[0], ThinkingPart)
    assert assistant.parts[2] == ToolUsePart(
        id="toolu_01",
        name="search.documents",
        input={"query": "Q3 revenue", "limit": 5, "filters": {"year": 2026}},
    )
    assert messages[3].parts[1] == ToolResultPart(
        tool_use_id="toolu_02", content="index unavailable", is_error=True
    )
    assert messages[4].parts[0] == ThinkingPart(redacted=b"\x00opaque reasoning\xff", index=1)
    assert messages[4].parts[1] == CitationsPart(
        text="Revenue grew 12%.",
        citations=[
            Citation(
                title="q3-report",
                source="doc-0",
                location=CitationLocation(
                    document_char=DocumentLocation(document_index=0, start=5, end=22)
                ),
                source_content=["Revenue grew 12%."],
            )
        ],
    )
    assert messages[4].parts[2] == CacheCheckpointPart()
    chunks, upload, remote = messages[5].parts
    assert isinstance(chunks, DocumentPart)
    assert chunks.chunks == ["first chunk", "second chunk"]
    assert isinstance(upload, DocumentPart)
    assert (upload.bytes, upload.chunks) == (b"%PDF-1.7", [])
    assert isinstance(remote, DocumentPart)
    assert (remote.bytes, remote.uri) == (b"", "s3://bucket/remote.docx")


def test_null_and_empty_stay_distinct_where_both_are_allowed() -> None:
    for kind_json in ({**THINKING, "redacted": ""}, {**THINKING, "redacted": None}):
        payload = dumps([message_json("assistant", kind_json)])
        assert same_json(json.loads(encode_messages(decode_messages(payload))), json.loads(payload))


def test_parts_null_means_no_parts_and_encodes_as_empty_array() -> None:
    payload = b'[{"role":"assistant","parts":null,"meta":null}]'
    assert decode_messages(payload) == [Message(role=Role.ASSISTANT)]
    assert (
        encode_messages(decode_messages(payload))
        == b'[{"role":"assistant","parts":[],"meta":null}]'
    )


def test_empty_array_is_an_empty_transcript() -> None:
    assert decode_messages(b"[]") == []
    assert decode_messages(b" [ ] \n") == []
    assert encode_messages([]) == b"[]"


def test_encoder_emits_every_key_of_every_kind() -> None:
    for kind, part_json in PARTS.items():
        message = decode_messages(dumps([message_json("user", part_json)]))[0]
        encoded = encode_message(message)
        assert list(encoded) == ["role", "parts", "meta"]
        assert list(encoded["parts"][0]) == list(part_json), kind
        assert same_json(encoded["parts"][0], part_json), kind


def test_encoder_fills_defaults_in_the_documented_shape() -> None:
    encoded = encode_message(
        Message(
            role=Role.ASSISTANT,
            parts=[
                ThinkingPart(text="t", signature="s"),
                DocumentPart(name="d", format=DocumentFormat.TXT, text="body"),
                CitationsPart(text="x", citations=[Citation()]),
                ToolUsePart(id="a", name="n"),
                ToolResultPart(tool_use_id="a"),
            ],
        )
    )
    assert encoded == {
        "role": "assistant",
        "parts": [
            {
                "kind": "thinking",
                "text": "t",
                "signature": "s",
                "redacted": None,
                "index": 0,
                "final": False,
            },
            {
                "kind": "document",
                "name": "d",
                "format": "txt",
                "bytes": None,
                "text": "body",
                "chunks": None,
                "uri": "",
                "context": "",
                "cite": False,
            },
            {
                "kind": "citations",
                "text": "x",
                "citations": [
                    {
                        "title": "",
                        "source": "",
                        "location": {
                            "document_char": None,
                            "document_chunk": None,
                            "document_page": None,
                        },
                        "source_content": None,
                    }
                ],
            },
            {"kind": "tool_use", "id": "a", "name": "n", "input": {}, "thought_signature": ""},
            {"kind": "tool_result", "tool_use_id": "a", "content": None, "is_error": False},
        ],
        "meta": None,
    }


def test_decode_message_reads_one_parsed_object() -> None:
    obj = message_json("user", TEXT, meta={"k": [1, 2.5, None, True]})
    message = decode_message(obj)
    assert message == Message(role=Role.USER, parts=[TextPart(text=TEXT["text"])], meta=obj["meta"])
    assert encode_message(message) == obj
    with pytest.raises(InvalidTranscriptError, match=r"\$\.parts\[0\]: unknown key 'extra'"):
        decode_message(message_json("user", {**TEXT, "extra": 1}))


def test_decoded_json_values_are_detached_plain_copies() -> None:
    message = decode_messages(dumps([message_json("assistant", TOOL_USE, meta={"a": {"b": 1}})]))[0]
    assert type(message.meta) is dict
    assert type(message.meta["a"]) is dict
    part = message.parts[0]
    assert isinstance(part, ToolUsePart)
    assert type(part.input) is dict


def test_escaped_text_is_valid() -> None:
    escaped = rb'"caf\u00e9 \u0000 e\u0301"'
    payload = b'[{"role":"user","parts":[{"kind":"text","text":' + escaped + b'}],"meta":null}]'
    (message,) = decode_messages(payload)
    assert message.parts == [TextPart(text="caf\u00e9 \u0000 e\u0301")]
    assert same_json(json.loads(encode_messages([message])), json.loads(payload))


# --------------------------------------------------------------------------- payload text


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"[] []", id="two_values"),
        pytest.param(b"[]x", id="trailing_bytes"),
        pytest.param(b"[", id="truncated"),
        pytest.param(b"\xff[]", id="not_utf8"),
        pytest.param(b'["\xc0\xae"]', id="overlong_utf8"),
        pytest.param(b'[{"role":"user","parts":[],"meta":{"x":NaN}}]', id="nan"),
        pytest.param(b'[{"role":"user","parts":[],"meta":{"x":Infinity}}]', id="infinity"),
        pytest.param(b'[{"role":"user","parts":[],"meta":{"x":1e400}}]', id="overflowing_number"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="too_deep"),
    ],
)
def test_invalid_json(payload: bytes) -> None:
    violation = rejection(payload)
    assert (violation.index, violation.rule) == (-1, R.INVALID_JSON)


@pytest.mark.parametrize("payload", [b"null", b"{}", b'"[]"', b"1", b"true"])
def test_wrong_type_payload_is_not_an_array(payload: bytes) -> None:
    violation = rejection(payload)
    assert (violation.index, violation.rule) == (-1, R.WRONG_TYPE)
    assert violation.message.startswith("$: must be an array of messages")


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        pytest.param(
            b'[{"role":"user","role":"user","parts":[],"meta":null}]', "$[0]", id="message"
        ),
        pytest.param(
            b'[{"role":"user","parts":[{"kind":"text","text":"a","text":"b"}],"meta":null}]',
            "$[0].parts[0]",
            id="part",
        ),
        pytest.param(b'[{"role":"user","parts":[],"meta":{"a":1,"a":1}}]', "$[0].meta", id="meta"),
        pytest.param(
            b'[{"role":"user","parts":[],"meta":{"a":[{"b":1,"b":2}]}}]',
            "$[0].meta.a[0]",
            id="nested_meta",
        ),
    ],
)
def test_duplicate_key(payload: bytes, path: str) -> None:
    violation = rejection(payload)
    assert violation.rule == R.DUPLICATE_KEY
    assert violation.message.startswith(f"{path}: duplicate key")


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        pytest.param(
            b'[{"role":"user","parts":[{"kind":"text","text":"\\ud800"}],"meta":null}]',
            "$[0].parts[0].text",
            id="text",
        ),
        pytest.param(
            b'[{"role":"user","parts":[],"meta":{"\\udc00":1}}]', "$[0].meta", id="meta_key"
        ),
    ],
)
def test_invalid_string_unpaired_surrogate(payload: bytes, path: str) -> None:
    violation = rejection(payload)
    assert violation.rule == R.INVALID_STRING
    assert violation.message.startswith(path)


def test_escaped_surrogate_pair_is_valid() -> None:
    (message,) = decode_messages(
        b'[{"role":"user","parts":[{"kind":"text","text":"\\ud83d\\ude00"}],"meta":null}]'
    )
    assert message.parts == [TextPart(text="\U0001f600")]


# --------------------------------------------------------------------------- 10.1 message


def decode_one(message: Any) -> None:
    decode_messages(dumps([message_json("user", TEXT), message]))


def message_rejection(message: Any) -> tuple[int, str, str]:
    """Decode ``message`` as the second message; its violation as (index, rule, message)."""
    violation = rejection(dumps([message_json("user", TEXT), message]))
    return violation.index, violation.rule, violation.message


@pytest.mark.parametrize("message", [None, [], "user", 1, True], ids=repr)
def test_wrong_type_message_is_not_an_object(message: Any) -> None:
    assert message_rejection(message)[:2] == (1, R.WRONG_TYPE)


@pytest.mark.parametrize("key", ["role", "parts", "meta"])
def test_missing_key_of_message(key: str) -> None:
    message = message_json("user", TEXT)
    del message[key]
    assert message_rejection(message) == (1, R.MISSING_KEY, f"$[1]: missing key {key!r}")


@pytest.mark.parametrize("key", ["Role", "PARTS", "Meta", "name", "content", "kind"])
def test_unknown_key_of_message_is_case_sensitive(key: str) -> None:
    message = {**message_json("user", TEXT), key: "x"}
    assert message_rejection(message) == (1, R.UNKNOWN_KEY, f"$[1]: unknown key {key!r}")


@pytest.mark.parametrize("role", ["tool", "User", "ASSISTANT", "", "developer"])
def test_unknown_role(role: str) -> None:
    index, rule, text = message_rejection(message_json(role, TEXT))
    assert (index, rule) == (1, R.UNKNOWN_ROLE)
    assert text.startswith("$[1].role:")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("role", None),
        ("role", 1),
        ("parts", {}),
        ("parts", "text"),
        ("parts", 0),
        ("meta", []),
        ("meta", "x"),
        ("meta", 1),
        ("meta", False),
    ],
)
def test_wrong_type_of_message_field(key: str, value: Any) -> None:
    message = {**message_json("user", TEXT), key: value}
    index, rule, text = message_rejection(message)
    assert (index, rule) == (1, R.WRONG_TYPE)
    assert text.startswith(f"$[1].{key}:")


def test_meta_accepts_any_object_and_null() -> None:
    for meta in (None, {}, {"a": [1, {"b": None}], "c": -0.5, "d": "é"}):
        decode_one(message_json("assistant", TEXT, meta=meta))


# --------------------------------------------------------------------------- 10.2 parts


def part_rejection(part: Any) -> tuple[int, str, str]:
    """Decode ``part`` as the second part of the second message."""
    violation = rejection(dumps([message_json("user", TEXT), message_json("user", TEXT, part)]))
    return violation.index, violation.rule, violation.message


P = "$[1].parts[1]"


@pytest.mark.parametrize("part", [None, [], "text", 3], ids=repr)
def test_wrong_type_part_is_not_an_object(part: Any) -> None:
    assert part_rejection(part)[:2] == (1, R.WRONG_TYPE)


def test_missing_key_kind() -> None:
    assert part_rejection({"text": "hi"}) == (1, R.MISSING_KEY, f"{P}: missing key 'kind'")


@pytest.mark.parametrize("kind", ["Text", "TEXT", "image_url", "tool_call", "", "reasoning"])
def test_unknown_kind(kind: str) -> None:
    assert part_rejection({"kind": kind, "text": "x"})[:2] == (1, R.UNKNOWN_KIND)


@pytest.mark.parametrize("kind", [None, 1, ["text"], {"t": 1}], ids=repr)
def test_wrong_type_kind(kind: Any) -> None:
    assert part_rejection({"kind": kind, "text": "x"})[:2] == (1, R.WRONG_TYPE)


ALL_KEYS = [
    pytest.param(kind, key, id=f"{kind}.{key}")
    for kind, part in PARTS.items()
    for key in part
    if key != "kind"
]


@pytest.mark.parametrize(("kind", "key"), ALL_KEYS)
def test_missing_key_of_part(kind: str, key: str) -> None:
    part = copy.deepcopy(PARTS[kind])
    del part[key]
    assert part_rejection(part) == (1, R.MISSING_KEY, f"{P}: missing key {key!r}")


@pytest.mark.parametrize("kind", list(PARTS))
@pytest.mark.parametrize("extra", ["extra", "Kind", "TEXT", "Id", "toolUseId", "role"])
def test_unknown_key_of_part(kind: str, extra: str) -> None:
    part = {**PARTS[kind], extra: None}
    assert part_rejection(part) == (1, R.UNKNOWN_KEY, f"{P}: unknown key {extra!r}")


@pytest.mark.parametrize(("kind", "key"), ALL_KEYS)
def test_renamed_key_of_part_is_rejected(kind: str, key: str) -> None:
    """Keys are case-sensitive: ``Text`` is not ``text``."""
    part = copy.deepcopy(PARTS[kind])
    part[key.capitalize() if key != key.capitalize() else key.upper()] = part.pop(key)
    assert part_rejection(part)[:2] == (1, R.UNKNOWN_KEY)


WRONG_TYPES: list[tuple[str, str, list[Any]]] = [
    ("text", "text", [None, 1, ["a"]]),
    ("thinking", "text", [None, 0]),
    ("thinking", "signature", [None, 0]),
    ("thinking", "redacted", [0, [], {}]),
    ("thinking", "index", [None, 1.5, "1", True, [0]]),
    ("thinking", "final", [None, 0, "true"]),
    ("image", "format", [None, 1]),
    ("image", "bytes", [None, 0, ["AA=="]]),
    ("document", "name", [None, 0]),
    ("document", "format", [None, 0]),
    ("document", "bytes", [0, {}]),
    ("document", "text", [None, 0]),
    ("document", "chunks", ["chunk", {}, 1]),
    ("document", "uri", [None, 0]),
    ("document", "context", [None, 0]),
    ("document", "cite", [None, 1, "false"]),
    ("citations", "text", [None, 0]),
    ("citations", "citations", [None, {}, "x"]),
    ("tool_use", "id", [None, 1]),
    ("tool_use", "name", [None, 1]),
    ("tool_use", "input", [None, [], "{}", 1, True]),
    ("tool_use", "thought_signature", [None, 1]),
    ("tool_result", "tool_use_id", [None, 1]),
    ("tool_result", "is_error", [None, 0, "false"]),
]


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        pytest.param(kind, key, value, id=f"{kind}.{key}={value!r}")
        for kind, key, values in WRONG_TYPES
        for value in values
    ],
)
def test_wrong_type_of_part_field(kind: str, key: str, value: Any) -> None:
    part = {**PARTS[kind], key: value}
    index, rule, text = part_rejection(part)
    assert (index, rule) == (1, R.WRONG_TYPE)
    assert text.startswith(f"{P}.{key}")


def test_integer_range_of_thinking_index() -> None:
    for ok in (2**63 - 1, -(2**63), -1):
        decode_one(message_json("assistant", {**THINKING, "index": ok}))
    for bad in (2**63, -(2**63) - 1, 10**30):
        assert part_rejection({**THINKING, "index": bad}) == (
            1,
            R.INTEGER_RANGE,
            f"{P}.index: integer out of the signed 64-bit range",
        )


def test_thinking_accepts_plaintext_or_redacted() -> None:
    decode_one(message_json("assistant", THINKING))
    decode_one(message_json("assistant", {**THINKING, "redacted": "", "index": 3}))
    decode_one(message_json("assistant", {**THINKING, "redacted": b64(b"x")}))


# image ---------------------------------------------------------------------------------


@pytest.mark.parametrize("image_format", ["png", "jpeg", "gif", "webp"])
def test_image_formats(image_format: str) -> None:
    decode_one(message_json("user", {**IMAGE, "format": image_format}))


@pytest.mark.parametrize("image_format", ["bmp", "PNG", "jpg", "", "image/png"])
def test_image_format(image_format: str) -> None:
    index, rule, text = part_rejection({**IMAGE, "format": image_format})
    assert (index, rule) == (1, R.IMAGE_FORMAT)
    assert text.startswith(f"{P}.format: {image_format!r} is not one of png, jpeg, gif, webp")


def test_image_bytes_empty() -> None:
    assert part_rejection({**IMAGE, "bytes": ""}) == (
        1,
        R.IMAGE_BYTES_EMPTY,
        f"{P}.bytes: image bytes are required",
    )


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("AAA", id="missing_padding"),
        pytest.param("QR==", id="non_canonical_trailing_bits"),
        pytest.param("QQ=", id="short_padding"),
        pytest.param("QQ===", id="extra_padding"),
        pytest.param("Q Q==", id="space"),
        pytest.param("QUFB\nQUFB", id="newline"),
        pytest.param("-_-_", id="url_safe_alphabet"),
        pytest.param("QUJD!", id="bad_character"),
        pytest.param("QUJDé", id="non_ascii"),
        pytest.param("=", id="only_padding"),
    ],
)
def test_invalid_base64(value: str) -> None:
    assert part_rejection({**IMAGE, "bytes": value})[:2] == (1, R.INVALID_BASE64)
    assert part_rejection({**THINKING, "redacted": value})[:2] == (1, R.INVALID_BASE64)
    assert part_rejection({**DOCUMENT, "text": "", "bytes": value})[:2] == (1, R.INVALID_BASE64)


# document ------------------------------------------------------------------------------

NO_SOURCE: dict[str, Any] = {**DOCUMENT, "bytes": None, "text": "", "chunks": None, "uri": ""}


@pytest.mark.parametrize(
    ("key", "value"),
    [("bytes", b64(b"%PDF")), ("text", "body"), ("chunks", ["a", "b"]), ("uri", "s3://b/k")],
)
def test_document_accepts_exactly_one_source(key: str, value: Any) -> None:
    decode_one(message_json("user", {**NO_SOURCE, key: value}))


@pytest.mark.parametrize("document_format", [f.value for f in DocumentFormat])
def test_document_formats(document_format: str) -> None:
    decode_one(message_json("user", {**DOCUMENT, "format": document_format}))


def test_document_name_empty() -> None:
    assert part_rejection({**DOCUMENT, "name": ""}) == (
        1,
        R.DOCUMENT_NAME_EMPTY,
        f"{P}.name: must be non-empty",
    )


@pytest.mark.parametrize("document_format", ["PDF", "rtf", "", "markdown", "text/plain"])
def test_document_format(document_format: str) -> None:
    assert part_rejection({**DOCUMENT, "format": document_format})[:2] == (1, R.DOCUMENT_FORMAT)


@pytest.mark.parametrize(
    "sources",
    [
        pytest.param({}, id="none"),
        pytest.param({"bytes": "", "chunks": []}, id="only_empty_values"),
        pytest.param({"bytes": b64(b"x"), "text": "t"}, id="bytes_and_text"),
        pytest.param({"text": "t", "uri": "u"}, id="text_and_uri"),
        pytest.param({"chunks": ["c"], "uri": "u"}, id="chunks_and_uri"),
        pytest.param({"bytes": b64(b"x"), "chunks": ["c"], "text": "t", "uri": "u"}, id="all"),
    ],
)
def test_document_source_count(sources: dict[str, Any]) -> None:
    index, rule, text = part_rejection({**NO_SOURCE, **sources})
    assert (index, rule) == (1, R.DOCUMENT_SOURCE_COUNT)
    assert text.startswith(f"{P}: exactly one of bytes, text, chunks, uri")


def test_document_chunk_empty() -> None:
    assert part_rejection({**NO_SOURCE, "chunks": ["a", ""]}) == (
        1,
        R.DOCUMENT_CHUNK_EMPTY,
        f"{P}.chunks[1]: must be non-empty",
    )


@pytest.mark.parametrize("chunk", [None, 1, ["a"], {"t": "a"}], ids=repr)
def test_wrong_type_of_document_chunk(chunk: Any) -> None:
    index, rule, text = part_rejection({**NO_SOURCE, "chunks": ["a", chunk]})
    assert (index, rule) == (1, R.WRONG_TYPE)
    assert text.startswith(f"{P}.chunks[1]: must be a string")


# citations -----------------------------------------------------------------------------

CITATION: dict[str, Any] = PARTS["citations"]["citations"][0]
LOCATION: dict[str, Any] = CITATION["location"]
SPAN: dict[str, Any] = LOCATION["document_char"]


def citations_with(citation: Any) -> dict[str, Any]:
    return {"kind": "citations", "text": "t", "citations": [CITATION, citation]}


C = f"{P}.citations[1]"


@pytest.mark.parametrize("slot", ["document_char", "document_chunk", "document_page"])
def test_citation_location_slots_take_null_or_a_span(slot: str) -> None:
    location = {"document_char": None, "document_chunk": None, "document_page": None, slot: SPAN}
    decode_one(message_json("assistant", citations_with({**CITATION, "location": location})))


def test_citation_source_content_may_be_null_and_citations_empty() -> None:
    decode_one(message_json("assistant", citations_with({**CITATION, "source_content": None})))
    decode_one(message_json("assistant", {"kind": "citations", "text": "t", "citations": []}))


@pytest.mark.parametrize(
    ("mutate", "rule", "path"),
    [
        pytest.param(lambda c: {**c, "extra": 1}, R.UNKNOWN_KEY, C, id="citation_unknown"),
        pytest.param(lambda c: {**c, "Title": "x"}, R.UNKNOWN_KEY, C, id="citation_case"),
        pytest.param(
            lambda c: {k: v for k, v in c.items() if k != "source_content"},
            R.MISSING_KEY,
            C,
            id="citation_missing",
        ),
        pytest.param(lambda _: "x", R.WRONG_TYPE, C, id="citation_not_object"),
        pytest.param(
            lambda c: {**c, "location": None}, R.WRONG_TYPE, f"{C}.location", id="location_null"
        ),
        pytest.param(
            lambda c: {**c, "location": {**LOCATION, "document_line": None}},
            R.UNKNOWN_KEY,
            f"{C}.location",
            id="location_unknown",
        ),
        pytest.param(
            lambda c: {**c, "location": {"document_char": None, "document_chunk": None}},
            R.MISSING_KEY,
            f"{C}.location",
            id="location_missing",
        ),
        pytest.param(
            lambda c: {**c, "location": {**LOCATION, "document_page": {**SPAN, "page": 1}}},
            R.UNKNOWN_KEY,
            f"{C}.location.document_page",
            id="span_unknown",
        ),
        pytest.param(
            lambda c: {**c, "location": {**LOCATION, "document_chunk": {"start": 0, "end": 1}}},
            R.MISSING_KEY,
            f"{C}.location.document_chunk",
            id="span_missing",
        ),
        pytest.param(
            lambda c: {**c, "location": {**LOCATION, "document_char": {**SPAN, "end": "9"}}},
            R.WRONG_TYPE,
            f"{C}.location.document_char.end",
            id="span_wrong_type",
        ),
        pytest.param(
            lambda c: {**c, "location": {**LOCATION, "document_char": []}},
            R.WRONG_TYPE,
            f"{C}.location.document_char",
            id="span_not_object",
        ),
        pytest.param(
            lambda c: {**c, "source_content": "x"}, R.WRONG_TYPE, f"{C}.source_content", id="sc"
        ),
        pytest.param(
            lambda c: {**c, "source_content": [1]},
            R.WRONG_TYPE,
            f"{C}.source_content[0]",
            id="source_content_item",
        ),
        pytest.param(lambda c: {**c, "title": None}, R.WRONG_TYPE, f"{C}.title", id="title"),
    ],
)
def test_citation_nested_keys_are_exact(
    mutate: Callable[[dict[str, Any]], Any], rule: TranscriptRule, path: str
) -> None:
    index, found_rule, text = part_rejection(citations_with(mutate(copy.deepcopy(CITATION))))
    assert (index, found_rule) == (1, rule)
    assert text.startswith(f"{path}:")


# tool_use / tool_result ----------------------------------------------------------------


def test_tool_use_id_empty() -> None:
    assert part_rejection({**TOOL_USE, "id": ""}) == (
        1,
        R.TOOL_USE_ID_EMPTY,
        f"{P}.id: must be non-empty",
    )


def test_tool_use_name_empty() -> None:
    assert part_rejection({**TOOL_USE, "name": ""}) == (
        1,
        R.TOOL_USE_NAME_EMPTY,
        f"{P}.name: must be non-empty",
    )


def test_tool_use_input_must_be_a_json_object() -> None:
    index, rule, text = part_rejection({**TOOL_USE, "input": [1, 2]})
    assert (index, rule, text) == (1, R.WRONG_TYPE, f"{P}.input: must be a JSON object, got array")
    decode_one(message_json("assistant", {**TOOL_USE, "input": {}}))


def test_tool_result_id_empty() -> None:
    assert part_rejection({**TOOL_RESULT, "tool_use_id": ""}) == (
        1,
        R.TOOL_RESULT_ID_EMPTY,
        f"{P}.tool_use_id: must be non-empty",
    )


@pytest.mark.parametrize(
    "content", [None, True, 0, -1.5, "text", [], [1, "a", None], {}, {"a": {"b": [1]}}], ids=repr
)
def test_tool_result_content_is_any_json_value(content: Any) -> None:
    payload = dumps([message_json("user", {**TOOL_RESULT, "content": content})])
    assert same_json(json.loads(encode_messages(decode_messages(payload))), json.loads(payload))


def test_cache_checkpoint_has_only_kind() -> None:
    decode_one(message_json("user", {"kind": "cache_checkpoint"}))
    assert part_rejection({"kind": "cache_checkpoint", "text": ""})[:2] == (1, R.UNKNOWN_KEY)


# --------------------------------------------------------------------------- errors


def test_error_path_and_index_name_the_offending_value() -> None:
    doc = conversation_json()
    doc[3]["parts"][0]["content"] = {"hits": [{"score": float("nan")}]}
    with pytest.raises(InvalidTranscriptError) as info:
        decode_messages(json.dumps(doc).encode())
    assert info.value.violations[0].index == -1  # NaN text fails before any message
    doc[3]["parts"][0] = {**TOOL_RESULT, "is_error": "yes"}
    with pytest.raises(InvalidTranscriptError) as info:
        decode_messages(dumps(doc))
    (violation,) = info.value.violations
    assert (violation.index, violation.rule) == (3, R.WRONG_TYPE)
    assert str(info.value) == (
        "invalid_transcript: message[3] wrong_type: $[3].parts[0].is_error: "
        "must be a boolean, got string"
    )


def test_decoding_raises_only_the_transcript_error() -> None:
    """Nothing but InvalidTranscriptError escapes, whatever the bytes."""
    for payload in (b"\x00", b"[[[[", b'[{"role":"user","parts":[1],"meta":null}]', b"[[]]"):
        with pytest.raises(InvalidTranscriptError):
            decode_messages(payload)


def test_invalid_transcript_error_stays_backward_compatible() -> None:
    error = error_class_for_code("invalid_transcript")(
        "bad", code="invalid_transcript", status=422, run_id="r", session_id="s", event_key="e"
    )
    assert isinstance(error, InvalidTranscriptError)
    assert isinstance(error, StoreError)
    assert (error.message, error.status, error.run_id, error.violations) == ("bad", 422, "r", [])
    assert InvalidTranscriptError().violations == []


# --------------------------------------------------------------------------- encoder checks

TextMessage = Message(role=Role.USER, parts=[TextPart(text="hi")])


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        pytest.param(
            Message(role=Role.USER, parts=[ImagePart(format=ImageFormat.PNG, bytes=b"")]),
            R.IMAGE_BYTES_EMPTY,
            id="empty_image",
        ),
        pytest.param(
            Message(role=Role.ASSISTANT, parts=[ToolUsePart(id="", name="n")]),
            R.TOOL_USE_ID_EMPTY,
            id="empty_tool_use_id",
        ),
        pytest.param(
            Message(role=Role.USER, parts=[DocumentPart(name="d", format=DocumentFormat.PDF)]),
            R.DOCUMENT_SOURCE_COUNT,
            id="document_without_source",
        ),
        pytest.param(
            Message(role=Role.USER, parts=[ToolResultPart(tool_use_id="a", content={1, 2})]),
            R.WRONG_TYPE,
            id="set_content",
        ),
        pytest.param(
            Message(role=Role.USER, parts=[ToolResultPart(tool_use_id="a", content=(1, 2))]),
            R.WRONG_TYPE,
            id="tuple_content",
        ),
        pytest.param(
            Message(role=Role.USER, parts=[], meta={"x": float("inf")}),
            R.INVALID_JSON,
            id="infinite_meta",
        ),
        pytest.param(
            Message(role=Role.USER, parts=[], meta={1: "x"}),  # type: ignore[dict-item]
            R.WRONG_TYPE,
            id="int_meta_key",
        ),
        pytest.param(Message(role="tool", parts=[]), R.UNKNOWN_ROLE, id="role"),  # type: ignore[arg-type]
        pytest.param(
            Message(role=Role.USER, parts=[ImagePart(format="bmp", bytes=b"x")]),  # type: ignore[arg-type]
            R.IMAGE_FORMAT,
            id="image_format",
        ),
        pytest.param(
            Message(role=Role.USER, parts=[ImagePart(format=ImageFormat.PNG, bytes="AA==")]),  # type: ignore[arg-type]
            R.WRONG_TYPE,
            id="str_for_bytes",
        ),
        pytest.param(
            Message(role=Role.USER, parts=["hello"]),  # type: ignore[list-item]
            R.UNKNOWN_KIND,
            id="not_a_part",
        ),
    ],
)
def test_encoder_refuses_what_the_decoder_would_reject(message: Message, rule: str) -> None:
    with pytest.raises(InvalidTranscriptError) as info:
        encode_messages([TextMessage, message])
    (violation,) = info.value.violations
    assert (violation.index, violation.rule) == (1, rule)
    assert violation.message.startswith("$[1]")


def test_encoder_accepts_role_strings_and_tuples() -> None:
    message = Message(role="user", parts=(TextPart(text="x"),))  # type: ignore[arg-type]
    assert encode_messages([message]) == (
        b'[{"role":"user","parts":[{"kind":"text","text":"x"}],"meta":null}]'
    )
