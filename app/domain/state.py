"""The stored state a contract rule decides on: snapshots of a session, a run and a
stored record, as the storage layer reads them under its locks
(``app/storage/database/row_mapping.py`` maps rows to them and checks their fields
against the tables' columns).

A decision (``append``, ``starts``, ``commands``) reads these and raises the contract's
error or says what to write; the storage operation applies it. ``dirty``,
``state_changed`` and ``is_new`` are the unit of work's change tracking.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.domain.validation import NewRecord
from runtime_store_client import RunStartKind, RunStartOutcome, RunStatus, SessionStatus


class SessionRowStatus(enum.StrEnum):
    """A session row's status: the contract's two, and ``purged`` for a tombstone row."""

    ACTIVE = SessionStatus.ACTIVE.value
    ENDED = SessionStatus.ENDED.value
    PURGED = "purged"


@dataclass(slots=True)
class SessionState:
    """A session row (fields: the ``sessions`` columns, in order)."""

    session_id: str
    status: SessionRowStatus
    created_at_ms: int
    ended_at_ms: int | None
    purged_at_ms: int | None
    record_count: int
    dirty: bool = False
    #: A column other than the counter changed (else the flush updates ``record_count`` only:
    #: SQLite rewrites the index entries of every column an UPDATE sets, changed or not).
    state_changed: bool = False

    @property
    def purged(self) -> bool:
        return self.status is SessionRowStatus.PURGED

    @property
    def contract_status(self) -> SessionStatus:
        return SessionStatus(self.status.value)


@dataclass(slots=True)
class RunState:
    """A run row (fields: the ``runs`` columns, in order); ``session_id`` "" when none.

    ``labels`` is the canonical JSON text of the label map, compared as a string.
    """

    run_id: str
    agent_id: str
    session_id: str
    parent_run_id: str
    status: RunStatus
    start_outcome: RunStartOutcome
    started_at_ms: int
    updated_at_ms: int
    labels: str
    cancellation_reason: str
    record_count: int
    start_key: str
    parent_link_key: str | None = None
    cancellation_key: str | None = None
    suspension_key: str | None = None
    terminal_key: str | None = None
    successor_run_id: str = ""
    #: The digest of the first start's request (12.1), ``None`` when it carried none.
    request_digest: bytes | None = None
    start_kind: RunStartKind = RunStartKind.ENGINE
    #: The seed history end the first start attached (15.5); "" for none.
    seed_end_id: str = ""
    is_new: bool = False
    dirty: bool = False
    #: A column other than ``record_count`` changed (see ``SessionState.state_changed``).
    state_changed: bool = False

    @property
    def terminal(self) -> bool:
        return self.status.is_terminal


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A stored record as the append check compares it (1.7), with its record ID."""

    seq: int
    record: NewRecord
