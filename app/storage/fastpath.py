"""The append path's statements on PostgreSQL, sent on the driver connection.

An append runs three statements; SQLAlchemy's execution layer around each (cache lookup,
parameter processing, result metadata built from ``cursor.description``) costs about
40 µs of CPU per statement over psycopg's own 20 µs, a third of an in-process append
(docs/performance.md). These statements are still built with Core and compiled by
SQLAlchemy, once per dialect; they run inside the SQLAlchemy transaction, on its
connection, and errors come back as SQLAlchemy's exceptions (the connection invalidated on
a disconnect), so the store's retry logic sees no difference.

Whenever anything observes statements (a ``before_cursor_execute`` or
``after_cursor_execute`` listener, such as tracing instrumentation or the benchmark's
mirror check, or SQL logging at INFO), the statement goes through SQLAlchemy instead, so
observers see every statement.
"""

from __future__ import annotations

import logging
from collections import namedtuple
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection


def _observed(conn: Connection) -> bool:
    dispatch = conn.dispatch
    return (
        bool(dispatch.before_cursor_execute)
        or bool(dispatch.after_cursor_execute)
        or conn.engine.logger.isEnabledFor(logging.INFO)
    )


class DriverStatement:
    """One prebuilt statement, executable through SQLAlchemy or on the driver connection."""

    def __init__(self, statement: sa.Select[Any] | sa.Insert) -> None:
        self.statement = statement
        columns = (
            [str(column.key) for column in statement.selected_columns]
            if isinstance(statement, sa.Select)
            else []
        )
        # Rows read by attribute, as SQLAlchemy's rows are.
        self._row = namedtuple("DriverRow", columns) if columns else None
        self._sql: dict[int, str] = {}

    def _compiled(self, conn: Connection) -> str:
        key = id(conn.dialect)
        sql = self._sql.get(key)
        if sql is None:
            sql = self._sql[key] = str(self.statement.compile(dialect=conn.dialect))
        return sql

    def first(self, conn: Connection, params: dict[str, Any]) -> Any:
        """The first row (attributes named as the statement's columns), or ``None``."""
        if _observed(conn):
            return conn.execute(self.statement, params).first()
        row = self._run(conn, params, fetch=True)
        return None if row is None else self._row._make(row)  # type: ignore[union-attr]

    def execute(self, conn: Connection, params: dict[str, Any]) -> None:
        if _observed(conn):
            conn.execute(self.statement, params)
            return
        self._run(conn, params, fetch=False)

    def _run(self, conn: Connection, params: dict[str, Any], *, fetch: bool) -> Any:
        sql = self._compiled(conn)
        dbapi = conn.dialect.loaded_dbapi
        driver = conn.connection.driver_connection
        assert driver is not None
        try:
            cursor = driver.execute(sql, params)
            return cursor.fetchone() if fetch else None
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
