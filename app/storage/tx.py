"""The unit of work of one store operation: locks, reads and buffered writes.

A ``Tx`` wraps one database transaction. Reads happen at once; writes are buffered on
in-memory ``RunState``/``SessionState`` objects and the pending record list, and reach
the database in ``flush()``, just before the commit. Record IDs and session positions
are computed from counters read under the locks this transaction holds:

* a sessionful run is only ever written while holding its session's row lock
  (``SELECT … FOR UPDATE``), so the session lock serialises the session *and* its runs;
* a sessionless run is written while holding its own row lock;
* on SQLite every write transaction starts with ``BEGIN IMMEDIATE`` and so holds the
  database's single write lock from its first statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from app.domain.times import from_millis
from app.domain.validation import NewRecord, NewRun
from runtime_store_client import (
    AppendResult,
    EventConflictError,
    Record,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStartOutcome,
    RunStatus,
    SessionPurgedError,
    SessionStatus,
)

from .fastpath import DriverStatement
from .schema import checkpoints, run_records, run_tombstones, runs, sessions

PURGED = "purged"


@dataclass(slots=True)
class SessionState:
    session_id: str
    status: str
    created_at_ms: int
    ended_at_ms: int | None
    record_count: int
    dirty: bool = False

    @property
    def purged(self) -> bool:
        return self.status == PURGED

    @property
    def contract_status(self) -> SessionStatus:
        return SessionStatus(self.status)


@dataclass(slots=True)
class RunState:
    run_id: str
    agent_id: str
    session_id: str
    parent_run_id: str
    status: RunStatus
    start_outcome: RunStartOutcome
    started_at_ms: int
    updated_at_ms: int
    labels_json: str
    cancellation_reason: str
    record_count: int
    start_key: str
    parent_link_key: str | None = None
    cancellation_key: str | None = None
    suspension_key: str | None = None
    terminal_key: str | None = None
    is_new: bool = False
    dirty: bool = False

    @property
    def terminal(self) -> bool:
        return self.status is not RunStatus.RUNNING


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    checkpoint_id: str
    data: bytes


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """The fields of a stored record that make it *the same* (1.7), and its ID."""

    seq: int
    agent_id: str
    session_id: str
    turn_id: str
    type: str
    payload: bytes
    timestamp_ms: int


_RECORD_COLUMNS = (
    run_records.c.seq.label("rec_seq"),
    run_records.c.agent_id.label("rec_agent_id"),
    run_records.c.session_id.label("rec_session_id"),
    run_records.c.turn_id.label("rec_turn_id"),
    run_records.c.type.label("rec_type"),
    run_records.c.payload.label("rec_payload"),
    run_records.c.timestamp_ms.label("rec_timestamp_ms"),
)


# Statements built once: SQLAlchemy then reuses their compiled form and cache key instead
# of rebuilding both on every call (the hot paths run several per operation).
_P = sa.bindparam
_SELECT_SESSION = sa.select(sessions).where(sessions.c.session_id == _P("session_id"))
_LOCK_SESSION = _SELECT_SESSION.with_for_update()
_SELECT_RUN = sa.select(runs).where(runs.c.run_id == _P("run_id"))
_LOCK_RUN = _SELECT_RUN.with_for_update()
_SELECT_TOMBSTONE = sa.select(run_tombstones.c.run_id).where(
    run_tombstones.c.run_id == _P("run_id")
)
_LOCK_SESSION_OF_RUN = (
    sa.select(sessions)
    .join(runs, runs.c.session_id == sessions.c.session_id)
    .where(runs.c.run_id == _P("run_id"))
    .with_for_update(of=sessions)
)
_SELECT_RUN_AND_RECORD = (
    sa.select(runs, *_RECORD_COLUMNS)
    .select_from(
        runs.outerjoin(
            run_records,
            sa.and_(
                run_records.c.run_id == runs.c.run_id,
                run_records.c.event_key == _P("event_key"),
            ),
        )
    )
    .where(runs.c.run_id == _P("run_id"))
)
_LOCK_RUN_AND_RECORD = _SELECT_RUN_AND_RECORD.with_for_update(of=runs)
_SELECT_RECORD = sa.select(*_RECORD_COLUMNS).where(
    run_records.c.run_id == _P("run_id"), run_records.c.event_key == _P("event_key")
)
_SELECT_CHECKPOINT = sa.select(checkpoints.c.checkpoint_id, checkpoints.c.data).where(
    checkpoints.c.run_id == _P("run_id")
)
_INSERT_RUN = runs.insert()
_INSERT_RECORD = run_records.insert()
_INSERT_CHECKPOINT = checkpoints.insert()
_UPDATE_RUN = (
    runs.update()
    .where(runs.c.run_id == _P("key_run_id"))
    .values(
        {
            name: _P(name)
            for name in (
                "status",
                "updated_at_ms",
                "cancellation_reason",
                "record_count",
                "cancellation_key",
                "suspension_key",
                "terminal_key",
            )
        }
    )
)
_UPDATE_SESSION = (
    sessions.update()
    .where(sessions.c.session_id == _P("key_session_id"))
    .values(status=_P("status"), ended_at_ms=_P("ended_at_ms"), record_count=_P("record_count"))
)


_RECORD_FIELDS = (
    "run_id",
    "seq",
    "event_key",
    "agent_id",
    "session_id",
    "session_seq",
    "turn_id",
    "type",
    "payload",
    "timestamp_ms",
)
_FUSED_RUN_FIELDS = (
    "status",
    "updated_at_ms",
    "cancellation_reason",
    "record_count",
    "cancellation_key",
    "suspension_key",
    "terminal_key",
)


def _fused_append(*, sessionful: bool) -> sa.Insert:
    """PostgreSQL only: the run's update, the session's update and the record's insert as
    one statement (data-modifying CTEs), one round trip instead of three."""
    update_run = (
        runs.update()
        .where(runs.c.run_id == _P("u_run_id"))
        .values({name: _P(f"u_run_{name}") for name in _FUSED_RUN_FIELDS})
        .cte("u_run")
    )
    ctes = [update_run]
    if sessionful:
        ctes.append(
            sessions.update()
            .where(sessions.c.session_id == _P("u_session_id"))
            .values(
                status=_P("u_session_status"),
                ended_at_ms=_P("u_session_ended_at_ms"),
                record_count=_P("u_session_record_count"),
            )
            .cte("u_session")
        )
    return (
        run_records.insert()
        .values({name: _P(f"r_{name}") for name in _RECORD_FIELDS})
        .add_cte(*ctes)
    )


_FUSED_APPEND = _fused_append(sessionful=True)
_FUSED_APPEND_SESSIONLESS = _fused_append(sessionful=False)

# The append path on PostgreSQL: lock, lookup and fused write (fastpath.py).
_FAST_LOCK_SESSION_OF_RUN = DriverStatement(_LOCK_SESSION_OF_RUN)
_FAST_SELECT_RUN_AND_RECORD = DriverStatement(_SELECT_RUN_AND_RECORD)
_FAST_FUSED_APPEND = DriverStatement(_FUSED_APPEND)
_FAST_FUSED_APPEND_SESSIONLESS = DriverStatement(_FUSED_APPEND_SESSIONLESS)


def _stored_from_prefixed(row: Any) -> StoredRecord:
    return StoredRecord(
        seq=row.rec_seq,
        agent_id=row.rec_agent_id,
        session_id=row.rec_session_id or "",
        turn_id=row.rec_turn_id,
        type=row.rec_type,
        payload=bytes(row.rec_payload),
        timestamp_ms=row.rec_timestamp_ms,
    )


def _session_from_row(row: Row[Any]) -> SessionState:
    return SessionState(
        session_id=row.session_id,
        status=row.status,
        created_at_ms=row.created_at_ms,
        ended_at_ms=row.ended_at_ms,
        record_count=row.record_count,
    )


def run_from_row(row: Row[Any]) -> RunState:
    return RunState(
        run_id=row.run_id,
        agent_id=row.agent_id,
        session_id=row.session_id or "",
        parent_run_id=row.parent_run_id,
        status=RunStatus(row.status),
        start_outcome=RunStartOutcome(row.start_outcome),
        started_at_ms=row.started_at_ms,
        updated_at_ms=row.updated_at_ms,
        labels_json=row.labels,
        cancellation_reason=row.cancellation_reason,
        record_count=row.record_count,
        start_key=row.start_key,
        parent_link_key=row.parent_link_key,
        cancellation_key=row.cancellation_key,
        suspension_key=row.suspension_key,
        terminal_key=row.terminal_key,
    )


def record_from_row(row: Row[Any]) -> Record:
    return Record(
        id=str(row.seq),
        event_key=row.event_key,
        run_id=row.run_id,
        agent_id=row.agent_id,
        session_id=row.session_id or "",
        turn_id=row.turn_id,
        type=row.type,
        payload=bytes(row.payload),
        timestamp=from_millis(row.timestamp_ms),
    )


_RUN_UPDATABLE = (
    "status",
    "updated_at_ms",
    "cancellation_reason",
    "record_count",
    "cancellation_key",
    "suspension_key",
    "terminal_key",
)


@dataclass
class Tx:
    """One transaction of one operation; see the module docstring for the locking rules."""

    conn: Connection
    now_ms: int
    _records: list[dict[str, Any]] = field(default_factory=list)
    _runs: dict[str, RunState] = field(default_factory=dict)
    _sessions: dict[str, SessionState] = field(default_factory=dict)
    _checkpoints: list[dict[str, Any]] = field(default_factory=list)
    _prefetched: dict[tuple[str, str], StoredRecord | None] = field(default_factory=dict)

    @property
    def row_locks(self) -> bool:
        """Whether the database has row locks (SQLite holds one database lock instead)."""
        return self.conn.dialect.name != "sqlite"

    # --- sessions ---------------------------------------------------------------------

    def session(self, session_id: str, *, lock: bool) -> SessionState | None:
        query = _LOCK_SESSION if lock else _SELECT_SESSION
        row = self.conn.execute(query, {"session_id": session_id}).first()
        if row is None:
            return None
        state = _session_from_row(row)
        if lock:
            self._sessions[session_id] = state
        return state

    def mark_session(self, session: SessionState) -> None:
        session.dirty = True
        self._sessions[session.session_id] = session

    # --- runs -------------------------------------------------------------------------

    def run(self, run_id: str, *, lock: bool = False) -> RunState | None:
        query = _LOCK_RUN if lock else _SELECT_RUN
        row = self.conn.execute(query, {"run_id": run_id}).first()
        if row is None:
            return None
        state = run_from_row(row)
        self._runs[run_id] = state
        return state

    def run_was_purged(self, run_id: str) -> bool:
        """Whether the run ID belonged to a purged session (read *after* ``run()``)."""
        return self.conn.execute(_SELECT_TOMBSTONE, {"run_id": run_id}).first() is not None

    def missing_run_error(self, run_id: str) -> Exception:
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
        """A run about to be written, with the lock that serialises its writers held.

        On PostgreSQL one statement locks the run's session (found through the run), and a
        second reads the run, under that lock, together with the record stored under
        ``event_key`` if any, so the append check needs no further round trip.
        """
        if not self.row_locks:
            run = self._run_and_record(run_id, event_key, lock=False)
            if run is None:
                raise self.missing_run_error(run_id)
            if not run.session_id:
                return run, None
            session = self.session(run.session_id, lock=False)
            self._require_live(session, run)
            assert session is not None
            self._sessions[session.session_id] = session
            return run, session
        locked = _FAST_LOCK_SESSION_OF_RUN.first(self.conn, {"run_id": run_id})
        if locked is None:  # a sessionless run (its own row is the lock), or no run at all
            run = self._run_and_record(run_id, event_key, lock=True)
            if run is None:
                raise self.missing_run_error(run_id)
            if not run.session_id:
                return run, None
            raise SessionPurgedError(  # its session row vanished under us: only purge does that
                f"session {run.session_id!r} was purged", run_id=run_id
            )
        session = _session_from_row(locked)
        self._sessions[session.session_id] = session
        run = self._run_and_record(run_id, event_key, lock=False)
        if run is None:
            raise self.missing_run_error(run_id)
        self._require_live(session, run)
        return run, session

    @staticmethod
    def _require_live(session: SessionState | None, run: RunState) -> None:
        if session is None or session.purged:
            raise SessionPurgedError(
                f"session {run.session_id!r} was purged",
                run_id=run.run_id,
                session_id=run.session_id,
            )

    def _run_and_record(self, run_id: str, event_key: str | None, *, lock: bool) -> RunState | None:
        """The run, and (cached for ``check_append``) its record under ``event_key``."""
        if event_key is None:
            return self.run(run_id, lock=lock)
        params = {"run_id": run_id, "event_key": event_key}
        if self.row_locks and not lock:  # PostgreSQL, under the session's lock: the hot path
            row = _FAST_SELECT_RUN_AND_RECORD.first(self.conn, params)
        else:
            query = _LOCK_RUN_AND_RECORD if lock else _SELECT_RUN_AND_RECORD
            row = self.conn.execute(query, params).first()
        if row is None:
            return None
        state = run_from_row(row)
        self._runs[run_id] = state
        self._prefetched[(run_id, event_key)] = (
            None if row.rec_seq is None else _stored_from_prefixed(row)
        )
        return state

    def create_run(
        self,
        new: NewRun,
        *,
        outcome: RunStartOutcome,
        start_key: str,
        parent_link_key: str | None = None,
    ) -> RunState:
        run = RunState(
            run_id=new.run_id,
            agent_id=new.agent_id,
            session_id=new.session_id,
            parent_run_id=new.parent_run_id,
            status=RunStatus.RUNNING,
            start_outcome=outcome,
            started_at_ms=new.started_at_ms,
            updated_at_ms=self.now_ms,
            labels_json=new.labels_json,
            cancellation_reason="",
            record_count=0,
            start_key=start_key,
            parent_link_key=parent_link_key,
            is_new=True,
        )
        self._runs[run.run_id] = run
        return run

    def change_run(self, run: RunState, **changes: Any) -> None:
        """Apply a state change; ``updated_at`` moves to the store clock."""
        for name, value in changes.items():
            setattr(run, name, value)
        run.updated_at_ms = self.now_ms
        run.dirty = True

    # --- records ----------------------------------------------------------------------

    def stored_record(self, run_id: str, event_key: str) -> StoredRecord | None:
        key = (run_id, event_key)
        if key in self._prefetched:
            return self._prefetched[key]
        row = self.conn.execute(_SELECT_RECORD, {"run_id": run_id, "event_key": event_key}).first()
        return None if row is None else _stored_from_prefixed(row)

    def check_append(self, run: RunState, record: NewRecord) -> str | None:
        """The owner and key parts of the append check (2.3).

        Returns the ID of the same record when it is already stored (an exact retry),
        ``None`` when the key is free; raises on another owner or other content.
        """
        self.check_owner(run, record)
        if run.is_new:
            return None
        stored = self.stored_record(run.run_id, record.event_key)
        if stored is None:
            return None
        same = (
            stored.agent_id == record.agent_id
            and stored.session_id == record.session_id
            and stored.turn_id == record.turn_id
            and stored.type == record.type
            and stored.timestamp_ms == record.timestamp_ms
            and stored.payload == record.payload
        )
        if not same:
            raise EventConflictError(
                f"event {record.event_key!r} of run {run.run_id!r} is already stored "
                "with other content",
                run_id=run.run_id,
                event_key=record.event_key,
            )
        return str(stored.seq)

    @staticmethod
    def check_owner(run: RunState, record: NewRecord) -> None:
        """The record's agent and session must be its run's (``run_record_owner_mismatch``)."""
        if record.agent_id != run.agent_id or record.session_id != run.session_id:
            raise RunRecordOwnerMismatchError(
                f"record {record.event_key!r} must carry agent {run.agent_id!r} and "
                f"session {run.session_id!r} of run {run.run_id!r}",
                run_id=run.run_id,
                event_key=record.event_key,
            )

    def expect_stored(
        self, run: RunState, record: NewRecord, session: SessionState | None
    ) -> AppendResult:
        """An exact retry of a lifecycle record the run remembers: its original ID."""
        record_id = self.check_append(run, record)
        if record_id is None:
            raise RuntimeError(
                f"run {run.run_id!r} remembers {record.event_key!r} but the record is missing"
            )
        return self.result(record_id, inserted=False, session=session)

    def insert(
        self, run: RunState, record: NewRecord, session: SessionState | None
    ) -> AppendResult:
        """Append a record with the next ID of its run and the next session position."""
        run.record_count += 1
        run.dirty = True
        position: int | None = None
        if session is not None:
            session.record_count += 1
            self.mark_session(session)
            position = session.record_count
        self._records.append(
            {
                "run_id": run.run_id,
                "seq": run.record_count,
                "event_key": record.event_key,
                "agent_id": record.agent_id,
                "session_id": record.session_id or None,
                "session_seq": position,
                "turn_id": record.turn_id,
                "type": record.type,
                "payload": record.payload,
                "timestamp_ms": record.timestamp_ms,
            }
        )
        return self.result(str(run.record_count), inserted=True, session=session)

    @staticmethod
    def result(record_id: str, *, inserted: bool, session: SessionState | None) -> AppendResult:
        return AppendResult(
            id=record_id,
            inserted=inserted,
            session_status=session.contract_status if session is not None else None,
        )

    # --- checkpoints ------------------------------------------------------------------

    def checkpoint(self, run_id: str) -> StoredCheckpoint | None:
        row = self.conn.execute(_SELECT_CHECKPOINT, {"run_id": run_id}).first()
        return None if row is None else StoredCheckpoint(row.checkpoint_id, bytes(row.data))

    def add_checkpoint(self, run: RunState, checkpoint_id: str, data: bytes) -> None:
        self._checkpoints.append(
            {"run_id": run.run_id, "checkpoint_id": checkpoint_id, "data": data}
        )

    # --- commit -----------------------------------------------------------------------

    def flush(self) -> None:
        """Write every buffered change; called once, right before the commit."""
        if self._flush_fused():
            return
        new_runs = [run for run in self._runs.values() if run.is_new]
        if new_runs:
            self.conn.execute(
                _INSERT_RUN,
                [
                    {
                        "run_id": run.run_id,
                        "agent_id": run.agent_id,
                        "session_id": run.session_id or None,
                        "parent_run_id": run.parent_run_id,
                        "status": run.status.value,
                        "start_outcome": run.start_outcome.value,
                        "started_at_ms": run.started_at_ms,
                        "updated_at_ms": run.updated_at_ms,
                        "labels": run.labels_json,
                        "cancellation_reason": run.cancellation_reason,
                        "record_count": run.record_count,
                        "start_key": run.start_key,
                        "parent_link_key": run.parent_link_key,
                        "cancellation_key": run.cancellation_key,
                        "suspension_key": run.suspension_key,
                        "terminal_key": run.terminal_key,
                    }
                    for run in new_runs
                ],
            )
        for run in self._runs.values():
            if run.dirty and not run.is_new:
                values = {name: getattr(run, name) for name in _RUN_UPDATABLE}
                values["status"] = run.status.value
                values["key_run_id"] = run.run_id
                self.conn.execute(_UPDATE_RUN, values)
        for session in self._sessions.values():
            if session.dirty:
                self.conn.execute(
                    _UPDATE_SESSION,
                    {
                        "key_session_id": session.session_id,
                        "status": session.status,
                        "ended_at_ms": session.ended_at_ms,
                        "record_count": session.record_count,
                    },
                )
        if self._checkpoints:
            self.conn.execute(_INSERT_CHECKPOINT, self._checkpoints)
        if self._records:
            self.conn.execute(_INSERT_RECORD, self._records)

    def _flush_fused(self) -> bool:
        """The common write (one record on one existing run) in one statement, on PostgreSQL."""
        if not self.row_locks or len(self._records) != 1 or self._checkpoints:
            return False
        dirty_runs = [run for run in self._runs.values() if run.dirty or run.is_new]
        dirty_sessions = [session for session in self._sessions.values() if session.dirty]
        if len(dirty_runs) != 1 or dirty_runs[0].is_new or len(dirty_sessions) > 1:
            return False
        run = dirty_runs[0]
        params = {f"r_{name}": value for name, value in self._records[0].items()}
        params["u_run_id"] = run.run_id
        for name in _FUSED_RUN_FIELDS:
            params[f"u_run_{name}"] = getattr(run, name)
        params["u_run_status"] = run.status.value
        if not dirty_sessions:
            _FAST_FUSED_APPEND_SESSIONLESS.execute(self.conn, params)
            return True
        session = dirty_sessions[0]
        params["u_session_id"] = session.session_id
        params["u_session_status"] = session.status
        params["u_session_ended_at_ms"] = session.ended_at_ms
        params["u_session_record_count"] = session.record_count
        _FAST_FUSED_APPEND.execute(self.conn, params)
        return True
