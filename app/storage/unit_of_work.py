"""The unit of work: one transaction per operation, its retries, and its error mapping.

``UnitOfWork.write``/``read`` run an operation inside one database transaction and commit
or roll back whole. A ``Tx`` is what the operation sees: reads happen at once; writes are
buffered on the ``RunState``/``SessionState`` objects it has read and on its pending
records and checkpoints, and reach the database in one flush just before the commit.
Record IDs and session positions are computed from counters read under the locks this
transaction holds:

* a sessionful run is only ever written while holding its session's row lock
  (``SELECT … FOR UPDATE``), so the session lock serialises the session *and* its runs;
* a sessionless run is written while holding its own row lock;
* on SQLite every write transaction starts with ``BEGIN IMMEDIATE`` and so holds the
  database's single write lock from its first statement.

How the locks are taken and how the flush is sent differ by database: ``dialects.py``.
Transient database failures are retried a few times and then answered ``unavailable``;
every write is idempotent (records by their event keys, memory appends by their
idempotency keys), so a retry after a commit whose outcome is unknown is an exact retry.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.domain.state import RunState, SessionState, StoredRecord
from app.domain.validation import NewRun
from app.observability import metrics
from runtime_store_client import (
    InvalidArgumentError,
    RunNotFoundError,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    SessionPurgedError,
    StoreError,
    UnavailableError,
    WebhookEventType,
)

from . import interrupts, replicas
from . import statements as st
from .dialects import Dialect, Writes, dialect_of
from .engine import WRITE_OPTION
from .failures import raise_unless_transient, unavailable_message
from .outbox import PendingEvent, write_events
from .rows import run_from_row, session_from_row, stored_record_from_row

T = TypeVar("T")

DEFAULT_ATTEMPTS: Final = 5


def purged_error(session_id: str, run_id: str = "") -> SessionPurgedError:
    return SessionPurgedError(
        f"session {session_id!r} was purged", session_id=session_id, run_id=run_id
    )


@dataclass
class Tx:
    """One transaction of one operation; see the module docstring for the locking rules."""

    conn: Connection
    dialect: Dialect
    now_ms: int
    records: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, RunState] = field(default_factory=dict)
    sessions: dict[str, SessionState] = field(default_factory=dict)
    prefetched: dict[tuple[str, str], StoredRecord | None] = field(default_factory=dict)
    #: (session_id, "") of each session this transaction purged, for the live tail.
    purged: set[str] = field(default_factory=set)
    #: (session_id, run_id) written by a one-statement write (``UnitOfWork.statement``).
    written: set[tuple[str, str]] = field(default_factory=set)
    #: Webhook events of this transaction's state changes (the outbox, ``outbox.py``).
    events: list[PendingEvent] = field(default_factory=list)
    #: The read replica this read runs on (``None``: the primary).
    replica: replicas.Replica | None = None
    #: Whether the store has read replicas, so that positions matter (``read_position``).
    tracks_positions: bool = False

    def read_position(self) -> int | None:
        """How far the database this read runs on was when the read was made (an upper
        bound), to seal into a list cursor so the next page is served by a database at
        least as far (CONTRACT.md 14); ``None`` without read replicas."""
        if not self.tracks_positions:
            return None
        if self.replica is not None:
            return self.replica.read_position(self.conn)
        return replicas.primary_position(self.conn)

    # --- sessions ---------------------------------------------------------------------

    def session(self, session_id: str, *, lock: bool) -> SessionState | None:
        query = st.LOCK_SESSION if lock else st.SELECT_SESSION
        row = self.conn.execute(query, {"session_id": session_id}).first()
        if row is None:
            return None
        state = session_from_row(row)
        if lock:
            self.sessions[session_id] = state
        return state

    def keep_session(self, session: SessionState) -> SessionState:
        """Track a session read under this transaction's lock (its counter may move)."""
        self.sessions[session.session_id] = session
        return session

    def mark_session(self, session: SessionState) -> None:
        """The session's record counter moved."""
        session.dirty = True
        self.sessions[session.session_id] = session

    def change_session(self, session: SessionState, **changes: Any) -> None:
        """A state change of the session (its status, its end)."""
        for name, value in changes.items():
            setattr(session, name, value)
        session.state_changed = True
        self.mark_session(session)

    # --- runs -------------------------------------------------------------------------

    def run(self, run_id: str, *, lock: bool = False) -> RunState | None:
        if lock:
            row = self.conn.execute(st.LOCK_RUN, {"run_id": run_id}).first()
        else:
            row = self.dialect.select_run(self.conn, run_id)
        return None if row is None else self._keep_run(run_from_row(row))

    def _keep_run(self, run: RunState) -> RunState:
        self.runs[run.run_id] = run
        return run

    def run_was_purged(self, run_id: str) -> bool:
        """Whether the run ID belonged to a purged session (read *after* ``run()``)."""
        return self.conn.execute(st.SELECT_TOMBSTONE, {"run_id": run_id}).first() is not None

    def missing_run_error(self, run_id: str) -> StoreError:
        if self.run_was_purged(run_id):
            return SessionPurgedError(f"run {run_id!r} belonged to a purged session", run_id=run_id)
        return RunNotFoundError(f"run {run_id!r} not found", run_id=run_id)

    def existing_run(self, run_id: str) -> RunState:
        """A run that must exist, read without locks (for reads and identity checks)."""
        run = self.run(run_id)
        if run is None:
            raise self.missing_run_error(run_id)
        return run

    def open_run(
        self, run_id: str, event_key: str | None = None
    ) -> tuple[RunState, SessionState | None]:
        """A run about to be written, with the lock that serialises its writers held, and
        its live session (``session_purged`` when it has none any more). With
        ``event_key`` the record stored under it is read in the same statement and kept
        for the append check (``stored_record``)."""
        run_row, session_row = self.dialect.lock_run(self.conn, run_id, event_key)
        if run_row is None:
            raise self.missing_run_error(run_id)
        run = self.run_and_record(run_row, event_key)
        if not run.session_id:
            return run, None
        session = None if session_row is None else session_from_row(session_row)
        if session is None or session.purged:  # only purge removes a session's row
            raise purged_error(run.session_id, run.run_id)
        return run, self.keep_session(session)

    def lock_sessionless(self, run: RunState) -> RunState:
        """A sessionless run about to be written (a one-shot parent), its lock held."""
        row = self.dialect.lock_sessionless(self.conn, run.run_id)
        return run if row is None else self._keep_run(run_from_row(row))

    def run_and_record(self, row: Any, event_key: str | None) -> RunState:
        """Keep a run read together with its record under ``event_key`` (``rec_*``)."""
        run = self._keep_run(run_from_row(row))
        if event_key is not None:
            self.prefetched[(run.run_id, event_key)] = (
                None if row.rec_seq is None else stored_record_from_row(row)
            )
        return run

    def create_run(
        self,
        new: NewRun,
        *,
        outcome: RunStartOutcome,
        start_key: str,
        parent_link_key: str | None = None,
        request_digest: bytes | None = None,
        start_kind: RunStartKind = RunStartKind.ENGINE,
    ) -> RunState:
        return self._keep_run(
            RunState(
                run_id=new.run_id,
                agent_id=new.agent_id,
                session_id=new.session_id,
                parent_run_id=new.parent_run_id,
                status=RunStatus.RUNNING,
                start_outcome=outcome,
                started_at_ms=new.started_at_ms,
                updated_at_ms=self.now_ms,
                labels=new.labels_json,
                cancellation_reason="",
                record_count=0,
                start_key=start_key,
                parent_link_key=parent_link_key,
                request_digest=request_digest,
                start_kind=start_kind,
                is_new=True,
            )
        )

    def change_run(self, run: RunState, **changes: Any) -> None:
        """Apply a state change; ``updated_at`` moves to the store clock."""
        for name, value in changes.items():
            setattr(run, name, value)
        run.updated_at_ms = self.now_ms
        run.dirty = True
        run.state_changed = True

    # --- records and checkpoints ------------------------------------------------------

    def stored_record(self, run_id: str, event_key: str) -> StoredRecord | None:
        key = (run_id, event_key)
        if key in self.prefetched:
            return self.prefetched[key]
        row = self.conn.execute(
            st.SELECT_RECORD, {"run_id": run_id, "event_key": event_key}
        ).first()
        return None if row is None else stored_record_from_row(row)

    def add_record(self, row: dict[str, Any]) -> None:
        self.records.append(row)

    def checkpoint(self, run_id: str) -> tuple[str, bytes] | None:
        """The stored checkpoint's ID and data, if any."""
        row = self.conn.execute(st.SELECT_CHECKPOINT, {"run_id": run_id}).first()
        return None if row is None else (row.checkpoint_id, bytes(row.data))

    def add_checkpoint(self, run: RunState, checkpoint_id: str, data: bytes) -> None:
        self.checkpoints.append(
            {"run_id": run.run_id, "checkpoint_id": checkpoint_id, "data": data}
        )

    # --- the outbox ---------------------------------------------------------------------

    def add_event(
        self, event_type: WebhookEventType, *, session_id: str, run: RunState | None = None
    ) -> None:
        """Buffer the webhook event of a state change this transaction makes (13.2)."""
        self.events.append(PendingEvent(event_type, session_id, run))

    # --- commit -----------------------------------------------------------------------

    def flush(self) -> None:
        """Write every buffered change; called once, right before the commit."""
        self.dialect.flush(
            self.conn,
            Writes(
                runs=list(self.runs.values()),
                sessions=list(self.sessions.values()),
                checkpoints=self.checkpoints,
                records=self.records,
            ),
        )
        if self.events:
            write_events(self.conn, self.now_ms, self.events)

    def changes(self) -> set[tuple[str, str]]:
        """(session_id or "", run_id or "") of what the commit wrote: the records' runs and
        the purged sessions (with run "")."""
        written = {(row.get("session_id") or "", row["run_id"]) for row in self.records}
        return written | {(session_id, "") for session_id in self.purged}


