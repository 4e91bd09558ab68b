"""Opaque page cursors (CONTRACT.md section 4).

A run-record cursor is the ID of the page's last record, as the contract requires. The
session-record and session-run cursors are versioned, base64url-encoded JSON that names
the list that issued them (the session, and for session runs the status filter) and the
row the page ended on: the session position *with* the run ID and record ID found there,
or the run's start time *with* its run ID. The store checks that the row exists as the
cursor describes it, so a cursor of another list, an edited position or a made-up one is
``invalid_argument``; records and run starts never change, so an issued cursor stays valid.
However a cursor was forged (any bytes, nesting, huge numbers, lone surrogates), decoding
it answers ``invalid_argument``, never a server error.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from runtime_store_client import InvalidArgumentError

from .text import check_plain_text

_DECIMAL: Final = re.compile(r"[1-9][0-9]{0,18}")
_SESSION_RECORDS: Final = "sr2"
_SESSION_RUNS: Final = "sn2"
#: Longer than any cursor the store issues (IDs are bounded); checked before decoding.
MAX_CURSOR_CHARS: Final = 4096
#: Positions, record IDs and times are BIGINT columns.
_MAX_INT: Final = 2**63 - 1

_NOT_ISSUED: Final = "cursor was not issued by this store"


def _foreign(what: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"cursor was not issued by this store for this {what}")


def _encode(value: list[object]) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(kind: str, cursor: str, fields: int) -> list[object]:
    """The cursor's fields after its kind, or ``invalid_argument``."""
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
        raise InvalidArgumentError(_NOT_ISSUED)
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error, RecursionError):
        raise InvalidArgumentError(_NOT_ISSUED) from None
    if not isinstance(decoded, list) or len(decoded) != fields + 1 or decoded[0] != kind:
        raise InvalidArgumentError(f"{_NOT_ISSUED} for this list")
    return decoded[1:]


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_INT:
        raise InvalidArgumentError(_NOT_ISSUED)
    return value


def _time(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > _MAX_INT:
        raise InvalidArgumentError(_NOT_ISSUED)
    return value


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(_NOT_ISSUED)
    try:
        check_plain_text(value, "cursor")
    except InvalidArgumentError:
        raise InvalidArgumentError(_NOT_ISSUED) from None
    return value


# --- run records: the last record ID -----------------------------------------------------


def decode_record_id_cursor(cursor: str, last_id: int) -> int:
    """The record ID after which a run-record page starts (0 for "")."""
    if cursor == "":
        return 0
    if not isinstance(cursor, str) or not _DECIMAL.fullmatch(cursor) or int(cursor) > last_id:
        raise _foreign("run")
    return int(cursor)


# --- session records: the session position and the record found there --------------------


@dataclass(frozen=True, slots=True)
class SessionPosition:
    """Where a session-record page ended: a position and the record that holds it."""

    position: int
    run_id: str
    record_id: int


def encode_session_position(session_id: str, at: SessionPosition) -> str:
    return _encode([_SESSION_RECORDS, session_id, at.position, at.run_id, at.record_id])


def decode_session_position(cursor: str, session_id: str) -> SessionPosition | None:
    """The position after which a session-record page starts (``None`` for "").

    The caller checks that the record named is at that position of this session."""
    if cursor == "":
        return None
    owner, position, run_id, record_id = _decode(_SESSION_RECORDS, cursor, 4)
    if owner != session_id:
        raise _foreign("session")
    return SessionPosition(_int(position), _text(run_id), _int(record_id))


# --- session runs: the last run's start time and ID ---------------------------------------


@dataclass(frozen=True, slots=True)
class RunPosition:
    """Where a session-run page ended: the last run's start time and ID."""

    started_at_ms: int
    run_id: str


def encode_run_position(session_id: str, statuses: Sequence[str], at: RunPosition) -> str:
    return _encode([_SESSION_RUNS, session_id, list(statuses), at.started_at_ms, at.run_id])


def decode_run_position(
    cursor: str, session_id: str, statuses: Sequence[str]
) -> RunPosition | None:
    """The run after which a session-run page starts (``None`` for "").

    The caller checks that the run exists in this session with that start time."""
    if cursor == "":
        return None
    owner, wanted, started_at_ms, run_id = _decode(_SESSION_RUNS, cursor, 4)
    if owner != session_id or wanted != list(statuses):
        raise _foreign("session and status filter")
    return RunPosition(_time(started_at_ms), _text(run_id))


def check_limit(limit: int, maximum: int) -> int:
    """A page size: > 0, and served as ``maximum`` when larger."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidArgumentError("limit must be a positive integer")
    return min(limit, maximum)
