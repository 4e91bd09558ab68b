"""``runtime-store db verify``: a read-only check of the database's invariants.

The checker walks the database in pages of key ranges and never holds more than one page
in memory (``reading``): run pages check every per-run invariant (``runs``, ``lifecycle``,
``links``, ``sessions``), session pages check session positions and what purges left
(``sessions``), seed pages every seed fact (``seeds``: chains, declarations, publication,
attachment, CONTRACT.md 15). Every page runs in its own read-only transaction, so each
check compares rows of one consistent snapshot. Rows are only ever described in detail (first gaps,
first mismatching record) for runs or sessions already found broken.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Engine

from app.storage.verify.reading import query_only
from app.storage.verify.report import (
    CANCELLATION_PROVENANCE,
    CHILD_LINKS,
    CONTINUATION_SUCCESSOR,
    DANGLING_ROWS,
    INVARIANTS,
    LIFECYCLE_KEYS,
    POSITION_PRESENCE,
    PURGED_SESSION,
    RECORD_IDS,
    RECORD_OWNER,
    RUN_LABELS,
    RUN_STARTED_FIRST,
    SEED_ATTACHMENT,
    SEED_CHAINS,
    SEED_DECLARATIONS,
    SEED_PUBLICATION,
    SESSION_POSITIONS,
    START_FACTS,
    STOPPED_START,
    SUSPENSION_CHECKPOINT,
    TERMINAL_RECORD,
    VerifyReport,
    Violation,
)
from app.storage.verify.runs import verify_run_pages
from app.storage.verify.seeds import verify_seed_pages
from app.storage.verify.sessions import verify_session_pages

__all__ = [
    "CANCELLATION_PROVENANCE",
    "CHILD_LINKS",
    "CONTINUATION_SUCCESSOR",
    "DANGLING_ROWS",
    "DEFAULT_PAGE_SIZE",
    "INVARIANTS",
    "LIFECYCLE_KEYS",
    "POSITION_PRESENCE",
    "PURGED_SESSION",
    "RECORD_IDS",
    "RECORD_OWNER",
    "RUN_LABELS",
    "RUN_STARTED_FIRST",
    "SEED_ATTACHMENT",
    "SEED_CHAINS",
    "SEED_DECLARATIONS",
    "SEED_PUBLICATION",
    "SESSION_POSITIONS",
    "START_FACTS",
    "STOPPED_START",
    "SUSPENSION_CHECKPOINT",
    "TERMINAL_RECORD",
    "VerifyReport",
    "Violation",
    "verify_database",
]

DEFAULT_PAGE_SIZE: Final = 2000


def verify_database(engine: Engine, *, page_size: int = DEFAULT_PAGE_SIZE) -> VerifyReport:
    """Check every invariant over the whole database; never writes."""
    if page_size < 1:
        raise ValueError("page_size must be positive")
    report = VerifyReport()
    with engine.connect() as conn, query_only(conn):
        verify_run_pages(conn, page_size, report)
        verify_session_pages(conn, page_size, report)
        verify_seed_pages(conn, page_size, report)
    return report
