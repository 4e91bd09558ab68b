"""Connections an event loop sends statements on (``loop_appends.py``, ``loop_reads.py``).

Async psycopg connections of one service worker, in autocommit: each statement is its own
transaction, as the store's one-statement writes and its reads on PostgreSQL are
(``UnitOfWork.statement``, ``UnitOfWork.read``). Rows come back in binary, as
``DriverStatement`` reads them on a database thread. An idle connection is reused; one
whose statement failed or was cut short (a lost server, a cancelled request, a deadline)
is closed, and after a lost server the idle ones with it: what cut it (a restart, an
outage) cut them too.
The callers bound how many are open at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final

import psycopg
from sqlalchemy.engine import Engine

from .driver import DriverStatement

#: Seconds a connection may take to open before its caller gives its work to the store.
CONNECT_TIMEOUT_SECONDS: Final = 10

Connection = psycopg.AsyncConnection[Any]


class LoopConnections:
    """Autocommit connections to the engine's database, opened on demand, reused when idle."""

    def __init__(self, engine: Engine) -> None:
        url = engine.url.set(drivername="postgresql")
        self._conninfo = url.render_as_string(hide_password=False)
        self._dialect = engine.dialect
        self._idle: list[Connection] = []
        self._closed = False

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """An idle connection (or a new one), idle again afterwards unless what ran on it
        failed or was cut short: then it is closed with the idle ones."""
        conn = self._idle.pop() if self._idle else await self._connect()
        try:
            yield conn
        except BaseException as exc:
            # A lost server took the idle ones too; a cancelled statement only this one.
            await self._drop(conn, idle_too=isinstance(exc, (psycopg.OperationalError, OSError)))
            raise
        if self._closed:
            await self._drop(conn, idle_too=False)
        else:
            self._idle.append(conn)

    async def rows(
        self, conn: Connection, statement: DriverStatement, params: dict[str, Any] | None
    ) -> list[tuple[Any, ...]]:
        """``statement``'s rows on ``conn``, read in binary."""
        cursor = await conn.execute(statement.compiled_for(self._dialect), params, binary=True)
        return await cursor.fetchall()

    async def close(self) -> None:
        """Close the idle connections; those in use close when their work ends."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.close()

    async def _drop(self, conn: Connection, *, idle_too: bool = True) -> None:
        dropped = [conn]
        if idle_too:
            dropped, self._idle = [conn, *self._idle], []
        for each in dropped:
            with contextlib.suppress(Exception):
                await each.close()

    async def _connect(self) -> Connection:
        return await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
        )
