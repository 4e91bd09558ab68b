"""A run as its checks see it: its facts row, its record statistics, its terminal record.

A per-run check is a function of a ``RunFacts`` that yields the problems it finds as
sentences; each module lists its checks with the invariant they report (``RunChecks``),
and the problems of one check become one violation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from sqlalchemy.engine import Connection, Row

from app.domain.payloads import RUN_COMPLETED, RunCompletedPayload, decode_run_completed
from runtime_store_client import StoreError


@dataclass(frozen=True, slots=True)
class RecordStats:
    """What one ``GROUP BY run_id`` pass knows of a run's records; zeros for none."""

    n: int = 0
    min_seq: int = 0
    max_seq: int = 0
    started_n: int = 0
    #: Record 1 is a run_started record.
    started_first: bool = False
    #: The type of record 2, if there is one.
    second_type: str | None = None
    completed_n: int = 0
    suspended_n: int = 0
    intent_n: int = 0
    link_n: int = 0
    #: Records that hold a session position.
    positioned: int = 0
    # min = max = the run's value means every record carries it.
    min_agent: str | None = None
    max_agent: str | None = None
    min_session: str | None = None
    max_session: str | None = None


NO_RECORDS = RecordStats()


def decoded(decode: Callable[[bytes], Any], payload: Any) -> tuple[Any, str]:
    """``(value, "")`` or ``(None, error)``: a bad payload is a finding, not a crash."""
    try:
        return decode(bytes(payload)), ""
    except StoreError as exc:
        return None, exc.message


class RunFacts:
    """One run of a page: its row from ``reading.run_rows`` and its record statistics."""

    __slots__ = ("completed", "completed_error", "conn", "row", "run_id", "session_id", "stats")

    def __init__(self, conn: Connection, row: Row[Any], stats: RecordStats) -> None:
        #: For the few follow-up queries that describe a run already found broken.
        self.conn = conn
        self.row = row
        self.stats = stats
        self.run_id: str = row.run_id
        self.session_id: str = row.session_id or ""
        # Decoded once: the terminal, stop and cancellation checks all read it.
        self.completed: RunCompletedPayload | None = None
        self.completed_error = ""
        if row.term_type == RUN_COMPLETED:
            self.completed, self.completed_error = decoded(decode_run_completed, row.term_payload)


#: A per-run check: the problems it finds, each a sentence.
RunCheck: TypeAlias = Callable[[RunFacts], Iterator[str]]
#: Checks with the invariant each reports, in report order.
RunChecks: TypeAlias = tuple[tuple[str, RunCheck], ...]
