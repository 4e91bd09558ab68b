"""Import (CONTRACT.md 11.4): a session file (``format``) recreated in one transaction.

Every line is checked by the rules the writes apply (app/domain: text, bounds, record and
start validation, the strict lifecycle payloads) and replayed against the run it belongs
to, in session order, as the lifecycle operations would have accepted it: a run begins
with its ``run_started``, a child after its parent's ``child_run_linked``, a continuation
only of a suspended predecessor that names it, nothing after a terminal record, every
remembered key naming a record of its kind. Seed lines (version 3, CONTRACT.md 15.7) are
replayed through the seed writes' rules (``seed_lines``). At the end every run must stand
where its run line says (a seed it attaches its run ID's published history end), and the
trailer's counts must be the lines'. The first line that breaks a rule is
``invalid_argument`` with its 1-based ``line``; an existing (or purged) session or run ID,
or a seed operation's run ID the store uses, is ``import_conflict``. Either way nothing is
written.

The file is read line by line and rows are inserted in batches, so memory holds one batch
and one small state per run, not the session. Record IDs and session positions are the
file's (checked to be 1, 2, …), so they are inserted as they are; memory events get fresh
row IDs in file order, which keeps their append order. The database is the arbiter of
concurrent imports and writers: an ID inserted by another transaction first makes this
one's insert fail, which is ``import_conflict``.

Where the rows go first differs by database (``_Direct``, ``_Staged``). PostgreSQL writes
them into the live tables in the import's one transaction: its row locks stop no other
session's writer, and nothing is visible before the commit. SQLite has one writer, which
an import must not hold for its whole length (CONTRACT.md 2.10): its rows go into staging
tables (staging.py) in short transactions between which other writers are served, then the
publish claims the IDs, copies the records a slice per transaction and makes the session
visible whole in a last short one (``claims.py``); a failed import gives back what it
copied and deletes what it staged. A batch is at most ``BATCH`` rows and ``BATCH_BYTES`` bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.storage.database import read_deadlines
from app.storage.database.engines import WRITE_OPTION
from app.storage.database.failures import is_transient
from app.storage.operation import Context
from app.storage.transfer.reading import _lines, max_line_bytes
from app.storage.transfer.replay import _Import
from app.storage.transfer.sinks import _Direct, _Staged
from runtime_store_client import (
    ImportConflictError,
    InvalidArgumentError,
    Session,
    StoreError,
    UnavailableError,
)
from runtime_store_client.protocols import BinaryReader


def import_session(ctx: Context, source: BinaryReader) -> Session:
    """Recreate an exported session from ``source``, visible all at once (section 11.4):
    in one transaction on PostgreSQL, staged in short ones and published in one on SQLite."""
    lines = _lines(source, max_line_bytes(ctx.limits))
    try:
        with ctx.uow.engine.connect() as conn:
            if ctx.uow.dialect.name == "sqlite":
                return _import_staged(ctx, conn, lines)
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                return _Import(ctx, _Direct(conn, ctx.uow.dialect)).read(lines)
    except StoreError:
        raise
    except (sa.exc.DataError, UnicodeEncodeError) as exc:
        raise InvalidArgumentError("a value of the file cannot be stored") from exc
    except sa.exc.IntegrityError as exc:
        raise ImportConflictError("an ID of the file was written by another transaction") from exc
    except (sa.exc.DBAPIError, sa.exc.TimeoutError) as exc:
        if is_transient(exc) or read_deadlines.is_interrupted(exc):
            raise UnavailableError("the database is unavailable; retry the import") from exc
        raise


def _import_staged(ctx: Context, conn: Connection, lines: Iterator[tuple[int, bytes]]) -> Session:
    sink = _Staged(conn)
    try:
        return _Import(ctx, sink).read(lines)
    finally:
        sink.close()
