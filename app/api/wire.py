"""Wire forms of contract values (CONTRACT.md section 8).

* Times are RFC 3339 strings, read and written by ``runtime_store_client.times`` (the
  rules the client applies too).
* A record payload travels as a string holding the exact JSON text; it becomes the UTF-8
  bytes of that string (a lone surrogate cannot be encoded and is rejected).
* Checkpoint data travels as standard base64 and is decoded strictly.
* Seed bytes (CONTRACT.md 15.8) travel as standard base64 with padding, in its one
  canonical spelling (``SeedBytes``): any other is refused.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

from runtime_store_client.times import (
    EXAMPLE,
    TIME_PATTERN,
    TimeError,
    check_time,
    format_rfc3339,
    parse_rfc3339,
    to_utc,
)


def parse_time(value: Any) -> datetime:
    """An RFC 3339 time with an offset and at most millisecond precision, in UTC."""
    try:
        if isinstance(value, datetime):  # built in Python, not parsed from JSON
            return to_utc(check_time(value))
        if not isinstance(value, str):
            raise TimeError(f"must be an RFC 3339 string such as {EXAMPLE}")
        return parse_rfc3339(value)
    except TimeError as exc:
        raise ValueError(f"time {exc}") from None


#: UTC, millisecond precision, ``Z`` suffix.
format_time = format_rfc3339


def parse_payload(value: Any) -> bytes:
    if isinstance(value, bytes):  # built in Python, not parsed from JSON
        return value
    if not isinstance(value, str):
        raise ValueError("payload must be a string holding the exact JSON text")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("payload holds a lone surrogate and is not valid UTF-8") from None


def format_payload(value: bytes) -> str:
    return value.decode("utf-8")


def parse_base64(value: Any) -> bytes:
    if isinstance(value, bytes):  # built in Python, not parsed from JSON
        return value
    if not isinstance(value, str):
        raise ValueError("data must be a standard base64 string")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("data is not valid standard base64") from None


def format_base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def parse_canonical_base64(value: Any) -> bytes:
    """Seed bytes (CONTRACT.md 15.8): standard base64 with its padding, in the one spelling
    that encodes them (unused bits zero), so that equal bytes are equal text."""
    if isinstance(value, bytes):  # built in Python, not parsed from JSON
        return value
    if not isinstance(value, str):
        raise ValueError("must be a standard base64 string")
    try:
        data = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("is not valid standard base64 with padding") from None
    if format_base64(data) != value:
        raise ValueError("is not canonical standard base64 (padded, unused bits zero)")
    return data


Time = Annotated[
    datetime,
    BeforeValidator(parse_time),
    PlainSerializer(format_time, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "pattern": TIME_PATTERN,
            "description": "RFC 3339 time with any offset, read as UTC; written as UTC with "
            "exactly three fraction digits and `Z`. Digits past the milliseconds must be "
            "zeros (a finer part is an error, never truncated).",
            "examples": [EXAMPLE],
        }
    ),
]

Payload = Annotated[
    bytes,
    BeforeValidator(parse_payload),
    PlainSerializer(format_payload, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "description": "The exact JSON text of the payload; stored and returned byte for "
            "byte (never re-serialised).",
            "examples": ['{"note":"thinking"}'],
        }
    ),
]

Base64Bytes = Annotated[
    bytes,
    BeforeValidator(parse_base64),
    PlainSerializer(format_base64, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "byte",
            "description": "Opaque bytes as standard base64.",
            "examples": ["AAFvcGFxdWX/"],
        }
    ),
]

#: Checkpoint data (CONTRACT.md 1.6): required and non-empty, so its base64 is too. The
#: document says so; the store refuses empty data with its own message.
CheckpointData = Annotated[
    bytes,
    BeforeValidator(parse_base64),
    PlainSerializer(format_base64, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "byte",
            "minLength": 1,
            "description": "Non-empty opaque bytes as standard base64.",
            "examples": ["AAFvcGFxdWX/"],
        }
    ),
]

#: Seed bytes (15.8): canonical padded standard base64, decoded and refused strictly.
SeedBytes = Annotated[
    bytes,
    BeforeValidator(parse_canonical_base64),
    PlainSerializer(format_base64, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "byte",
            "description": "Non-empty bytes as standard base64 with padding; any other "
            "spelling (unpadded, URL-safe, non-zero unused bits) is invalid_argument.",
            "examples": ["eyJyZXF1ZXN0IjoiY29tcGlsZWQifQ=="],
        }
    ),
]


#: A request digest as the examples show it (12.1).
EXAMPLE_DIGEST = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
_HEX_DIGITS = frozenset("0123456789abcdef")


def parse_digest(value: Any) -> bytes | None:
    """A request digest: ``null``, or 64 lowercase hex characters (32 bytes); whether the
    bytes are a valid digest (not all zero) is the store's rule."""
    if value is None or isinstance(value, bytes):  # bytes: built in Python, not parsed
        return value
    if not isinstance(value, str) or len(value) != 64 or not _HEX_DIGITS.issuperset(value):
        raise ValueError("request_digest must be 64 lowercase hex characters or null")
    return bytes.fromhex(value)


def format_digest(value: bytes | None) -> str | None:
    return None if value is None else value.hex()
