"""What retention keeps (CONTRACT.md 11.4): the ages after which data is deleted.

Unset ages keep forever. Ages are measured back from the store clock: an ended session
goes once its ``ended_at`` is older than ``ended_sessions``; a terminal sessionless run
once its last state change (``updated_at``) is older than ``sessionless_runs``; the memory
an agent appended for a run that does not exist once all of it (its events' timestamps
and its appends' times) is older than ``orphan_memory``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from .durations import format_duration


@dataclass(frozen=True)
class RetentionPolicy:
    ended_sessions: timedelta | None = None
    sessionless_runs: timedelta | None = None
    #: Each session is exported here (one NDJSON file) before it is purged.
    archive_dir: Path | None = None
    orphan_memory: timedelta | None = None

    @property
    def keeps_everything(self) -> bool:
        return (
            self.ended_sessions is None
            and self.sessionless_runs is None
            and self.orphan_memory is None
        )

    def session_cutoff_ms(self, now_ms: int) -> int | None:
        """Sessions that ended before this instant go; ``None``: none does."""
        return _cutoff(now_ms, self.ended_sessions)

    def run_cutoff_ms(self, now_ms: int) -> int | None:
        """Terminal sessionless runs last changed before this instant go."""
        return _cutoff(now_ms, self.sessionless_runs)

    def orphan_memory_cutoff_ms(self, now_ms: int) -> int | None:
        """The memory of a run that does not exist goes when all of it is older."""
        return _cutoff(now_ms, self.orphan_memory)

    def describe(self) -> str:
        def age(value: timedelta | None) -> str:
            return "kept forever" if value is None else f"older than {format_duration(value)}"

        archive = f"; archived to {self.archive_dir}" if self.archive_dir else ""
        return (
            f"ended sessions {age(self.ended_sessions)}, terminal sessionless runs "
            f"{age(self.sessionless_runs)}, memory of runs that do not exist "
            f"{age(self.orphan_memory)}{archive}"
        )


def _cutoff(now_ms: int, age: timedelta | None) -> int | None:
    if age is None:
        return None
    return now_ms - int(age.total_seconds() * 1000)
