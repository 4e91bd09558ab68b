"""The service's PostgreSQL connections stay in autocommit; a transaction sends its BEGIN.

Most store calls of the service are one statement in autocommit (an append, a page,
``UnitOfWork.statement`` and ``UnitOfWork.read``). Switching a pooled connection to
autocommit for the call and back at its return costs three awaited driver calls per call
(psycopg's ``set_autocommit`` twice and ``set_isolation_level``): about 15 µs of CPU of
each call (docs/performance.md, "One path"). So the engine the service awaits
(``create_async_engine``) keeps its connections in autocommit (SQLAlchemy's isolation
level ``AUTOCOMMIT``, so nothing switches them back), and a transaction begins itself:
SQLAlchemy's ``begin`` event sends ``BEGIN ISOLATION LEVEL <the engine's level>``, the
statement psycopg sends before a transaction's first statement on a connection out of
autocommit. ``COMMIT`` and ``ROLLBACK`` are psycopg's own: they end the transaction the
server has open, in autocommit or not, and do nothing when none is.

A connection that is to run in autocommit (``UnitOfWork``'s one-statement calls) carries
``NO_BEGIN_OPTION``: SQLAlchemy still begins its own transaction on its first Core
statement, and no ``BEGIN`` is sent. So does a connection given an isolation level of its
own (``execution_options(isolation_level=…)``): SQLAlchemy and psycopg set it up.
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from app.storage.database.raw_statements import as_sqlalchemy_errors

#: Engine execution option: its connections are in autocommit between transactions.
CONNECTIONS_IN_AUTOCOMMIT: Final = "runtime_store_connections_in_autocommit"
#: Connection execution option: no ``BEGIN``; every statement is its own transaction.
NO_BEGIN_OPTION: Final = "runtime_store_no_begin"

_LEVELS: Final = frozenset({"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})


def autocommit_options(options: dict[str, Any]) -> str | None:
    """Turn the engine options into those of an engine whose connections stay in
    autocommit; the isolation level its transactions begin with (``None``: the options
    asked for autocommit, or for a level this module does not know, and are kept)."""
    level = options.get("isolation_level")
    if level not in _LEVELS:
        return None
    options["isolation_level"] = "AUTOCOMMIT"
    options["execution_options"] = {
        **options.get("execution_options", {}),
        CONNECTIONS_IN_AUTOCOMMIT: True,
    }
    return str(level)


def begin_explicitly(engine: Engine, level: str) -> None:
    """Make each transaction on ``engine`` (made with ``autocommit_options``) send its
    ``BEGIN``, at ``level``."""
    sql = f"BEGIN ISOLATION LEVEL {level}"

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        if options.get(NO_BEGIN_OPTION) or "isolation_level" in options:
            return
        # On the driver connection, as psycopg sends its own BEGIN: no statement events;
        # a failure comes back as SQLAlchemy's (a lost server invalidates the connection),
        # so the unit of work retries it as it would the first statement's.
        with as_sqlalchemy_errors(conn, sql):
            cursor = conn.connection.cursor()
            try:
                cursor.execute(sql)
            finally:
                cursor.close()
