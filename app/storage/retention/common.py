"""What every part of a retention sweep shares: its report, its progress, its steps."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import sqlalchemy as sa

from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import RunStatus

log = logging.getLogger("runtime_store.retention")
T = TypeVar("T")

#: Candidates read per query.
PAGE: Final = 500
#: Sessions tombstoned per transaction: short enough that a writer waiting for the
#: SQLite write lock waits little, long enough to save most of the per-commit cost.
TOMBSTONES: Final = 20
#: The name of the advisory lock that keeps sweeps to one replica at a time.
LOCK_NAME: Final = "runtime-store retention"
_TERMINAL: Final = tuple(status.value for status in RunStatus if status.is_terminal)


@dataclass
class Sweep:
    """What a sweep did (or, dry, would do)."""

    sessions: int = 0
    session_records: int = 0
    archived: int = 0
    #: Sessions left for the next sweep: a running run, or records added while archiving.
    skipped_sessions: int = 0
    runs: int = 0
    run_records: int = 0
    #: Sessionless seed operations whose run never started, and their records (15.7).
    seeds: int = 0
    seed_records: int = 0
    #: (agent, run) pairs whose memory went, the run missing, and their events.
    memory_runs: int = 0
    memory_events: int = 0
    seconds: float = 0.0
    dry_run: bool = False

    @property
    def items(self) -> int:
        """What a sweep reports progress in: sessions, runs, seeds of runs that never
        started and memory of missing runs."""
        return self.sessions + self.runs + self.seeds + self.memory_runs

    def summary(self) -> str:
        verb = ("would purge", "would delete") if self.dry_run else ("purged", "deleted")
        parts = [
            f"{verb[0]} {self.sessions} ended sessions ({self.session_records} records)",
            f"{verb[1]} {self.runs} sessionless runs ({self.run_records} records)",
            f"{verb[1]} {self.seeds} seeds of sessionless runs that never started "
            f"({self.seed_records} records)",
            f"{verb[1]} the memory of {self.memory_runs} runs that do not exist "
            f"({self.memory_events} events)",
        ]
        if self.archived:
            parts.append(f"archived {self.archived} sessions")
        if self.skipped_sessions:
            parts.append(
                f"left {self.skipped_sessions} sessions for a later sweep (a running run, "
                "or records added meanwhile)"
            )
        return "; ".join(parts) + ("" if self.dry_run else f" in {self.seconds:.1f} s")


#: Told the kind of items done (``session``, ``run``, ``seed`` or ``memory``), how many,
#: and their records (memory: events).
Progress = Callable[[str, int, int], None]


def no_progress(kind: str, items: int, records: int) -> None:
    del kind, items, records


@dataclass
class Step:
    progress: Progress = no_progress
    should_stop: Callable[[], bool] = lambda: False

    def stopped(self) -> bool:
        return self.should_stop()


def rows(tx: Tx, query: sa.Select[Any], params: dict[str, Any]) -> list[Any]:
    return list(tx.conn.execute(query, params).all())
