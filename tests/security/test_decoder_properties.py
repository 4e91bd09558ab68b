"""Properties of the strict payload decoders (CONTRACT.md section 5).

Against arbitrary bytes the decoders only ever raise ``invalid_argument``. They accept
exactly the valid documents: every valid document, however it is written (keys in any
order, optional keys left out, ``null`` where allowed, escaped or raw multibyte text, any
JSON whitespace), decodes to the facts it states; every mutation that breaks a rule of
section 5 (unknown or misspelt key, wrong JSON type, duplicate key, trailing value,
invalid UTF-8, top-level ``null``) is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.domain.payloads import (
    check_json_text,
    decode_cancellation_intent,
    decode_child_run_linked,
    decode_run_completed,
    decode_run_started,
    decode_run_suspended,
    parse_json,
)
from runtime_store_client import InvalidArgumentError

#: Hypothesis' default count: the examples differ from run to run, so the runs add up; 200
#: per property cost the suite more CPU than most modules (docs/performance.md, "The
#: suite's CPU").
PROPERTY_SETTINGS: Final = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

Draw = Callable[[st.SearchStrategy[Any]], Any]

# --- rendering JSON in every legal spelling --------------------------------------------

#: The spelling (spaces, escapes, key order) comes from one seeded ``Random`` per document:
#: a single draw, so the generator stays fast; the seed still reproduces any failure.
SPELLINGS: Final = st.randoms(use_true_random=True)
_WHITESPACE: Final = ("", "", "", " ", "\n", "\t", "\r\n  ")
_SHORT_ESCAPES: Final = {
    **{'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f"},
    **{"\n": "\\n", "\r": "\\r", "\t": "\\t"},
}


def _u_escape(char: str, spelling: Random) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}" if spelling.random() < 0.5 else f"\\u{code:04X}"
    code -= 0x10000  # a surrogate pair
    high, low = 0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)
    return f"\\u{high:04X}\\u{low:04x}"


def render_string(text: str, spelling: Random) -> str:
    """A JSON string literal for ``text``, each character raw or escaped at random."""
    out = ['"']
    for char in text:
        must_escape = char in '"\\' or ord(char) < 0x20
        if not must_escape and spelling.random() < 0.6:
            out.append(char)
        elif char in _SHORT_ESCAPES and spelling.random() < 0.5:
            out.append(_SHORT_ESCAPES[char])
        else:
            out.append(_u_escape(char, spelling))
    out.append('"')
    return "".join(out)


def _space(spelling: Random) -> str:
    return spelling.choice(_WHITESPACE)


def render(value: Any, spelling: Random) -> str:
    """``value`` as JSON text, in a random legal spelling (key order, spaces, escapes)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return render_string(value, spelling)
    if isinstance(value, list):
        items = [f"{_space(spelling)}{render(item, spelling)}{_space(spelling)}" for item in value]
        return f"[{','.join(items) or _space(spelling)}]"
    assert isinstance(value, dict)
    pairs = list(value.items())
    spelling.shuffle(pairs)
    return render_pairs(pairs, spelling)


def render_pairs(pairs: list[tuple[str, Any]], spelling: Random) -> str:
    """An object of ``pairs`` in their order: also the way to write a duplicate key."""
    members = [
        f"{_space(spelling)}{render_string(key, spelling)}{_space(spelling)}:"
        f"{_space(spelling)}{render(item, spelling)}{_space(spelling)}"
        for key, item in pairs
    ]
    return "{" + (",".join(members) or _space(spelling)) + "}"


def document(value: Any, draw: Draw) -> bytes:
    """A whole payload: the value in a drawn spelling, with outer whitespace, as UTF-8."""
    spelling: Random = draw(SPELLINGS)
    return f"{_space(spelling)}{render(value, spelling)}{_space(spelling)}".encode()


# --- value strategies ------------------------------------------------------------------

