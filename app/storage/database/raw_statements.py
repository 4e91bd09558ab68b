"""Statements sent on the driver connection, with SQLAlchemy's statement events.

An append runs three statements; SQLAlchemy's execution layer around each (cache lookup,
parameter processing, result metadata built from ``cursor.description``) costs about
40 µs of CPU per statement over psycopg's own 20 µs, a third of an in-process append
(docs/performance.md). A ``DriverStatement`` is still built with Core and compiled by
SQLAlchemy, once per dialect; it runs inside the SQLAlchemy transaction, on its
connection, and errors come back as SQLAlchemy's exceptions (the connection invalidated on
a disconnect), so the unit of work's retry logic sees no difference.

On PostgreSQL the rows come back in psycopg's binary format: the schema's columns are
text, integers and ``bytea``, whose binary forms load to the same Python values, and a
``bytea`` payload then travels as its bytes rather than as hex text the server writes and
psycopg parses back (a page of 100 records of 1 KB: half the driver's CPU per page,
docs/performance.md, "Cheap pages").

It always takes this path, observed or not. Observers get the same events SQLAlchemy
gives them: every ``before_cursor_execute`` listener of the engine (which may rewrite the
statement, as with ``retval=True``) and every ``after_cursor_execute`` listener is called
with the connection, the cursor, the SQL and the parameters, and the statement is logged
at INFO when the engine logs statements (parameters hidden). Tracing instrumentation and
the benchmark's mirror check see every statement of a traced or untraced service alike.
"""

from __future__ import annotations

import logging
from collections import namedtuple
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.util import await_


class DriverStatement:
    """One prebuilt statement, executed on the driver connection of a SQLAlchemy one."""

    def __init__(
        self, statement: sa.Select[Any] | sa.Insert, *, binary: tuple[str, ...] = ()
    ) -> None:
        """``binary`` names parameters psycopg sends in binary format (``%(name)b``):
        arrays and ``bytea``, whose text form psycopg builds in Python, escaping every
        element (a batch's 16 payloads of 1 KB: 340 µs as text, 7 µs as binary), and the
        server parses back."""
        self.statement = statement
        self._binary = binary
        columns = (
            [str(column.key) for column in statement.selected_columns]
            if isinstance(statement, sa.Select)
            else []
        )
        # Rows read by attribute, as SQLAlchemy's rows are.
        self._row = namedtuple("DriverRow", columns) if columns else None
        self._sql: dict[int, str] = {}

    def compiled(self, conn: Connection) -> str:
        """The SQL text for the connection's dialect, compiled once."""
        return self.compiled_for(conn.dialect)

    def compiled_for(self, dialect: sa.Dialect) -> str:
        """The SQL text for ``dialect``, compiled once."""
        key = id(dialect)
        sql = self._sql.get(key)
        if sql is None:
            sql = str(self.statement.compile(dialect=dialect))
            if dialect.name == "postgresql":
                for name in self._binary:
                    placeholder = f"%({name})s"
                    if placeholder not in sql:
                        raise ValueError(f"no parameter {name!r} to send in binary")
                    sql = sql.replace(placeholder, f"%({name})b")
            self._sql[key] = sql
        return sql

    def row(self, values: tuple[Any, ...]) -> Any:
        """``values`` (a driver row) read by attribute, as ``first`` answers."""
        return self._row._make(values)  # type: ignore[union-attr]

    def first(self, conn: Connection, params: dict[str, Any]) -> Any:
        """The first row (attributes named as the statement's columns), or ``None``."""
        row = self._run(conn, params, fetch=True)
        return None if row is None else self._row._make(row)  # type: ignore[union-attr]

    def execute(self, conn: Connection, params: dict[str, Any]) -> None:
        self._run(conn, params, fetch=False)

    def all(self, conn: Connection, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Every row as a plain tuple, in the statement's column order (a page's rows are
        read by position: no named row per record)."""
        rows: list[tuple[Any, ...]] = self._run(conn, params, fetch=None)
        return rows

    def _run(self, conn: Connection, params: dict[str, Any], *, fetch: bool | None) -> Any:
        sql = self.compiled(conn)
        driver = conn.connection.driver_connection
        assert driver is not None
        with as_sqlalchemy_errors(conn, sql, params):
            cursor = driver.cursor()
            dispatch = conn.dispatch
            context = None
            if dispatch.before_cursor_execute or dispatch.after_cursor_execute:
                # Listeners may keep state on the context (tracing keeps its span there).
                context = SimpleNamespace(statement=sql, parameters=params, executemany=False)
                for before in dispatch.before_cursor_execute:
                    sql, params = before(conn, cursor, sql, params, context, False)
            logger = conn.engine.logger
            if logger.isEnabledFor(logging.INFO):
                logger.info("%s [driver connection; parameters hidden]", sql)
            if isinstance(driver, psycopg.AsyncConnection):
                # The service's connections: awaited from the store call's greenlet.
                rows = await_(_send_async(cursor, sql, params, fetch))
            else:
                rows = _send(cursor, sql, params, fetch, binary=conn.dialect.name == "postgresql")
            for after in dispatch.after_cursor_execute:
                after(conn, cursor, sql, params, context, False)
            return rows


def _send(
    cursor: Any, sql: str, params: dict[str, Any], fetch: bool | None, *, binary: bool
) -> Any:
    if binary:  # PostgreSQL: rows in binary
        cursor.execute(sql, params, binary=True)
    else:
        cursor.execute(sql, params)
    if fetch is None:
        return cursor.fetchall()
    return cursor.fetchone() if fetch else None


async def _send_async(
    cursor: psycopg.AsyncCursor[Any], sql: str, params: dict[str, Any], fetch: bool | None
) -> Any:
    """The statement on an asynchronous PostgreSQL connection, rows in binary."""
    await cursor.execute(sql, params, binary=True)
    if fetch is None:
        return await cursor.fetchall()
    return await cursor.fetchone() if fetch else None


@contextmanager
def as_sqlalchemy_errors(conn: Connection, sql: str, params: Any = None) -> Iterator[None]:
    """Driver errors of work done on the driver connection raised as SQLAlchemy raises
    them for its own statements (the connection invalidated on a disconnect), so the unit
    of work's retries and error mapping see no difference."""
    dbapi = conn.dialect.loaded_dbapi
    try:
        yield
    except dbapi.Error as exc:
        invalidated = conn.dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
        if invalidated:
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(
            sql,
            params,
            exc,
            dbapi.Error,
            hide_parameters=True,
            connection_invalidated=invalidated,
            dialect=conn.dialect,
        ) from exc
