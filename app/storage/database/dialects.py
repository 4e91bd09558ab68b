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
import contextlib
import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.domain.state import RunState, SessionState
from app.storage.database import statements as st
from app.storage.database.raw_statements import as_sqlalchemy_errors
from app.storage.database.read_deadlines import bounded_statements
from app.storage.database.row_mapping import (
    RUN_COLUMNS,
    RUN_MUTABLE,
    SESSION_MUTABLE,
    label_rows,
    values_of,
)
from runtime_store_client import UnavailableError

if TYPE_CHECKING:
    from app.storage.database.raw_statements import DriverStatement


@dataclass(frozen=True, slots=True)
class Writes:
    """What a transaction buffered, flushed just before its commit."""

    runs: Sequence[RunState]
    sessions: Sequence[SessionState]
    checkpoints: list[dict[str, Any]]
    records: list[dict[str, Any]]


class Dialect(abc.ABC):
    """The operations' view of a database; subclasses hold what differs."""

    name = ""

    @abc.abstractmethod
    def lock_run(self, conn: Connection, run_id: str, event_key: str | None) -> tuple[Any, Any]:
        """The rows of a run about to be written, its writers' lock held: the run's row
        (``None``: no such run) and its session's row (``None``: sessionless, or gone).

        With ``event_key`` the run's row also holds the record stored under that key
        (``rec_*`` columns, all NULL when none), read in the same statement.
        """

    def fetch_all(
        self, conn: Connection, statement: DriverStatement, params: dict[str, Any]
    ) -> Sequence[Sequence[Any]]:
        """Every row of a read, by position (a page's keys and records); SQLite through
        SQLAlchemy."""
        return conn.execute(statement.statement, params).all()

    def select_run(self, conn: Connection, run_id: str) -> Any:
        """The run's row read without a lock, or ``None``; SQLite through SQLAlchemy."""
        return conn.execute(st.SELECT_RUN, {"run_id": run_id}).first()

    def records_by_keys(self, conn: Connection, run_id: str, keys: list[str]) -> Sequence[Any]:
        """The run's records stored under any of ``keys`` (``rec_*`` columns)."""
        return conn.execute(st.SELECT_RECORDS_BY_KEYS, {"run_id": run_id, "event_keys": keys}).all()

    #: Whether the common writes take PostgreSQL's fast path (``fast_path/``): SQL
    #: functions answering in one round trip, or refusing to the Python path.
    fast_path = False
    #: Whether an import stages its rows and publishes them in slices under claims of its
    #: IDs (SQLite, ``claims.py``), which every new run and session must then respect.
    stages_imports = False
    #: Whether reads run in autocommit (``UnitOfWork.read``): PostgreSQL at READ
    #: COMMITTED, where a read transaction is no snapshot, only two more round trips.
    reads_in_autocommit = False

    def lock_run_id(self, conn: Connection, run_id: str) -> None:
        """Hold the lock of a run ID until the transaction ends: seed writes and the start
        of a new run take it (15.8), so a begin and a start of one run ID serialise even
        when neither has a row to lock. SQLite: the transaction's database lock is it."""
        del conn, run_id

    def lock_sessionless(self, conn: Connection, run_id: str) -> Any:  # noqa: ARG002
        """The row of a sessionless run about to be written (a one-shot parent), its lock
        held; ``None`` when the row already read is current: on SQLite the transaction's
        database lock already is the lock."""
        return None

    def flush(self, conn: Connection, writes: Writes) -> None:
        """Send every buffered write: new runs, changed runs and sessions, checkpoints,
        then records."""
        new_runs = [run for run in writes.runs if run.is_new]
        if new_runs:
            conn.execute(st.INSERT_RUN, [values_of(run, RUN_COLUMNS) for run in new_runs])
            labels = [row for run in new_runs for row in label_rows(run)]
            if labels:
                conn.execute(st.INSERT_RUN_LABELS, labels)
        for run in writes.runs:
            if run.dirty and not run.is_new:
                update = st.UPDATE_RUN if run.state_changed else st.UPDATE_RUN_COUNT
                conn.execute(update, _run_update(run))
        for session in writes.sessions:
            if session.dirty:
                update = st.UPDATE_SESSION if session.state_changed else st.UPDATE_SESSION_COUNT
                conn.execute(update, _session_update(session))
        if writes.checkpoints:
            conn.execute(st.INSERT_CHECKPOINT, writes.checkpoints)
        if writes.records:
            conn.execute(st.INSERT_RECORD, writes.records)

    def pause_between_batches(self, elapsed: float) -> None:
        """Called after each purge batch that took ``elapsed`` seconds; no pause by default
        (PostgreSQL's row locks let writers through)."""
        del elapsed

    def begin_snapshot(self, conn: Connection) -> None:
        """Make the transaction just begun on ``conn`` read one consistent snapshot. SQLite:
        a deferred transaction in WAL mode already does, from its first read."""
        del conn

    @contextmanager
    def read_only(self, conn: Connection) -> Iterator[None]:
        """Make ``conn`` refuse writes for the block (``db verify``). PostgreSQL: its
        snapshots are begun READ ONLY (``begin_snapshot``), nothing to do here."""
        del conn
        yield

    @contextmanager
    def one_at_a_time(self, engine: Engine, key: int) -> Iterator[None]:
        """Wait until no other process holds the job ``key`` and hold it for the block
        (migrations). SQLite: one process serves a file; its writes serialise anyway."""
        del engine, key
        yield

    #: Whether the database itself tells every worker what each commit wrote (PostgreSQL's
    #: NOTIFY triggers); else the store tells its own worker (``SqlStore.watch_commits``).
    notifies_commits = False

    def insert_many(self, conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Insert many rows at once (an import's batches); SQLite: one executemany."""
        conn.execute(table.insert(), rows)

    @contextmanager
    def exclusive(self, engine: Engine, name: str) -> Iterator[Exclusive]:
        """Whether this process may run the job ``name`` now (truthy), held until the
        block ends unless lost (``Exclusive.still_held``). SQLite: always (one process
        serves a SQLite file; its writes serialise anyway)."""
        del engine, name
        yield Exclusive(True)


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
    stages_imports = True

    def lock_run(self, conn: Connection, run_id: str, event_key: str | None) -> tuple[Any, Any]:
        # The transaction already holds the database's write lock.
        if event_key is None:
            row = conn.execute(st.SELECT_RUN, {"run_id": run_id}).first()
        else:
            params = {"run_id": run_id, "event_key": event_key}
            row = conn.execute(st.SELECT_RUN_AND_RECORD.statement, params).first()
        if row is None or row.session_id is None:
            return row, None
        return row, conn.execute(st.SELECT_SESSION, {"session_id": row.session_id}).first()

    def pause_between_batches(self, elapsed: float) -> None:
        time.sleep(elapsed)

    @contextmanager
    def read_only(self, conn: Connection) -> Iterator[None]:
        conn.exec_driver_sql("PRAGMA query_only = ON")
        conn.commit()
        try:
            yield
        finally:
            conn.rollback()
            conn.exec_driver_sql("PRAGMA query_only = OFF")
            conn.commit()


class PostgresDialect(Dialect):
    """PostgreSQL. With ``fast_path`` off (``RUNTIME_STORE_PG_FAST_PATH=off``) every write
    takes the Python path: the functions of ``fast_path/`` are never called."""

    name = "postgresql"

    def __init__(self, *, fast_path: bool = True) -> None:
        self.fast_path = fast_path

    def lock_run(self, conn: Connection, run_id: str, event_key: str | None) -> tuple[Any, Any]:
        session = st.LOCK_SESSION_OF_RUN.first(conn, {"run_id": run_id})
        # Under the session's lock the run is read without one (the hot path); a sessionless
        # run (or none at all) is its own lock.
        lock = session is None
        if event_key is None:
            if lock:
                return conn.execute(st.LOCK_RUN, {"run_id": run_id}).first(), None
            return st.SELECT_RUN_DRIVER.first(conn, {"run_id": run_id}), session
        params = {"run_id": run_id, "event_key": event_key}
        if lock:
            return conn.execute(st.LOCK_RUN_AND_RECORD, params).first(), None
        return st.SELECT_RUN_AND_RECORD.first(conn, params), session

    def lock_sessionless(self, conn: Connection, run_id: str) -> Any:
        return conn.execute(st.LOCK_RUN, {"run_id": run_id}).first()

    def lock_run_id(self, conn: Connection, run_id: str) -> None:
        """A transaction-level advisory lock on the run ID's hash; the start function of
        ``fast_path/`` takes the same one (``hashtextextended(run_id, 15)``)."""
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtextextended(run_id, 15))))

    def fetch_all(
        self, conn: Connection, statement: DriverStatement, params: dict[str, Any]
    ) -> Sequence[Sequence[Any]]:
        """On the driver connection: plain tuples, no SQLAlchemy row per record."""
        return statement.all(conn, params)

    def select_run(self, conn: Connection, run_id: str) -> Any:
        """On the driver connection (reads of one run: ``load_run``, a page's run)."""
        return st.SELECT_RUN_DRIVER.first(conn, {"run_id": run_id})

    def records_by_keys(self, conn: Connection, run_id: str, keys: list[str]) -> Sequence[Any]:
        """Probed key by key (``SELECT_RECORDS_BY_KEYS_PROBED``)."""
        params = {"run_id": run_id, "event_keys": keys}
        return conn.execute(st.SELECT_RECORDS_BY_KEYS_PROBED, params).all()

    reads_in_autocommit = True
    notifies_commits = True

    @contextmanager
    def one_at_a_time(self, engine: Engine, key: int) -> Iterator[None]:
        """A session-level advisory lock, waited for, on its own connection."""
        with engine.connect() as conn:
            conn.execute(sa.select(sa.func.pg_advisory_lock(key)))
            try:
                yield
            finally:
                conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))
                conn.commit()

    def begin_snapshot(self, conn: Connection) -> None:
        conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

    def insert_many(self, conn: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """One ``COPY … FROM STDIN`` on the driver connection: about three times the rows
        per second of an INSERT (psycopg's executemany sends a statement per row, each
        firing the statement-level triggers, the live tail's NOTIFY, once more). Driver
        errors come back as SQLAlchemy's, as from any statement."""
        names = tuple(rows[0])
        sql = f"COPY {table.name} ({', '.join(names)}) FROM STDIN"
        driver = conn.connection.driver_connection
        assert driver is not None
        with as_sqlalchemy_errors(conn, sql), driver.cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row([row[name] for name in names])

    @contextmanager
    def exclusive(self, engine: Engine, name: str) -> Iterator[Exclusive]:
        """A session-level advisory lock on its own connection: one replica at a time.

        Every statement on that connection is bounded (``bounded_statements``): on a
        frozen primary the lock's query answers ``unavailable`` within the read deadline
        instead of waiting for the server to resume. The lock lives as long as the
        connection: after a failover the old primary's lock is gone, and another replica
        may take it on the new one, so a job asks ``still_held`` before each step (the
        connection still answers on a primary and its backend still holds the lock)."""
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
        held_params = {"classid": unsigned >> 32, "objid": unsigned & 0xFFFF_FFFF}
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            with bounded_statements(conn, engine):
                acquired = bool(conn.execute(sa.select(sa.func.pg_try_advisory_lock(key))).scalar())
            lock = Exclusive(acquired, lambda: _still_held(conn, engine, held_params))
            try:
                yield lock
            finally:
                if acquired and not lock.lost:
                    with (
                        contextlib.suppress(sa.exc.SQLAlchemyError, UnavailableError),
                        bounded_statements(conn, engine),
                    ):
                        conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))

    def flush(self, conn: Connection, writes: Writes) -> None:
        if not self._flush_fused(conn, writes):
            super().flush(conn, writes)

    @staticmethod
    def _flush_fused(conn: Connection, writes: Writes) -> bool:
        """The common write (one record on one existing run) as one statement."""
        if len(writes.records) != 1 or writes.checkpoints:
            return False
        dirty_runs = [run for run in writes.runs if run.dirty or run.is_new]
        dirty_sessions = [session for session in writes.sessions if session.dirty]
        if len(dirty_runs) != 1 or dirty_runs[0].is_new or len(dirty_sessions) > 1:
            return False
        run = dirty_runs[0]
        params = {st.RECORD + name: value for name, value in writes.records[0].items()}
        params.update(_run_update(run))
        session_kind: bool | None = None
        if dirty_sessions:
            session_kind = dirty_sessions[0].state_changed
            params.update(_session_update(dirty_sessions[0]))
        st.FUSED_APPENDS[(run.state_changed, session_kind)].execute(conn, params)
        return True


