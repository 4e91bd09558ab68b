"""Opaque page cursors (CONTRACT.md section 4).

A run-record cursor is the ID of the page's last record, as the contract requires. The
session-record and session-run cursors are versioned, base64url-encoded positions;
anything the store could not have issued is ``invalid_argument``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from runtime_store_client import InvalidArgumentError

_DECIMAL = re.compile(r"[1-9][0-9]{0,18}")
_SESSION_RECORDS = "sr1"
_SESSION_RUNS = "sn1"


def _encode(kind: str, value: object) -> str:
    text = json.dumps([kind, value], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(kind: str, cursor: str) -> object:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        raise InvalidArgumentError("cursor was not issued by this store") from None
    if not isinstance(decoded, list) or len(decoded) != 2 or decoded[0] != kind:
        raise InvalidArgumentError("cursor was not issued by this store for this list")
    return decoded[1]


def decode_record_id_cursor(cursor: str, last_id: int) -> int:
    """The record ID after which a run-record page starts (0 for "")."""
    if cursor == "":
        return 0
    if not _DECIMAL.fullmatch(cursor) or int(cursor) > last_id:
        raise InvalidArgumentError("cursor was not issued by this store for this run")
    return int(cursor)


def encode_session_position(position: int) -> str:
    return _encode(_SESSION_RECORDS, position)


def decode_session_position(cursor: str, last_position: int) -> int:
    """The session position after which a session-record page starts (0 for "")."""
    if cursor == "":
        return 0
    position = _decode(_SESSION_RECORDS, cursor)
    if isinstance(position, bool) or not isinstance(position, int):
        raise InvalidArgumentError("cursor was not issued by this store")
    if not 0 < position <= last_position:
        raise InvalidArgumentError("cursor was not issued by this store for this session")
    return position


def encode_run_position(started_at_ms: int, run_id: str) -> str:
    return _encode(_SESSION_RUNS, [started_at_ms, run_id])


def decode_run_position(cursor: str) -> tuple[int, str] | None:
    """The ``(started_at_ms, run_id)`` after which a session-run page starts."""
    if cursor == "":
        return None
    value = _decode(_SESSION_RUNS, cursor)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or isinstance(value[0], bool)
        or not isinstance(value[0], int)
        or not isinstance(value[1], str)
    ):
        raise InvalidArgumentError("cursor was not issued by this store")
    return value[0], value[1]


def check_limit(limit: int, maximum: int) -> int:
    """A page size: > 0, and served as ``maximum`` when larger."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidArgumentError("limit must be a positive integer")
    return min(limit, maximum)
