"""One engine setup for both databases.

SQLite: WAL, ``foreign_keys=ON``, ``busy_timeout``; write transactions start with
``BEGIN IMMEDIATE`` so they serialise at their first statement instead of failing at
commit. PostgreSQL: psycopg 3, READ COMMITTED; writers serialise on
``SELECT … FOR UPDATE`` row locks. Both: every read runs under the engine's read
deadline (``read_timeout_seconds``, interrupts.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, Literal

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine

from app.database_url import canonical_database_url
from app.storage.database.explicit_begin import autocommit_options, begin_explicitly
from app.storage.database.read_deadlines import DEFAULT_READ_TIMEOUT_SECONDS, READ_TIMEOUT_OPTION

#: Execution option that makes a SQLite transaction take the write lock at BEGIN.
WRITE_OPTION: Final = "runtime_store_write"

SQLITE_BUSY_TIMEOUT_MS: Final = 30_000

#: libpq's ``connect_timeout`` of every PostgreSQL connection unless the URL names its
#: own: a host that accepts TCP but never answers (a frozen machine) is given up after
#: this long and the next host of a multi-host URL is tried (CONTRACT.md 16). libpq's
#: smallest value.
CONNECT_TIMEOUT_SECONDS: Final = 2


def normalize_url(url: str | URL) -> URL:
    """``postgres://`` and ``postgresql://`` mean psycopg 3; everything else is kept."""
    parsed = make_url(canonical_database_url(url) if isinstance(url, str) else url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def database_backend(url: str | URL) -> str:
    """``sqlite`` or ``postgresql``: which database ``url`` names."""
    return normalize_url(url).get_backend_name()


class _NoRowLogging(logging.Filter):
    """Drops SQLAlchemy's DEBUG lines that print result rows: they carry payloads."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg if isinstance(record.msg, str) else ""
        return not message.startswith(("Row ", "Col "))


_ROW_FILTER = _NoRowLogging()


#: When a SQLite commit is on disk. ``full``: WAL commits are synced before they are
#: answered, so an acknowledged write survives an OS crash or a power loss. ``normal``: the
#: WAL is synced only at checkpoints: a process crash loses nothing, an OS crash or a power
#: loss may lose the writes acknowledged since the last one (docs/administration.md).
SqliteSynchronous = Literal["full", "normal"]
SQLITE_SYNCHRONOUS: Final[dict[str, str]] = {"full": "FULL", "normal": "NORMAL"}


def create_engine(
    url: str | URL,
    *,
    read_timeout_seconds: float | None = DEFAULT_READ_TIMEOUT_SECONDS,
    sqlite_synchronous: SqliteSynchronous = "full",
    **kwargs: Any,
) -> Engine:
    """An engine configured for runtime-store on SQLite or PostgreSQL; its reads stop
    after ``read_timeout_seconds`` (``None``: never; CONTRACT.md 2.10). On SQLite
    ``sqlite_synchronous`` says when a commit is on disk (``SQLITE_SYNCHRONOUS``)."""
    parsed = normalize_url(url)
    _configure(kwargs, read_timeout_seconds)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed, synchronous=SQLITE_SYNCHRONOUS[sqlite_synchronous], **kwargs)
    return sa.create_engine(parsed, **_postgresql(parsed, kwargs))


def create_async_engine(
    url: str | URL,
    *,
    read_timeout_seconds: float | None = DEFAULT_READ_TIMEOUT_SECONDS,
    **kwargs: Any,
) -> AsyncEngine:
    """The same PostgreSQL engine over psycopg's asynchronous connections: the service's
    store calls, awaited on its event loop (waiting.py). Its ``sync_engine`` is what a
    ``SqlStore`` is given; only a call in a greenlet may use it."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise ValueError("asynchronous connections are for PostgreSQL only")
    _configure(kwargs, read_timeout_seconds)
    # Its connections stay in autocommit; a transaction sends its BEGIN (explicit_begin.py).
    options = _postgresql(parsed, kwargs)
    level = autocommit_options(options)
    engine = _create_async_engine(parsed, **options)
    if level is not None:
        begin_explicitly(engine.sync_engine, level)
    return engine


def _configure(kwargs: dict[str, Any], read_timeout_seconds: float | None) -> None:
    kwargs["execution_options"] = {
        **kwargs.get("execution_options", {}),
        READ_TIMEOUT_OPTION: read_timeout_seconds,
    }
    engine_logger = logging.getLogger("sqlalchemy.engine.Engine")
    if _ROW_FILTER not in engine_logger.filters:
        engine_logger.addFilter(_ROW_FILTER)
    # Error messages and logs must never carry payloads or other bound values.
    kwargs.setdefault("hide_parameters", True)


def _postgresql(url: URL, kwargs: dict[str, Any]) -> dict[str, Any]:
    # No pre-ping round trip per checkout: a stale connection fails its first statement,
    # SQLAlchemy invalidates the pool, and SqlStore retries the whole transaction (after a
    # failover: on the new primary, which a multi-host URL's next connection finds).
    kwargs.setdefault("isolation_level", "READ COMMITTED")
    connect_args = kwargs.setdefault("connect_args", {})
    if "connect_timeout" not in url.query:
        connect_args.setdefault("connect_timeout", CONNECT_TIMEOUT_SECONDS)
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 10)
    return kwargs


def _sqlite_engine(url: URL, *, synchronous: str, **kwargs: Any) -> Engine:
    if url.database in (None, "", ":memory:"):
        # An in-memory database lives in one connection: its pool takes no sizes.
        kwargs.pop("pool_size", None)
        kwargs.pop("max_overflow", None)
    isolation = kwargs.pop("isolation_level", None)
    connect_args = kwargs.pop("connect_args", {})
    connect_args.setdefault("check_same_thread", False)
    connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
    engine = sa.create_engine(url, connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN, instead of pysqlite guessing.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if isolation == "AUTOCOMMIT":
            return
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


class DatabaseError(Exception):
    """A database that cannot be used; ``str()`` is one line that says why."""


@contextmanager
def database_errors() -> Iterator[None]:
    """Turn SQLAlchemy's errors into a ``DatabaseError`` with the driver's first line."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        reason = str(exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc).splitlines()[0]
        raise DatabaseError(reason) from exc
