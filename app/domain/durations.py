"""Durations as operators write them: ``30d``, ``7d``, ``12h``, ``15m``, ``90s``.

Retention ages and the sweep interval are given this way (settings and CLI options); a
plain number of seconds is accepted too.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Final

_DURATION: Final = re.compile(r"\s*(\d+)\s*([smhd]?)\s*")
_UNITS: Final = {"": "seconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_duration(text: str) -> timedelta:
    """``<n>`` followed by ``s``, ``m``, ``h`` or ``d`` (seconds without a unit); positive."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration such as 30d, 12h, 15m or 90s")
    value = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    if value <= timedelta(0):
        raise ValueError(f"{text!r} must be longer than zero")
    return value


def format_duration(value: timedelta) -> str:
    """The largest whole unit that states ``value`` exactly (``30d``, ``36h``, ``90s``)."""
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
