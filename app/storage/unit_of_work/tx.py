"""``Tx``: what one operation sees of its transaction (unit_of_work.py says the locking
rules). Reads happen at once; writes are buffered on the state objects it has read and on
its pending records, checkpoints and webhook events, and reach the database in one flush
just before the commit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from app.domain.state import RunState, SessionState, StoredRecord
from app.domain.validation import NewRun
from app.storage.database import positions, replicas
from app.storage.database import statements as st
from app.storage.database.dialects import Dialect, Writes
from app.storage.database.row_mapping import (
    run_from_row,
    session_from_row,
    stored_record_from_row,
)
from app.storage.unit_of_work import import_holds
from app.storage.unit_of_work.outbox import PendingEvent, write_events
from runtime_store_client import (
    RunNotFoundError,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    SessionPurgedError,
    StoreError,
    WebhookEventType,
)


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
        return positions.primary_position(self.conn)

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
        if self.dialect.stages_imports:
            import_holds.check_not_claimed(self.conn, import_holds.RUN, new.run_id)
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
                seed_end_id=new.seed_end_id,
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
