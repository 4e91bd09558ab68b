"""Keys the service keeps in its database, so that every replica and restart shares them.

The cursor key seals page cursors (``app.domain.cursors``). Migration 0006 creates it; a
database emptied by hand gets a new one on first use (an insert that loses a race to a
concurrent replica reads the winner's key instead). A new key only voids cursors already
handed out.
"""

from __future__ import annotations

import os
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.cursors import CursorCodec
from app.domain.times import now_millis
from app.storage.database.tables import service_keys
from app.storage.unit_of_work.transactions import Tx, UnitOfWork
from runtime_store_client import InvalidArgumentError

CURSOR_KEY: Final = "cursor"
KEY_BYTES: Final = 32


def _load_or_create(tx: Tx, name: str) -> bytes:
    row = tx.conn.execute(
        sa.select(service_keys.c.secret).where(service_keys.c.name == name)
    ).first()
    if row is not None:
        return bytes(row.secret)
    secret = os.urandom(KEY_BYTES)
    # A concurrent creator makes this insert fail; the unit of work retries and reads it.
    tx.conn.execute(service_keys.insert().values(name=name, secret=secret, created_at_ms=tx.now_ms))
    return secret


class CursorKeys:
    """The cursor codec of one store, loaded from the database once."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow
        self._codec: CursorCodec | None = None

    def codec(self) -> CursorCodec:
        # No lock around the load: calls awaited on one event loop may load it twice
        # (the same key both times), but must never block the loop's thread on a lock.
        if self._codec is None:
            self._codec = self._load()
        return self._codec

    def loaded(self) -> CursorCodec | None:
        """The codec if it is loaded already (never reads the database)."""
        return self._codec

    def _load(self) -> CursorCodec:
        return CursorCodec(self._uow.write(lambda tx: _load_or_create(tx, CURSOR_KEY)))

    def open(self, kind: str, cursor: str, binding: object, fields: int) -> list[Any]:
        """``CursorCodec.open`` under the cached key (``open_at``)."""
        return self.open_at(kind, cursor, binding, fields)[0]

    def open_at(
        self, kind: str, cursor: str, binding: object, fields: int
    ) -> tuple[list[Any], int]:
        """``CursorCodec.open_at`` under the cached key; a cursor it refuses is tried once
        more under the key the database holds now, in case the key was replaced (a
        restored or re-migrated database) since this process loaded it."""
        codec = self.codec()
        try:
            return codec.open_at(kind, cursor, binding, fields)
        except InvalidArgumentError:
            current = self._load()
            if current.key == codec.key:
                raise
            self._codec = current
            return current.open_at(kind, cursor, binding, fields)


def cursor_codec(engine: Engine) -> CursorCodec:
    """The cursor codec of the store on ``engine`` (tools that build cursors, the bench)."""
    return CursorKeys(UnitOfWork(engine, clock=now_millis)).codec()