#: Escaped or multibyte text: any code point but lone surrogates (not encodable as UTF-8).
TEXT: Final = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\u00e9", "e\u0301", "\u0000", "\u2028", "\U0001f600", '"', "\\"]),
    ),
    max_size=8,
).map("".join)
NON_EMPTY_TEXT: Final = TEXT.filter(bool)
INT64: Final = st.integers(-(2**63), 2**63 - 1)
LABELS: Final = st.dictionaries(TEXT, TEXT, max_size=3)
JSON_VALUES: Final = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | TEXT
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def optional_fields(
    draw: Draw, fields: Mapping[str, st.SearchStrategy[Any]], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Each field with its generated value, or left out (unless required)."""
    return {
        name: draw(strategy)
        for name, strategy in fields.items()
        if name in required or draw(st.booleans())
    }


# --- the decoders under test, with their valid documents -------------------------------


@dataclass(frozen=True)
class Decoder:
    """A strict decoder, how to build its valid documents, and what it must decode them to."""

    name: str
    decode: Callable[[bytes], Any]
    #: Draws a valid document as a Python value.
    valid: Callable[[Draw], dict[str, Any]]
    #: What the decoder must return for a valid document.
    expected: Callable[[dict[str, Any]], Any]
    #: Wrong-typed values, by top-level field.
    wrong_types: Mapping[str, st.SearchStrategy[Any]]
    #: Whether unknown keys are refused (a cancellation intent ignores them).
    strict_keys: bool = True


def _decoded(value: Any) -> Any:
    """A decoder's result as plain data, to compare with the expected facts."""
    return value if isinstance(value, str) else vars(value)


_NOT_STRING: Final = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.lists(TEXT, max_size=2)
) | st.dictionaries(TEXT, TEXT, max_size=2)
_NOT_INTEGER: Final = st.one_of(
    st.none(),
    st.booleans(),
    TEXT,
    st.sampled_from([1.0, 1.5, -0.0, 1e3]),
    st.sampled_from([2**63, -(2**63) - 1, 10**30]),
    st.lists(st.integers(), max_size=2),
)
_NOT_BOOLEAN: Final = st.one_of(st.none(), st.integers(0, 1), TEXT, st.lists(st.booleans()))
_NOT_LABELS: Final = st.one_of(
    st.booleans(),
    st.integers(),
    TEXT,
    st.lists(TEXT, max_size=2),
    st.dictionaries(TEXT, _NOT_STRING, min_size=1, max_size=2),
)
_NOT_STRINGS: Final = st.one_of(
    st.booleans(),
    st.integers(),
    TEXT,
    st.dictionaries(TEXT, TEXT, max_size=2),
    st.lists(_NOT_STRING, min_size=1, max_size=2),
)


def _run_started(draw: Draw) -> dict[str, Any]:
    fields = {"ParentRunID": TEXT, "PredecessorRunID": TEXT, "Labels": st.none() | LABELS}
    return optional_fields(draw, fields)


def _child_run_linked(draw: Draw) -> dict[str, Any]:
    return optional_fields(
        draw, dict.fromkeys(("ToolName", "ToolCallID", "ChildRunID", "ChildAgentID"), TEXT)
    )


def _run_suspended(draw: Draw) -> dict[str, Any]:
    fields = {
        "SuspensionID": TEXT,
        "Version": TEXT,
        "PendingCount": INT64,
        "RequiredTools": st.none() | st.lists(TEXT, max_size=3),
    }
    return optional_fields(draw, fields)


_FAILURE_FIELDS: Final = {
    "message": NON_EMPTY_TEXT,
    "kind": NON_EMPTY_TEXT,
    "debug_message": TEXT,
    "provider": TEXT,
    "operation": TEXT,
    "code": TEXT,
    "http_status": INT64,
    "retryable": st.booleans(),
}
_RUN_STATUS: Final = {"success": "completed", "failed": "failed", "canceled": "canceled"}


def _run_completed(draw: Draw) -> dict[str, Any]:
    status = draw(st.sampled_from(sorted(_RUN_STATUS)))
    doc: dict[str, Any] = {"status": status, "phase": _RUN_STATUS[status]}
    if status == "failed":
        doc["failure"] = optional_fields(draw, _FAILURE_FIELDS, required=("message", "kind"))
    if status == "canceled":
        doc["cancellation"] = {"reason": draw(NON_EMPTY_TEXT)}
    labels = draw(st.sampled_from(["omitted", "null", "object"]))
    if labels != "omitted":
        doc["labels"] = None if labels == "null" else draw(LABELS)
    return doc


def _cancellation_intent(draw: Draw) -> dict[str, Any]:
    doc: dict[str, Any] = draw(
        st.dictionaries(TEXT.filter(lambda k: k != "reason"), JSON_VALUES, max_size=3)
    )
    if draw(st.booleans()):
        doc["reason"] = draw(TEXT)
    return doc


