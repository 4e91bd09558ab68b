"""Strict JSON for transcripts: the failure every rule raises, and JSON values checked.

Every failure raises :class:`~runtime_store_client.InvalidTranscriptError` with exactly
one violation whose message starts with the JSON path of the offending value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from ..errors import InvalidTranscriptError
from .model import JSONValue
from .violations import TranscriptRule, TranscriptViolation

_SURROGATE = re.compile("[\ud800-\udfff]")

# --- failures -------------------------------------------------------------------------


def fail(index: int, rule: TranscriptRule, path: str, text: str) -> NoReturn:
    violation = TranscriptViolation(index, str(rule), f"{path}: {text}")
    raise InvalidTranscriptError(violations=[violation])


def json_type(value: object) -> str:
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


def parse_json_text(payload: bytes) -> Any:
    """Exactly one JSON value from UTF-8 bytes; duplicate keys are found later, in place."""
    if not isinstance(payload, bytes | bytearray | memoryview):
        fail(-1, TranscriptRule.WRONG_TYPE, "$", f"payload must be bytes, got {json_type(payload)}")
    try:
        text = bytes(payload).decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(-1, TranscriptRule.INVALID_JSON, "$", f"not valid UTF-8: {exc.reason}")
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_pairs,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except RecursionError:
        fail(-1, TranscriptRule.INVALID_JSON, "$", "nesting too deep")
    except ValueError as exc:
        fail(-1, TranscriptRule.INVALID_JSON, "$", f"not exactly one JSON value: {exc}")


# --- values ---------------------------------------------------------------------------


def check_string(value: str, path: str, index: int) -> str:
    if _SURROGATE.search(value):
        fail(index, TranscriptRule.INVALID_STRING, path, "string holds an unpaired surrogate")
    return value


def json_value(value: Any, path: str, index: int) -> JSONValue:
    """Check an arbitrary JSON value and return a plain copy of it."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            fail(index, TranscriptRule.INVALID_JSON, path, "number is not finite")
        return value
    if isinstance(value, str):
        return check_string(value, path, index)
    if isinstance(value, list):
        return [json_value(item, f"{path}[{i}]", index) for i, item in enumerate(value)]
    if isinstance(value, dict):
        duplicates = getattr(value, "duplicates", ())
        if duplicates:
            fail(index, TranscriptRule.DUPLICATE_KEY, path, f"duplicate key {duplicates[0]!r}")
        out: dict[str, JSONValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                fail(index, TranscriptRule.WRONG_TYPE, path, f"object key {key!r} is not a string")
            check_string(key, path, index)
            out[key] = json_value(item, f"{path}.{key}", index)
        return out
    fail(index, TranscriptRule.WRONG_TYPE, path, f"not a JSON value: {json_type(value)}")


def require_object(value: Any, path: str, index: int, keys: Iterable[str]) -> Mapping[str, Any]:
    """An object with exactly ``keys``: none missing, none unknown, none repeated."""
    if not isinstance(value, dict):
        fail(index, TranscriptRule.WRONG_TYPE, path, f"must be an object, got {json_type(value)}")
    duplicates = getattr(value, "duplicates", ())
    if duplicates:
        fail(index, TranscriptRule.DUPLICATE_KEY, path, f"duplicate key {duplicates[0]!r}")
    expected = tuple(keys)
    for key in value:
        if key not in expected:
            fail(index, TranscriptRule.UNKNOWN_KEY, path, f"unknown key {key!r}")
    for key in expected:
        if key not in value:
            fail(index, TranscriptRule.MISSING_KEY, path, f"missing key {key!r}")
    return value
