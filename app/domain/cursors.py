"""Opaque page cursors (CONTRACT.md section 4 and 11.1).

A run-record cursor is the ID of the page's last record, as the contract requires. Every
other cursor is sealed: base64url JSON naming its kind, the list that issued it (the
session, the status filter, a digest of a search's filters) and the position the page
ended on, followed by an HMAC of that text under the store's cursor key (kept in the
database, so every replica shares it). A cursor the store did not issue, one edited by a
single bit, or one of another list is ``invalid_argument``; however it was forged (any
bytes, nesting, huge numbers, lone surrogates), decoding answers ``invalid_argument``, never
a server error. The MAC is checked before the JSON is parsed, so nothing a client made up
is ever decoded.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from runtime_store_client import InvalidArgumentError

R = TypeVar("R")

_DECIMAL: Final = re.compile(r"[1-9][0-9]{0,18}")
#: Longer than any cursor the store issues (IDs are bounded); checked before anything else.
MAX_CURSOR_CHARS: Final = 4096
_MAC_BYTES: Final = 16

SESSION_RECORDS: Final = "sr3"
SESSION_RUNS: Final = "sn3"
SESSIONS: Final = "ss1"
RUNS: Final = "rs1"
WEBHOOK_DELIVERIES: Final = "wd1"

_NOT_ISSUED: Final = "cursor was not issued by this store"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode((text + "=" * (-len(text) % 4)).encode("ascii"))


def filters_digest(filters: object) -> str:
    """A short digest of a list's filters (canonical JSON), so a cursor names them."""
    text = json.dumps(filters, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class CursorCodec:
    """Seals and opens cursors under one key."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        self._key = key

    @property
    def key(self) -> bytes:
        return self._key

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:_MAC_BYTES]

    def seal(
        self, kind: str, binding: object, position: Sequence[object], *, at: int | None = None
    ) -> str:
        """``at``: the database position the page was read at (read replicas, CONTRACT.md
        14), so that the next page is read at least as far."""
        tail: list[object] = [] if at is None else [{"at": at}]
        body = json.dumps([kind, binding, *position, *tail], separators=(",", ":")).encode()
        return f"{_b64(body)}.{_b64(self._mac(body))}"

    def open(self, kind: str, cursor: str, binding: object, fields: int) -> list[Any]:
        """The position fields of a cursor this store sealed for ``kind`` and ``binding``."""
        return self.open_at(kind, cursor, binding, fields)[0]

    def open_at(
        self, kind: str, cursor: str, binding: object, fields: int
    ) -> tuple[list[Any], int]:
        """``open``, and the database position the cursor was sealed at (0: none)."""
        if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
            raise InvalidArgumentError(_NOT_ISSUED)
        body_text, _, mac_text = cursor.partition(".")
        try:
            body, mac = _unb64(body_text), _unb64(mac_text)
        except (ValueError, UnicodeError, binascii.Error):
            raise InvalidArgumentError(_NOT_ISSUED) from None
        # Base64 ignores the unused bits of a last character: only the canonical text of
        # the bytes is the cursor the store issued.
        canonical = _b64(body) == body_text and _b64(mac) == mac_text
        if not canonical or not hmac.compare_digest(mac, self._mac(body)):
            raise InvalidArgumentError(_NOT_ISSUED)
        value = json.loads(body)  # the store's own JSON: the MAC matched
        at = 0
        if len(value) == 3 + fields and isinstance(value[-1], dict):
            at = int(value.pop()["at"])
        if value[0] != kind or value[1] != binding or len(value) != 2 + fields:
            raise InvalidArgumentError(f"{_NOT_ISSUED} for this list and these filters")
        return list(value[2:]), at


# --- run records: the last record ID -----------------------------------------------------


#: The largest record ID a run can reach (a ``BIGINT``).
MAX_RECORD_ID: Final = 2**63 - 1


def decode_record_id_cursor(cursor: str, last_id: int) -> int:
    """The record ID after which a run-record page starts (0 for "")."""
    after = record_id_after(cursor)
    check_record_id_issued(after, last_id)
    return after


def record_id_after(cursor: str) -> int:
    """``decode_record_id_cursor`` before the run is known: the ID the cursor names, if it
    could name one; whether it was issued for this run is ``check_record_id_issued``."""
    if cursor == "":
        return 0
    if not isinstance(cursor, str) or not _DECIMAL.fullmatch(cursor):
        raise InvalidArgumentError(f"{_NOT_ISSUED} for this run")
    after = int(cursor)
    if after > MAX_RECORD_ID:
        raise InvalidArgumentError(f"{_NOT_ISSUED} for this run")
    return after


def check_record_id_issued(after: int, last_id: int) -> None:
    """A cursor past the run's last record was not issued for it."""
    if after > last_id:
        raise InvalidArgumentError(f"{_NOT_ISSUED} for this run")


def check_limit(limit: int, maximum: int) -> int:
    """A page size: > 0, and served as ``maximum`` when larger."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidArgumentError("limit must be a positive integer")
    return min(limit, maximum)


def keyset_page(rows: Sequence[R], size: int, seal: Callable[[R], str]) -> tuple[Sequence[R], str]:
    """A page from a keyset read of ``size + 1`` rows: its first ``size`` rows, and the
    cursor after the last of them (``seal``) when the read found more, else ""."""
    if len(rows) > size:
        return rows[:size], seal(rows[size - 1])
    return rows, ""