DECODERS: Final = [
    Decoder(
        "run_started",
        decode_run_started,
        _run_started,
        lambda d: {
            "parent_run_id": d.get("ParentRunID", ""),
            "predecessor_run_id": d.get("PredecessorRunID", ""),
            "labels": d.get("Labels") or {},
        },
        {"ParentRunID": _NOT_STRING, "PredecessorRunID": _NOT_STRING, "Labels": _NOT_LABELS},
    ),
    Decoder(
        "child_run_linked",
        decode_child_run_linked,
        _child_run_linked,
        lambda d: {
            "tool_name": d.get("ToolName", ""),
            "tool_call_id": d.get("ToolCallID", ""),
            "child_run_id": d.get("ChildRunID", ""),
            "child_agent_id": d.get("ChildAgentID", ""),
        },
        dict.fromkeys(("ToolName", "ToolCallID", "ChildRunID", "ChildAgentID"), _NOT_STRING),
    ),
    Decoder(
        "run_suspended",
        decode_run_suspended,
        _run_suspended,
        lambda d: {
            "suspension_id": d.get("SuspensionID", ""),
            "version": d.get("Version", ""),
            "pending_count": d.get("PendingCount", 0),
            "required_tools": d.get("RequiredTools") or [],
        },
        {
            "SuspensionID": _NOT_STRING,
            "Version": _NOT_STRING,
            "PendingCount": _NOT_INTEGER,
            "RequiredTools": _NOT_STRINGS,
        },
    ),
    Decoder(
        "run_completed",
        decode_run_completed,
        _run_completed,
        lambda d: {
            "status": d["status"],
            "phase": d["phase"],
            "run_status": _RUN_STATUS[d["status"]],
            "cancellation_reason": d.get("cancellation", {}).get("reason", ""),
            "labels": d.get("labels") or {},
        },
        {"status": _NOT_STRING, "phase": _NOT_STRING, "labels": _NOT_LABELS},
    ),
    Decoder(
        "runtime.cancellation_intent",
        decode_cancellation_intent,
        _cancellation_intent,
        lambda d: d.get("reason", ""),
        {"reason": _NOT_STRING},
        strict_keys=False,
    ),
]
BY_NAME: Final = {decoder.name: decoder for decoder in DECODERS}
ANY_DECODER: Final = st.sampled_from(DECODERS)


def rejects(decode: Callable[[bytes], Any], payload: bytes) -> InvalidArgumentError:
    with pytest.raises(InvalidArgumentError) as info:
        decode(payload)
    assert info.value.code == "invalid_argument"
    assert info.value.status == 422
    return info.value


def refusal(decode: Callable[[bytes], Any], payload: bytes) -> InvalidArgumentError | None:
    """The error a decoder refuses ``payload`` with; anything else propagates."""
    try:
        decode(payload)
    except InvalidArgumentError as exc:
        return exc
    return None


# --- arbitrary bytes -------------------------------------------------------------------


@st.composite
def near_valid_bytes(draw: Draw) -> bytes:
    """A valid document of some decoder with a few bytes flipped, inserted or cut."""
    decoder = draw(st.sampled_from(DECODERS))
    data = bytearray(document(decoder.valid(draw), draw))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["flip", "insert", "cut"]))
        if edit == "insert" or not data:
            data[at:at] = draw(st.binary(min_size=1, max_size=3))
        elif edit == "flip":
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        else:
            del data[at : at + draw(st.integers(1, 4))]
    return bytes(data)


ARBITRARY_BYTES: Final = st.one_of(
    st.binary(max_size=64),
    near_valid_bytes(),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
)
ALL_DECODE_FUNCTIONS: Final = [
    *(decoder.decode for decoder in DECODERS),
    check_json_text,
    parse_json,
    lambda payload: parse_json(payload, allow_duplicates=False),
]


@PROPERTY_SETTINGS
@given(payload=ARBITRARY_BYTES)
@example(payload=b"[" * 100_000)
@example(payload=b'{"a":' * 50_000)
@example(payload=b"1" * 5_000)
@example(payload=b"")
def test_decoders_raise_only_invalid_argument_on_arbitrary_bytes(payload: bytes) -> None:
    for decode in ALL_DECODE_FUNCTIONS:
        error = refusal(decode, payload)
        assert error is None or (error.code, error.status) == ("invalid_argument", 422)


# --- valid documents -------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(decoder=ANY_DECODER, data=st.data())
def test_every_spelling_of_a_valid_document_is_accepted_with_its_facts(
    decoder: Decoder, data: st.DataObject
) -> None:
    value = decoder.valid(data.draw)
    payload = document(value, data.draw)

    assert _decoded(decoder.decode(payload)) == decoder.expected(value)


