"""Where an import's rows go: straight into the live tables in the import's transaction
(PostgreSQL, ``_Direct``), or staged outside SQLite's only writer and published in short
transactions (``_Staged``; its publish's steps in ``staged_publish.py``)."""

from __future__ import annotations

import abc
import contextlib
import functools
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.storage.database import read_deadlines
from app.storage.database.dialects import Dialect
from app.storage.database.engines import WRITE_OPTION
from app.storage.database.tables import (
    memory_batches,
    memory_events,
    run_records,
    seed_records,
    sessions,
)
from app.storage.transfer import staged_publish
from app.storage.transfer.conflicts import session_conflict
from app.storage.transfer.reading import T, log
from app.storage.transfer.staging import STAGE, STAGED, create_stage
from app.storage.unit_of_work import import_holds

#: Tables whose batches go through ``Dialect.insert_many`` (PostgreSQL: ``COPY``).
_BULK: Final = (run_records, memory_events, memory_batches)


class _Sink(abc.ABC):
    """Where an import's rows go, and how it reads the live tables meanwhile."""

    @abc.abstractmethod
    def read(self, query: sa.Executable, params: dict[str, Any]) -> list[Any]:
        """Rows of a query over the live tables."""

    @abc.abstractmethod
    def claim_session(self, row: dict[str, Any]) -> None:
        """The session's row: the import's ID is taken (or, staged, about to be)."""

    @abc.abstractmethod
    def insert(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Rows of a live table; ``IntegrityError`` when one repeats a unique key."""

    @abc.abstractmethod
    def publish(self, session_id: str, record_count: int) -> None:
        """Every row written and checked: make the session visible, whole."""


class _Direct(_Sink):
    """PostgreSQL: the live tables, in the import's one transaction (savepoints per
    batch, so a repeated key can be found row by row)."""

    def __init__(self, conn: Connection, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect

    def read(self, query: sa.Executable, params: dict[str, Any]) -> list[Any]:
        return list(self.conn.execute(query, params).all())

    def claim_session(self, row: dict[str, Any]) -> None:
        try:
            with self.conn.begin_nested():
                self.conn.execute(sessions.insert(), row)
        except sa.exc.IntegrityError:  # another import or a create_session got there first
            raise session_conflict(row["session_id"], "") from None

    def insert(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        read_deadlines.check_not_canceled()  # the client went away: the transaction rolls back
        with self.conn.begin_nested():
            if table in _BULK:
                self.dialect.insert_many(self.conn, table, rows)
            else:
                self.conn.execute(table.insert(), rows)

    def publish(self, session_id: str, record_count: int) -> None:
        read_deadlines.check_not_canceled()
        self.conn.execute(
            sessions.update()
            .where(sessions.c.session_id == session_id)
            .values(record_count=record_count)
        )


class _Staged(_Sink):
    """SQLite: a private temporary database attached to the import's connection
    (staging.py), written without any lock of the store's database, and one final
    transaction that publishes the session (``publish``). ``close`` detaches (deletes)
    the stage."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.session: dict[str, Any] | None = None
        self._dbapi().execute(f"ATTACH DATABASE '' AS {STAGE}")
        try:
            self.stage(create_stage)
        except BaseException:
            self.close()
            raise

    def _dbapi(self) -> Any:
        return self.conn.connection.dbapi_connection

    def close(self) -> None:
        """Detach the stage, which deletes it; the connection goes back to the pool as it
        came."""
        try:
            if self.conn.in_transaction():
                self.conn.rollback()
            self._dbapi().execute(f"DETACH DATABASE {STAGE}")
        except Exception as exc:  # never pooled with a stage attached: closing deletes it
            log.warning("could not detach an import's stage (%s); its connection is closed", exc)
            self.conn.invalidate()

    def read(self, query: sa.Executable, params: dict[str, Any]) -> list[Any]:
        with self.conn.begin():
            return list(self.conn.execute(query, params).all())

    def stage(self, operation: Callable[[Connection], T]) -> T:
        """A transaction that writes the stage only: the store's database stays unlocked.
        Refused once the request that asked for the import has gone (``interrupts``)."""
        read_deadlines.check_not_canceled()
        with self.conn.begin():
            return operation(self.conn)

    def claim_session(self, row: dict[str, Any]) -> None:
        self.session = row  # inserted by the publish, if the ID is still free then

    def insert(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        self.stage(functools.partial(_execute, statement=STAGED[table].insert(), rows=rows))

    def publish(self, session_id: str, record_count: int) -> None:
        """Claim the IDs, copy the records a slice per transaction, then publish the rest
        and drop the claims in one (import_holds.py says why); on any failure, give back what
        was copied and claimed."""
        assert self.session is not None
        session = {**self.session, "record_count": record_count}
        del session_id
        import_holds.sweep_abandoned(self.conn)
        import_id = uuid.uuid4().hex
        with self._checkpointing() as checkpoint:
            self._write(
                functools.partial(staged_publish.claim, session=session, import_id=import_id)
            )
            try:
                turns = staged_publish.Turns(checkpoint)
                for table, copy in (
                    (run_records, staged_publish.copy_records),
                    (seed_records, staged_publish.copy_seed_records),
                ):
                    for first, last in staged_publish.slices(self.conn, table):
                        with turns.holding():
                            self._write(
                                functools.partial(copy, import_id=import_id, first=first, last=last)
                            )
                self._write(
                    functools.partial(staged_publish.finish, session=session, import_id=import_id)
                )
            except BaseException:
                try:
                    import_holds.give_back(self.conn, import_id)
                except Exception as exc:  # the lease runs out and a sweep gives them back
                    log.warning("an import could not give back its claims yet (%s)", exc)
                raise

    @contextlib.contextmanager
    def _checkpointing(self) -> Iterator[Callable[[], None]]:
        """The publish's WAL checkpoints, between its transactions rather than in them.

        SQLite checkpoints the WAL in the commit that takes it past ``wal_autocheckpoint``
        pages, after the write lock is released: the publish's commits would do that, and
        the time looked like a hold (the longest "hold" of a 97 MB import, 1.1 s at load 7,
        was mostly its commit's checkpoint). Here the publish's connection does not, and
        checkpoints (passively: never waiting for a writer or a reader) in each pause of
        ``staged_publish.Turns`` and at the end, so its transactions are only what they hold
        and the WAL it wrote is copied back by it, not by a small append's commit."""
        dbapi = self._dbapi()
        pages = dbapi.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        dbapi.execute("PRAGMA wal_autocheckpoint = 0")

        def checkpoint() -> None:
            dbapi.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

        try:
            yield checkpoint
            checkpoint()
        finally:
            try:
                dbapi.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")
            except Exception as exc:  # never pooled without its checkpoints
                log.warning("could not restore an import connection's checkpoints (%s)", exc)
                self.conn.invalidate()

    def _write(self, operation: Callable[[Connection], None]) -> None:
        """One transaction of the store's database: BEGIN IMMEDIATE, the only writer."""
        read_deadlines.check_not_canceled()
        self.conn.execution_options(**{WRITE_OPTION: True})
        try:
            with self.conn.begin():
                operation(self.conn)
        finally:
            self.conn.execution_options(**{WRITE_OPTION: False})


def _execute(conn: Connection, *, statement: sa.Insert, rows: list[dict[str, Any]]) -> None:
    conn.execute(statement, rows)
