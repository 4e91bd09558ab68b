"""Positions (CONTRACT.md 14): PostgreSQL's WAL locations, as integers of bytes, in
PostgreSQL's own spelling; the primary's position now; and what one HTTP request asks of
its reads (``Runtime-Store-Min-Position``) and learns of its writes
(``Runtime-Store-Position``), shared with the database threads it calls. Which database
serves a read is ``replicas.py``'s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

from sqlalchemy.engine import Connection, Engine

_POSITION_SQL: Final = "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint"


def format_position(value: int) -> str:
    """PostgreSQL's own spelling of an LSN: two hexadecimal halves, ``16/B374D848``."""
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


def parse_position(text: str) -> int:
    """An LSN as PostgreSQL spells it; ``ValueError`` for anything else."""
    high, slash, low = text.strip().partition("/")
    if not slash or not (0 < len(high) <= 8 and 0 < len(low) <= 8):
        raise ValueError(f"not a position: {text!r}")
    if not all(char in "0123456789abcdefABCDEF" for char in high + low):
        raise ValueError(f"not a position: {text!r}")
    return (int(high, 16) << 32) | int(low, 16)


@dataclass(slots=True)
class RequestPositions:
    """One HTTP request's positions, shared with the database threads it calls."""

    #: Whether this request's reads may be served by a replica.
    routed: bool = False
    #: The position the client has seen (``Runtime-Store-Min-Position``), 0 for none.
    min_position: int = 0
    #: The highest position after this request's writes, 0 while it wrote nothing.
    written: int = 0


_REQUEST: ContextVar[RequestPositions | None] = ContextVar(
    "runtime_store_request_positions", default=None
)


@contextmanager
def request_positions(positions: RequestPositions) -> Iterator[RequestPositions]:
    """Make ``positions`` those of the calls made in this context."""
    token = _REQUEST.set(positions)
    try:
        yield positions
    finally:
        _REQUEST.reset(token)


def current() -> RequestPositions | None:
    return _REQUEST.get()


def primary_position(conn: Connection | Engine) -> int:
    """The primary's WAL position now: past every commit made before this call."""
    if isinstance(conn, Engine):
        with conn.connect() as own:
            return primary_position(own)
    return int(conn.exec_driver_sql(_POSITION_SQL).scalar_one())


def note_write(conn: Connection) -> None:
    """Tell the HTTP request whose write just committed on ``conn`` the primary's position
    now, past that commit (its ``Runtime-Store-Position``)."""
    request = _REQUEST.get()
    if request is None:
        return
    position = primary_position(conn)
    if conn.in_transaction():
        conn.rollback()
    request.written = max(request.written, position)