@PROPERTY_SETTINGS
@given(data=st.data())
def test_any_single_json_value_is_ordinary_payload_text(data: st.DataObject) -> None:
    value = data.draw(JSON_VALUES)
    payload = document(value, data.draw)

    check_json_text(payload)
    assert parse_json(payload) == value


# --- invalid mutations -----------------------------------------------------------------


def _misspelt(key: str) -> st.SearchStrategy[str]:
    variants = {key.lower(), key.upper(), key.swapcase(), f"{key} ", f" {key}", key + "s"}
    return st.sampled_from(sorted(variants - {key}))


@PROPERTY_SETTINGS
@given(decoder=st.sampled_from([d for d in DECODERS if d.strict_keys]), data=st.data())
def test_an_unknown_or_misspelt_key_is_rejected(decoder: Decoder, data: st.DataObject) -> None:
    value = decoder.valid(data.draw)
    known = {*decoder.wrong_types, *value}
    if decoder.name == "run_completed":
        known |= {"failure", "cancellation"}
    misspelt = data.draw(st.sampled_from(sorted(known)).flatmap(_misspelt))
    unknown = data.draw(st.one_of(st.just(misspelt), TEXT).filter(lambda k: k not in known))
    value[unknown] = data.draw(JSON_VALUES)

    rejects(decoder.decode, document(value, data.draw))


@PROPERTY_SETTINGS
@given(data=st.data())
def test_an_unknown_key_in_a_nested_failure_or_cancellation_is_rejected(
    data: st.DataObject,
) -> None:
    value = data.draw(
        st.sampled_from(
            [
                {"status": "failed", "phase": "failed", "failure": {"message": "m", "kind": "k"}},
                {"status": "canceled", "phase": "canceled", "cancellation": {"reason": "r"}},
            ]
        )
    )
    nested = value.get("failure", value.get("cancellation"))
    assert isinstance(nested, dict)
    known = {*_FAILURE_FIELDS, "reason"}
    key = data.draw(
        st.one_of(st.sampled_from(sorted(known)).flatmap(_misspelt), TEXT).filter(
            lambda k: k not in known
        )
    )
    nested[key] = data.draw(JSON_VALUES)

    rejects(decode_run_completed, document(value, data.draw))


@PROPERTY_SETTINGS
@given(decoder=ANY_DECODER, data=st.data())
def test_a_value_of_the_wrong_json_type_is_rejected(decoder: Decoder, data: st.DataObject) -> None:
    value = decoder.valid(data.draw)
    field = data.draw(st.sampled_from(sorted(decoder.wrong_types)))
    value[field] = data.draw(decoder.wrong_types[field])

    rejects(decoder.decode, document(value, data.draw))


@PROPERTY_SETTINGS
@given(data=st.data())
def test_a_wrong_type_inside_a_failure_or_cancellation_is_rejected(data: st.DataObject) -> None:
    wrong = {
        "message": _NOT_STRING,
        "kind": _NOT_STRING,
        "debug_message": _NOT_STRING,
        "provider": _NOT_STRING,
        "operation": _NOT_STRING,
        "code": _NOT_STRING,
        "http_status": _NOT_INTEGER,
        "retryable": _NOT_BOOLEAN,
    }
    if data.draw(st.booleans()):
        failure = optional_fields(data.draw, _FAILURE_FIELDS, required=("message", "kind"))
        field = data.draw(st.sampled_from(sorted(wrong)))
        failure[field] = data.draw(wrong[field])
        value: dict[str, Any] = {"status": "failed", "phase": "failed", "failure": failure}
    else:
        reason = data.draw(st.one_of(_NOT_STRING, st.just("")))
        value = {"status": "canceled", "phase": "canceled", "cancellation": {"reason": reason}}
    if data.draw(st.booleans()):  # or the whole object is not one
        key = "failure" if "failure" in value else "cancellation"
        value[key] = data.draw(st.one_of(st.none(), TEXT, st.integers(), st.lists(TEXT)))

    rejects(decode_run_completed, document(value, data.draw))