class UnitOfWork:
    """Runs each operation in one transaction of one engine, retrying transient failures
    (a one-statement write, and a read on PostgreSQL, in autocommit: ``statement``,
    ``read``)."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], int],
        attempts: int = DEFAULT_ATTEMPTS,
        fast_path: bool = True,
    ) -> None:
        self.engine = engine
        self.dialect = dialect_of(engine, fast_path=fast_path)
        self._clock = clock
        self._attempts = attempts
        self._reads_in_autocommit: bool | None = None if self.dialect.reads_in_autocommit else False
        #: Told what each committed write changed (``Tx.changes``); the live tail's
        #: in-process wake-ups. Called on the writing thread, after the commit.
        self.committed: Callable[[set[tuple[str, str]]], None] | None = None
        #: Read replicas (CONTRACT.md 14); ``None``: the primary serves everything.
        self.replicas: replicas.ReplicaSet | None = None

    def write(self, operation: Callable[[Tx], T]) -> T:
        """Run a write: on SQLite it holds the write lock from its first statement."""
        return self._transact(operation, write=True)

    def read(self, operation: Callable[[Tx], T], *, at_least: int = 0) -> T:
        """Run a read. On PostgreSQL it runs in autocommit: at READ COMMITTED every
        statement takes its own snapshot whether or not a transaction is open, so a
        read-only transaction adds only its ``BEGIN`` and ``COMMIT`` round trips
        (``load_run``: three round trips become one; a page: five become three). On SQLite
        a read transaction is one snapshot, which the pages rely on: it stays.

        A read of an HTTP request that allows it may be served by a read replica that has
        replayed past the request's position and ``at_least`` (a list cursor's position):
        replicas.py. A replica that fails is left out and the primary serves the read."""
        if self.replicas is not None:
            request = replicas.current()
            if request is not None and request.routed:
                replica = self.replicas.choose(max(at_least, request.min_position))
                if replica is not None:
                    try:
                        result = self._single(
                            interrupts.bounded(operation, replica.engine), replica=replica
                        )
                    except StoreError:
                        raise
                    except Exception as exc:
                        if not replicas.is_replica_failure(exc):
                            raise
                        self.replicas.failed(replica, exc)
                    else:
                        metrics.read_served(replica.name)
                        return result
                metrics.read_served(replicas.PRIMARY)
        # Under the read deadline and the caller's cancellation (interrupts.py, 2.10).
        return self._transact(interrupts.bounded(operation, self.engine), write=False, single=None)

    def _read_in_autocommit(self) -> bool:
        """Only at READ COMMITTED (the default): an engine made with a stricter level gets
        the snapshot of a read transaction it asked for. Known once connected."""
        if self._reads_in_autocommit is None:
            with self.engine.connect() as conn:
                level = conn.default_isolation_level
            self._reads_in_autocommit = level == "READ COMMITTED"
        return self._reads_in_autocommit

    def statement(self, operation: Callable[[Tx], T]) -> T:
        """Run a write that is one statement, in autocommit: the statement is its own
        transaction, so no ``BEGIN`` or ``COMMIT`` round trip (PostgreSQL's one-statement
        append, migration 0010). Nothing is buffered or flushed: the operation sends its
        statement itself and records what it wrote in ``tx.written`` for the live tail's
        wake-ups. The same retries and error mapping as a transaction."""
        return self._transact(operation, write=True, single=True)

    def _transact(
        self, operation: Callable[[Tx], T], *, write: bool, single: bool | None = False
    ) -> T:
        """``single=None``: a read, in autocommit where ``_read_in_autocommit`` says so."""
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                if single or (single is None and self._read_in_autocommit()):
                    return self._single(operation)
                return self._once(operation, write=write)
            except StoreError:
                raise
            except (sa.exc.DataError, UnicodeEncodeError) as exc:
                # A value the database cannot hold. Validation refuses these first (2.6:
                # NUL, lone surrogates); this keeps any it missed a 4xx, never a 500.
                raise InvalidArgumentError("a value cannot be stored or looked up") from exc
            except sa.exc.IntegrityError:
                # A concurrent writer stored the same key first; the next attempt sees it.
                if attempt >= self._attempts:
                    raise
                metrics.transaction_retried("integrity")
            except (sa.exc.DBAPIError, sa.exc.TimeoutError) as exc:
                raise_unless_transient(exc)
                if attempt >= self._attempts:
                    metrics.transaction_unavailable()
                    raise UnavailableError(unavailable_message(exc)) from exc
                pool_timeout = isinstance(exc, sa.exc.TimeoutError)
                metrics.transaction_retried("pool_timeout" if pool_timeout else "transient")
            finally:
                metrics.transaction_finished(write=write, seconds=time.perf_counter() - started)
            time.sleep(random.uniform(0, min(0.2, 0.01 * 2**attempt)))

    def _single(self, operation: Callable[[Tx], T], replica: replicas.Replica | None = None) -> T:
        engine = self.engine if replica is None else replica.engine
        with engine.connect() as conn:
            autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
            tx = Tx(autocommit, self.dialect, self._clock(), replica=replica)
            tx.tracks_positions = self.replicas is not None
            result = operation(tx)
            if tx.written:
                self._note_position(autocommit)
        if tx.written and self.committed is not None:
            self.committed(tx.written)
        return result

    def _once(self, operation: Callable[[Tx], T], *, write: bool) -> T:
        with self.engine.connect() as conn:
            if write:
                conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                tx = Tx(conn, self.dialect, self._clock())
                tx.tracks_positions = self.replicas is not None
                result = operation(tx)
                tx.flush()
            if write:
                self._note_position(conn)
        if write and self.committed is not None and (tx.records or tx.purged):
            self.committed(tx.changes())
        return result

    def _note_position(self, conn: Connection) -> None:
        """Tell the HTTP request whose write just committed the primary's position now,
        past its commit (CONTRACT.md 14: ``Runtime-Store-Position``); only with replicas."""
        if self.replicas is None:
            return
        request = replicas.current()
        if request is None:
            return
        position = replicas.primary_position(conn)
        if conn.in_transaction():
            conn.rollback()
        request.written = max(request.written, position)
