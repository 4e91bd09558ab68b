"""Which database failures are worth retrying (``unavailable`` after the retries), and
which are answered at once: a stopped statement (a read past its timeout, a cancel) is
never run again (CONTRACT.md 2.10)."""

from __future__ import annotations

import sqlite3
from typing import Final

import sqlalchemy as sa

from app.observability import metrics
from app.storage.database import read_deadlines
from runtime_store_client import UnavailableError

# SQLSTATEs worth retrying: serialization failure, deadlock, lock timeout, admin
# shutdown / crash shutdown / cannot connect now; classes 08 (connection exceptions) and
# 53 (insufficient resources) are matched by prefix. Not 57014 (query_canceled: a
# statement timeout or a cancel request): a stopped statement is not run again (2.10).
_TRANSIENT_SQLSTATES: Final = frozenset({"40001", "40P01", "55P03", "57P01", "57P02", "57P03"})


def is_transient(exc: BaseException) -> bool:
    """Whether an exception is a database failure worth retrying (``unavailable``)."""
    if isinstance(exc, sa.exc.TimeoutError):  # no pooled connection became free
        return True
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if isinstance(sqlstate, str):
        return sqlstate in _TRANSIENT_SQLSTATES or sqlstate[:2] in ("08", "53")
    if isinstance(exc, sa.exc.OperationalError):
        if type(exc.orig).__module__.startswith("sqlite3"):
            # A full disk (or file) is transient as PostgreSQL's 53100 is: nothing was
            # written, and the same write succeeds once space is freed.
            if getattr(exc.orig, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                return True
            message = str(exc.orig).lower()  # never "interrupted": a stopped statement
            return "locked" in message or "busy" in message
        # psycopg raises OperationalError without a SQLSTATE when the connection fails.
        return True
    return False


def raise_unless_transient(exc: sa.exc.DBAPIError | sa.exc.TimeoutError) -> None:
    """Raise a failure that is not worth retrying: a stopped statement (a statement
    timeout, a cancel) is ``unavailable`` at once and never run again (2.10)."""
    if read_deadlines.is_interrupted(exc):
        metrics.transaction_unavailable()
        raise UnavailableError("the database stopped the statement; retry") from exc
    if not is_transient(exc):
        raise exc


def unavailable_message(exc: BaseException) -> str:
    if isinstance(exc, sa.exc.TimeoutError):
        return "no database connection is available"
    return "the database is unavailable; retry"