def dialect_of(engine: Engine, *, fast_path: bool = True) -> Dialect:
    """The dialect strategy of an engine's database; ``fast_path=False`` keeps every write
    of PostgreSQL on the Python path (SQLite has no fast path)."""
    if engine.dialect.name == SqliteDialect.name:
        return SqliteDialect()
    if engine.dialect.name == PostgresDialect.name:
        return PostgresDialect(fast_path=fast_path)
    raise ValueError(f"runtime-store does not support {engine.dialect.name!r}")


class Exclusive:
    """An exclusive job's lock (``Dialect.exclusive``): truthy when this process got it;
    ``still_held`` says whether it still has it (PostgreSQL: asked of the lock's
    connection; once lost, lost for good)."""

    __slots__ = ("_check", "acquired", "lost")

    def __init__(self, acquired: bool, check: Callable[[], bool] | None = None) -> None:
        self.acquired = acquired
        self._check = check
        self.lost = False

    def __bool__(self) -> bool:
        return self.acquired

    def still_held(self) -> bool:
        if not self.acquired or self.lost:
            return False
        if self._check is not None and not self._check():
            self.lost = True
        return not self.lost


#: Whether the connection's own backend holds the advisory lock (a bigint key: its high
#: and low halves, ``objsubid`` 1) on a server that takes writes.
_HELD: Final = sa.text(
    "SELECT NOT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_locks"
    " WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted"
    " AND classid = CAST(:classid AS oid) AND objid = CAST(:objid AS oid) AND objsubid = 1)"
)


def _still_held(conn: Connection, engine: Engine, params: dict[str, int]) -> bool:
    """Asked on the lock's connection, within the read deadline: a lost connection (its
    server died, stopped or froze: cut) or a reconnected one holds no lock."""
    if conn.invalidated or conn.closed:
        return False
    try:
        with bounded_statements(conn, engine):
            return bool(conn.execute(_HELD, params).scalar())
    except (sa.exc.SQLAlchemyError, UnavailableError):
        return False
