"""What differs between SQLite and PostgreSQL, behind one interface.

Operations never ask which database they run on; the unit of work hands them a ``Dialect``
chosen once per engine:

* **locks**: PostgreSQL serialises the writers of a run on row locks (the session's row
  for a sessionful run, found through the run in one statement; the run's own row for a
  sessionless one). SQLite has one database write lock, held from ``BEGIN IMMEDIATE``
  (engine.py), so it reads without row locks.
* **the append path**: PostgreSQL sends the lock, the run-and-record read and the fused
  write (one statement for the run's update, the session's update and the record) on the
  driver connection (driver.py); SQLite sends each statement through SQLAlchemy.
* **purge batches**: SQLite pauses between batches, so a writer waiting in its busy
  handler gets the lock in between.
* **snapshots and exclusive jobs** (export, retention): PostgreSQL reads an export in a
  REPEATABLE READ, READ ONLY transaction and lets one replica sweep at a time with an
  advisory lock; SQLite's deferred read transaction is already a snapshot, and one process
  serves its file.
"""

from __future__ import annotations

import abc
import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.domain.payloads import RunCompletedPayload
from app.domain.validation import NewRecord, NewRun, labels_json
from runtime_store_client import AppendResult, RunStatus, SessionPurgedError, SessionStatus

from . import statements as st
from .rows import (
    NEW_RECORD_FIELDS,
    RUN_COLUMNS,
    RUN_MUTABLE,
    SESSION_MUTABLE,
    label_rows,
    label_text,
    session_from_row,
    values_of,
)

if TYPE_CHECKING:
    from .driver import DriverStatement
    from .rows import RunState, SessionState
    from .unit_of_work import Tx


def _require_live(session: SessionState | None, run: RunState) -> SessionState:
    if session is None or session.purged:
        raise SessionPurgedError(
            f"session {run.session_id!r} was purged",
            run_id=run.run_id,
            session_id=run.session_id,
        )
    return session


