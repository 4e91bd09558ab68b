"""Times and durations as the console's lists show them: relative to now ("3 min ago"),
the exact UTC time on hover, and a run's duration.

The server renders the text once as a fallback; ``static/console-times.js`` keeps it fresh
in the browser with the same rules (``relative`` and ``duration`` here and there must
agree: tests/console/test_console_lists_browser.py compares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from runtime_store_client import RunMeta, RunStatus
from runtime_store_client.times import format_rfc3339

_UNITS: Final = (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1))


def duration(milliseconds: int) -> str:
    """``850 ms``, ``42 s``, ``3 min 5 s``, ``2 h 3 min``, ``3 d 4 h``: the two largest
    units (one below a minute)."""
    if milliseconds < 1000:
        return f"{max(milliseconds, 0)} ms"
    seconds = milliseconds // 1000
    parts: list[str] = []
    for name, size in _UNITS:
        if seconds >= size or parts:
            parts.append(f"{seconds // size} {name}")
            seconds %= size
        if len(parts) == 2 or (parts and name == "s"):
            break
    if parts[-1].startswith("0 "):
        parts.pop()
    return " ".join(parts)


def relative(milliseconds: int) -> str:
    """How long ago (``milliseconds`` before now), in its largest unit: ``just now``,
    ``42 s ago``, ``3 min ago``, ``2 h ago``, ``5 d ago``; a future time ``in 3 min``."""
    ahead = milliseconds < 0
    seconds = abs(milliseconds) // 1000
    if seconds < 5:
        return "just now"
    for name, size in _UNITS:
        if seconds >= size:
            amount = f"{seconds // size} {name}"
            return f"in {amount}" if ahead else f"{amount} ago"
    return "just now"  # unreachable: seconds >= 5 meets the last unit


def exact(value: datetime) -> str:
    """``2026-12-02 14:03:05.123 UTC``: the hover text of every time."""
    utc = value.astimezone(UTC)
    return f"{utc:%Y-%m-%d %H:%M:%S}.{utc.microsecond // 1000:03d} UTC"


def _millis(value: datetime) -> int:
    return int(value.timestamp() * 1000)


@dataclass(frozen=True)
class Clock:
    """The lists' times as of one moment (the fragment's rendering)."""

    now: datetime

    @classmethod
    def current(cls) -> Clock:
        return cls(datetime.now(UTC))

    def ago(self, value: datetime) -> str:
        return relative(_millis(self.now) - _millis(value))

    def run_duration(self, run: RunMeta) -> str:
        """Started to last change for a run that stopped (finished or suspended), to now
        for a running one."""
        end = self.now if run.status is RunStatus.RUNNING else run.updated_at
        return duration(_millis(end) - _millis(run.started_at))

    exact = staticmethod(exact)
    rfc3339 = staticmethod(format_rfc3339)
