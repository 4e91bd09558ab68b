"""Wire forms of contract values (CONTRACT.md section 8).

* Times are RFC 3339 strings; on output always UTC with exactly three fraction digits
  (``2026-11-30T01:02:03.456Z``); on input any offset is accepted, and a non-zero part
  finer than a millisecond is an error, never truncated.
* A record payload travels as a string holding the exact JSON text; it becomes the UTF-8
  bytes of that string (a lone surrogate cannot be encoded and is rejected).
* Checkpoint data travels as standard base64 and is decoded strictly.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
    r"(?:\.(?P<frac>\d+))?(?P<tz>[Zz]|[+-]\d{2}:\d{2})"
)


def parse_time(value: Any) -> datetime:
    """An RFC 3339 time with an offset and at most millisecond precision."""
    if isinstance(value, datetime):  # built in Python, not parsed from JSON
        if value.tzinfo is None:
            raise ValueError("time must carry a UTC offset")
        if value.microsecond % 1000:
            raise ValueError("time has sub-millisecond precision")
        return _utc(value)
    if not isinstance(value, str):
        raise ValueError("time must be an RFC 3339 string such as 2026-11-30T01:02:03.456Z")
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise ValueError("time must be an RFC 3339 string such as 2026-11-30T01:02:03.456Z")
    fraction = match["frac"] or ""
    if fraction[3:].strip("0"):
        raise ValueError("time has sub-millisecond precision")
    tz = match["tz"].upper()
    if tz == "Z":
        zone = UTC
    else:
        sign = -1 if tz[0] == "-" else 1
        offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
        zone = timezone(sign * offset)
    try:
        parsed = datetime.fromisoformat(
            f"{match['date']}T{match['h']}:{match['m']}:{match['s']}"
        ).replace(microsecond=int((fraction[:3] or "0").ljust(3, "0")) * 1000, tzinfo=zone)
    except ValueError as exc:
        raise ValueError(f"time is not a valid date and time: {exc}") from None
    return _utc(parsed)


def _utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("time is outside the years 0001-9999 in UTC") from None


def format_time(value: datetime) -> str:
    """UTC, millisecond precision, ``Z`` suffix."""
    utc = value.astimezone(UTC)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond // 1000:03d}Z"
    )


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


Time = Annotated[
    datetime,
    BeforeValidator(parse_time),
    PlainSerializer(format_time, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339 time, UTC, millisecond precision.",
            "examples": ["2026-11-30T01:02:03.456Z"],
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