@PROPERTY_SETTINGS
@given(data=st.data())
def test_failure_and_cancellation_appear_exactly_when_the_status_needs_them(
    data: st.DataObject,
) -> None:
    value = BY_NAME["run_completed"].valid(data.draw)
    status = value["status"]
    mutation = data.draw(st.sampled_from(["add failure", "add cancellation", "drop", "phase"]))
    if mutation == "add failure" and status != "failed":
        value["failure"] = {"message": "m", "kind": "k"}
    elif mutation == "add cancellation" and status != "canceled":
        value["cancellation"] = {"reason": "r"}
    elif mutation == "drop" and status != "success":
        del value["failure" if status == "failed" else "cancellation"]
    else:
        value["phase"] = data.draw(TEXT.filter(lambda p: p != _RUN_STATUS[status]))

    rejects(decode_run_completed, document(value, data.draw))


@PROPERTY_SETTINGS
@given(decoder=ANY_DECODER, data=st.data())
def test_a_duplicate_key_is_rejected(decoder: Decoder, data: st.DataObject) -> None:
    value = decoder.valid(data.draw)
    pairs = list(value.items())
    if not pairs:
        pairs = [(next(iter(decoder.wrong_types)), "")]
    key, item = data.draw(st.sampled_from(pairs))
    again = data.draw(st.sampled_from([item, "other", None]))
    pairs.insert(data.draw(st.integers(0, len(pairs))), (key, again))

    rejects(decoder.decode, render_pairs(pairs, data.draw(SPELLINGS)).encode())


@PROPERTY_SETTINGS
@given(decoder=ANY_DECODER, data=st.data())
def test_a_trailing_value_or_trailing_bytes_are_rejected(
    decoder: Decoder, data: st.DataObject
) -> None:
    payload = document(decoder.valid(data.draw), data.draw)
    trailing = data.draw(
        st.one_of(
            JSON_VALUES.map(lambda v: (" " + json.dumps(v)).encode()),
            st.sampled_from([b"{}", b" x", b",", b"]", b"}", b"\x00", b"//"]),
        )
    )

    rejects(decoder.decode, payload + trailing)


@PROPERTY_SETTINGS
@given(decode=st.sampled_from([check_json_text, parse_json]), data=st.data())
def test_ordinary_payload_text_rejects_a_second_value_and_non_json_constants(
    decode: Callable[[bytes], Any], data: st.DataObject
) -> None:
    payload = document(data.draw(JSON_VALUES), data.draw)
    broken = data.draw(
        st.one_of(
            JSON_VALUES.map(lambda v: payload + b" " + json.dumps(v).encode()),
            st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"[NaN]", b'{"a":Infinity}']),
            st.just(b""),
        )
    )
    rejects(decode, broken)


#: Invalid UTF-8: lone continuation bytes, truncated sequences, overlong forms, encoded
#: surrogates, code points above U+10FFFF, bytes that never occur.
INVALID_UTF8: Final = st.sampled_from(
    [
        b"\x80",
        b"\xbf",
        b"\xc3",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\xc0\xaf",
        b"\xc1\xbf",
        b"\xe0\x80\xaf",
        b"\xf0\x80\x80\xaf",
        b"\xed\xa0\x80",
        b"\xed\xbf\xbf",
        b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80",
        b"\xfe",
        b"\xff",
    ]
)


@PROPERTY_SETTINGS
@given(decode=st.sampled_from(ALL_DECODE_FUNCTIONS), data=st.data())
def test_invalid_utf8_spliced_into_a_string_is_rejected(
    decode: Callable[[bytes], Any], data: st.DataObject
) -> None:
    text = data.draw(TEXT)
    bad = data.draw(INVALID_UTF8)
    at = data.draw(st.integers(0, len(text)))
    literal = b'"' + text[:at].encode() + bad + text[at:].encode() + b'"'
    decoder = data.draw(st.sampled_from(DECODERS))
    field = data.draw(st.sampled_from(sorted(decoder.wrong_types)))
    payload = b"{" + json.dumps(field).encode() + b":" + literal + b"}"

    error = rejects(decode, payload)
    assert "UTF-8" in error.message


@PROPERTY_SETTINGS
@given(
    decoder=ANY_DECODER,
    space=st.lists(st.sampled_from([" ", "\t", "\n", "\r"]), max_size=3).map("".join),
)
def test_a_top_level_null_is_rejected(decoder: Decoder, space: str) -> None:
    rejects(decoder.decode, f"{space}null{space}".encode())


@PROPERTY_SETTINGS
@given(value=JSON_VALUES.filter(lambda v: not isinstance(v, dict)))
def test_a_cancellation_intent_that_is_not_an_object_is_rejected(value: Any) -> None:
    rejects(decode_cancellation_intent, json.dumps(value).encode())