class Dialect(abc.ABC):
    """The operations' view of a database; subclasses hold what differs."""

    name = ""

    @abc.abstractmethod
    def open_run(
        self, tx: Tx, run_id: str, event_key: str | None
    ) -> tuple[RunState, SessionState | None]:
        """A run about to be written, its writers' lock held, with its live session.

        With ``event_key`` the record stored under it is read in the same statement and
        kept for the append check (``Tx.stored_record``).
        """

    def fetch_all(
        self, tx: Tx, statement: DriverStatement, params: dict[str, Any]
    ) -> Sequence[Sequence[Any]]:
        """Every row of a read, by position (a page's keys and records); SQLite through
        SQLAlchemy."""
        return tx.conn.execute(statement.statement, params).all()

    def select_run(self, tx: Tx, run_id: str) -> Any:
        """The run's row read without a lock, or ``None``; SQLite through SQLAlchemy."""
        return tx.conn.execute(st.SELECT_RUN, {"run_id": run_id}).first()

    #: Whether ``append_one``, ``append_many``, ``start_run`` and ``finish_run`` can
    #: answer their common paths in one statement (PostgreSQL).
    one_statement_writes = False
    #: Whether reads run in autocommit (``UnitOfWork.read``): PostgreSQL at READ
    #: COMMITTED, where a read transaction is no snapshot, only two more round trips.
    reads_in_autocommit = False

    def append_one(self, tx: Tx, record: NewRecord) -> AppendResult | None:  # noqa: ARG002
        """An ordinary append in one statement (``UnitOfWork.statement``): the result, or
        ``None`` when the statement refused it and the ordinary transaction must decide.
        SQLite has no such statement (``one_statement_writes`` is false): it always
        refuses."""
        return None

    def append_many(
        self,
        tx: Tx,  # noqa: ARG002
        run_id: str,  # noqa: ARG002
        records: Sequence[NewRecord],  # noqa: ARG002
    ) -> list[AppendResult] | None:
        """A batch of one run's records with distinct event keys in one statement
        (``UnitOfWork.statement``): the results in input order, or ``None`` when the
        statement refused the batch and the ordinary transaction must decide. SQLite
        always refuses (``one_statement_writes`` is false)."""
        return None

    def start_run(
        self,
        tx: Tx,  # noqa: ARG002
        new: NewRun,  # noqa: ARG002
        started: NewRecord,  # noqa: ARG002
        link: NewRecord | None = None,  # noqa: ARG002
    ) -> StartResults | None:
        """A new run (a child with its ``link`` record on its parent) in an active session
        or none, in one statement (``UnitOfWork.statement``): the records' results, or
        ``None`` when the statement refused and the ordinary transaction must decide.
        SQLite always refuses (``one_statement_writes`` is false)."""
        return None

    def finish_run(
        self,
        tx: Tx,  # noqa: ARG002
        status: RunStatus,  # noqa: ARG002
        record: NewRecord,  # noqa: ARG002
        payload: RunCompletedPayload,  # noqa: ARG002
    ) -> AppendResult | None:
        """A terminal write (or its exact retry) in one statement (``UnitOfWork.statement``):
        the record's result, or ``None`` when the statement refused and the ordinary
        transaction must decide. SQLite always refuses (``one_statement_writes`` is
        false)."""
        return None

    def lock_sessionless(self, tx: Tx, run: RunState) -> RunState:  # noqa: ARG002
        """A sessionless run about to be written (a one-shot parent), its lock held; on
        SQLite the transaction's database lock already is."""
        return run

    def flush(self, tx: Tx) -> None:
        """Send every buffered write of ``tx``: new runs, changed runs and sessions,
        checkpoints, then records."""
        conn = tx.conn
        new_runs = [run for run in tx.runs.values() if run.is_new]
        if new_runs:
            conn.execute(st.INSERT_RUN, [values_of(run, RUN_COLUMNS) for run in new_runs])
            labels = [row for run in new_runs for row in label_rows(run)]
            if labels:
                conn.execute(st.INSERT_RUN_LABELS, labels)
        for run in tx.runs.values():
            if run.dirty and not run.is_new:
                update = st.UPDATE_RUN if run.state_changed else st.UPDATE_RUN_COUNT
                conn.execute(update, _run_update(run))
        for session in tx.sessions.values():
            if session.dirty:
                update = st.UPDATE_SESSION if session.state_changed else st.UPDATE_SESSION_COUNT
                conn.execute(update, _session_update(session))
        if tx.checkpoints:
            conn.execute(st.INSERT_CHECKPOINT, tx.checkpoints)
        if tx.records:
            conn.execute(st.INSERT_RECORD, tx.records)

    def pause_between_batches(self, elapsed: float) -> None:
        """Called after each purge batch that took ``elapsed`` seconds; no pause by default
        (PostgreSQL's row locks let writers through)."""
        del elapsed

    def begin_snapshot(self, conn: Connection) -> None:
        """Make the transaction just begun on ``conn`` read one consistent snapshot. SQLite:
        a deferred transaction in WAL mode already does, from its first read."""
        del conn

    def insert_many(self, conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Insert many rows at once (an import's batches); SQLite: one executemany."""
        conn.execute(table.insert(), rows)

    @contextmanager
    def exclusive(self, engine: Engine, name: str) -> Iterator[bool]:
        """Whether this process may run the job ``name`` now, held until the block ends.
        SQLite: always (one process serves a SQLite file; its writes serialise anyway)."""
        del engine, name
        yield True


def _run_update(run: RunState) -> dict[str, Any]:
    params = values_of(run, RUN_MUTABLE if run.state_changed else st.COUNTED, st.RUN)
    params[st.KEY + "run_id"] = run.run_id
    return params


def _session_update(session: SessionState) -> dict[str, Any]:
    names = SESSION_MUTABLE if session.state_changed else st.COUNTED
    params = values_of(session, names, st.SESSION)
    params[st.KEY + "session_id"] = session.session_id
    return params


class SqliteDialect(Dialect):
    name = "sqlite"

    def open_run(
        self, tx: Tx, run_id: str, event_key: str | None
    ) -> tuple[RunState, SessionState | None]:
        # The transaction already holds the database's write lock.
        run = self._read_run(tx, run_id, event_key)
        if not run.session_id:
            return run, None
        session = _require_live(tx.session(run.session_id, lock=False), run)
        return run, tx.keep_session(session)

    @staticmethod
    def _read_run(tx: Tx, run_id: str, event_key: str | None) -> RunState:
        if event_key is None:
            found = tx.run(run_id)
            if found is None:
                raise tx.missing_run_error(run_id)
            return found
        params = {"run_id": run_id, "event_key": event_key}
        row = tx.conn.execute(st.SELECT_RUN_AND_RECORD.statement, params).first()
        if row is None:
            raise tx.missing_run_error(run_id)
        return tx.run_and_record(row, event_key)

    def pause_between_batches(self, elapsed: float) -> None:
        time.sleep(elapsed)


class PostgresDialect(Dialect):
    name = "postgresql"

    def open_run(
        self, tx: Tx, run_id: str, event_key: str | None
    ) -> tuple[RunState, SessionState | None]:
        locked = st.LOCK_SESSION_OF_RUN.first(tx.conn, {"run_id": run_id})
        if locked is None:  # a sessionless run (its own row is the lock), or no run at all
            run = self._read_run(tx, run_id, event_key, lock=True)
            if run.session_id:  # its session row vanished under us: only purge does that
                raise SessionPurgedError(f"session {run.session_id!r} was purged", run_id=run_id)
            return run, None
        session = tx.keep_session(session_from_row(locked))
        run = self._read_run(tx, run_id, event_key, lock=False)
        return run, _require_live(session, run)

    @staticmethod
    def _read_run(tx: Tx, run_id: str, event_key: str | None, *, lock: bool) -> RunState:
        if event_key is None:
            found = tx.run(run_id, lock=lock)
            if found is None:
                raise tx.missing_run_error(run_id)
            return found
        params = {"run_id": run_id, "event_key": event_key}
        if lock:
            row = tx.conn.execute(st.LOCK_RUN_AND_RECORD, params).first()
        else:  # under the session's lock: the hot path
            row = st.SELECT_RUN_AND_RECORD.first(tx.conn, params)
        if row is None:
            raise tx.missing_run_error(run_id)
        return tx.run_and_record(row, event_key)

    def lock_sessionless(self, tx: Tx, run: RunState) -> RunState:
        return tx.run(run.run_id, lock=True) or run

    def fetch_all(
        self, tx: Tx, statement: DriverStatement, params: dict[str, Any]
    ) -> Sequence[Sequence[Any]]:
        """On the driver connection: plain tuples, no SQLAlchemy row per record."""
        return statement.all(tx.conn, params)

    def select_run(self, tx: Tx, run_id: str) -> Any:
        """On the driver connection (reads of one run: ``load_run``, a page's run)."""
        return st.SELECT_RUN_DRIVER.first(tx.conn, {"run_id": run_id})

    one_statement_writes = True
    reads_in_autocommit = True

    def append_one(self, tx: Tx, record: NewRecord) -> AppendResult | None:
        """``runtime_store_append_record`` (migration 0010): the lock, the run and the keyed
        record, and the insert or the exact retry, in one round trip."""
        row = st.APPEND_RECORD.first(tx.conn, values_of(record, NEW_RECORD_FIELDS))
        return _one_statement_result(tx, record, row)

    def append_many(
        self, tx: Tx, run_id: str, records: Sequence[NewRecord]
    ) -> list[AppendResult] | None:
        """``runtime_store_append_records`` (migration 0011): the lock, the run, the stored
        records under every key, and the inserts or the exact retries, in one round trip.
        Every record carries the first one's agent and session (else the transaction
        decides)."""
        first = records[0]
        if any(
            rec.agent_id != first.agent_id or rec.session_id != first.session_id for rec in records
        ):
            return None
        row = st.APPEND_RECORDS.first(
            tx.conn,
            {
                "run_id": run_id,
                "agent_id": first.agent_id,
                "session_id": first.session_id or None,
                "event_keys": [rec.event_key for rec in records],
                "turn_ids": [rec.turn_id for rec in records],
                "types": [rec.type for rec in records],
                "payloads": [rec.payload for rec in records],
                "timestamps_ms": [rec.timestamp_ms for rec in records],
            },
        )
        if row is None or row.outcome != "done":
            return None
        if any(row.inserted):
            tx.written.add((first.session_id, run_id))
        status = None if row.session_status is None else SessionStatus(row.session_status)
        return [
            AppendResult(id=str(record_id), inserted=inserted, session_status=status)
            for record_id, inserted in zip(row.record_ids, row.inserted, strict=True)
        ]

    def start_run(
        self, tx: Tx, new: NewRun, started: NewRecord, link: NewRecord | None = None
    ) -> StartResults | None:
        """``runtime_store_start_run`` (migration 0012): the start's lock, the parent's
        checks and the run's ID checked unused, then the link record, the run, its labels,
        its record and the session's counter, in one round trip."""
        labels = sorted(new.labels.items())
        row = st.START_RUN.first(
            tx.conn,
            {
                "run_id": new.run_id,
                "agent_id": new.agent_id,
                "session_id": new.session_id or None,
                "parent_run_id": new.parent_run_id,
                "started_at_ms": new.started_at_ms,
                "labels": new.labels_json,
                "label_keys": [label_text(key) for key, _ in labels],
                "label_values": [label_text(value) for _, value in labels],
                "now_ms": tx.now_ms,
                "event_key": started.event_key,
                "turn_id": started.turn_id,
                "type": started.type,
                "payload": started.payload,
                "timestamp_ms": started.timestamp_ms,
                "link_key": link and link.event_key,
                "link_agent_id": link and link.agent_id,
                "link_turn_id": link and link.turn_id,
                "link_type": link and link.type,
                "link_payload": link and link.payload,
                "link_timestamp_ms": link and link.timestamp_ms,
            },
        )
        if row is None or row.outcome != "inserted":
            return None
        status = None if row.session_status is None else SessionStatus(row.session_status)
        tx.written.add((new.session_id, new.run_id))
        linked = None
        if link is not None:
            tx.written.add((new.session_id, new.parent_run_id))
            linked = AppendResult(id=str(row.link_record_id), inserted=True, session_status=status)
        return StartResults(
            started=AppendResult(id="1", inserted=True, session_status=status), linked=linked
        )

    def finish_run(
        self, tx: Tx, status: RunStatus, record: NewRecord, payload: RunCompletedPayload
    ) -> AppendResult | None:
        """``runtime_store_finish_run`` (migration 0012): the writers' lock, the run and
        the keyed record, the ``run_completed`` checks against the run, and the terminal
        change with its record (or the exact retry's answer), in one round trip."""
        params = values_of(record, NEW_RECORD_FIELDS)
        params.update(
            status=status.value,
            labels=labels_json(payload.labels),
            cancellation_reason=payload.cancellation_reason,
            now_ms=tx.now_ms,
        )
        row = st.FINISH_RUN.first(tx.conn, params)
        return _one_statement_result(tx, record, row)

    def begin_snapshot(self, conn: Connection) -> None:
        conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

    def insert_many(self, conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """One ``COPY … FROM STDIN`` on the driver connection: about three times the rows
        per second of an INSERT (psycopg's executemany sends a statement per row, each
        firing the statement-level triggers, the live tail's NOTIFY, once more). Driver
        errors come back as SQLAlchemy's, as from any statement."""
        names = tuple(rows[0])
        sql = f"COPY {table.name} ({', '.join(names)}) FROM STDIN"
        dbapi = conn.dialect.loaded_dbapi
        driver = conn.connection.driver_connection
        assert driver is not None
        try:
            with driver.cursor() as cursor, cursor.copy(sql) as copy:
                for row in rows:
                    copy.write_row([row[name] for name in names])
        except dbapi.Error as exc:  # as driver.py maps the errors of its statements
            invalidated = conn.dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
            if invalidated:
                conn.invalidate(exc)
            raise sa.exc.DBAPIError.instance(
                sql,
                None,
                exc,
                dbapi.Error,
                hide_parameters=True,
                connection_invalidated=invalidated,
                dialect=conn.dialect,
            ) from exc

    @contextmanager
    def exclusive(self, engine: Engine, name: str) -> Iterator[bool]:
        """A session-level advisory lock on its own connection: one replica at a time."""
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            acquired = bool(conn.execute(sa.select(sa.func.pg_try_advisory_lock(key))).scalar())
            try:
                yield acquired
            finally:
                if acquired:
                    conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))

    def flush(self, tx: Tx) -> None:
        if not self._flush_fused(tx):
            super().flush(tx)

    @staticmethod
    def _flush_fused(tx: Tx) -> bool:
        """The common write (one record on one existing run) as one statement."""
        if len(tx.records) != 1 or tx.checkpoints:
            return False
        dirty_runs = [run for run in tx.runs.values() if run.dirty or run.is_new]
        dirty_sessions = [session for session in tx.sessions.values() if session.dirty]
        if len(dirty_runs) != 1 or dirty_runs[0].is_new or len(dirty_sessions) > 1:
            return False
        run = dirty_runs[0]
        params = {st.RECORD + name: value for name, value in tx.records[0].items()}
        params.update(_run_update(run))
        session_kind: bool | None = None
        if dirty_sessions:
            session_kind = dirty_sessions[0].state_changed
            params.update(_session_update(dirty_sessions[0]))
        st.FUSED_APPENDS[(run.state_changed, session_kind)].execute(tx.conn, params)
        return True


@dataclass(frozen=True, slots=True)
class StartResults:
    """What a start in one statement stored: the ``run_started`` record, and a child's
    ``child_run_linked`` record on its parent."""

    started: AppendResult
    linked: AppendResult | None = None


def _one_statement_result(tx: Tx, record: NewRecord, row: Any) -> AppendResult | None:
    """The answer of a one-record function (``outcome``, ``record_id``,
    ``session_status``): ``None`` when it refused."""
    if row is None or row.outcome == "refused":
        return None
    if row.outcome == "inserted":
        tx.written.add((record.session_id, record.run_id))
    status = row.session_status
    return AppendResult(
        id=str(row.record_id),
        inserted=row.outcome == "inserted",
        session_status=None if status is None else SessionStatus(status),
    )


_DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect for dialect in (SqliteDialect(), PostgresDialect())
}


def dialect_of(engine: Engine) -> Dialect:
    """The dialect strategy of an engine's database."""
    try:
        return _DIALECTS[engine.dialect.name]
    except KeyError:
        raise ValueError(f"runtime-store does not support {engine.dialect.name!r}") from None
