"""``import_conflict`` (CONTRACT.md 11.4, 15.7): where an ID of the file is found in use in
the store, and how the error says so."""

from __future__ import annotations

from typing import Final

from app.domain.state import SessionRowStatus
from app.storage.database.tables import (
    memory_batches,
    memory_events,
    run_tombstones,
    runs,
    seed_operations,
)
from runtime_store_client import ImportConflictError

#: Where a run ID in use is found, and how ``import_conflict`` says so.
TAKEN: Final = (
    (runs, "already exists"),
    (run_tombstones, "was purged; its ID stays reserved"),
    (memory_events, "already has memory events"),
    (memory_batches, "already has memory appends"),
    (seed_operations, "is bound by a seed operation"),
)
#: Where a seed operation's run ID in use is found, and how ``import_conflict`` says so.
SEED_TAKEN: Final = (
    (runs, "already exists"),
    (seed_operations, "already has a seed operation"),
    (run_tombstones, "was purged; its ID stays reserved"),
)


def session_conflict(session_id: str, status: str) -> ImportConflictError:
    """The session ID is taken: by a session, or reserved by a purged one."""
    if status == SessionRowStatus.PURGED.value:
        message = f"session {session_id!r} was purged; its ID stays reserved"
    else:
        message = f"session {session_id!r} already exists"
    return ImportConflictError(message, session_id=session_id)
