"""Contract times, the one definition the service and the client share (CONTRACT.md 1.4, 8).

A contract time is timezone-aware with millisecond precision: a finer part is an error,
never truncated. On the wire it is RFC 3339: read with any offset, written as UTC with
exactly three fraction digits and ``Z`` (``2026-11-30T01:02:03.456Z``). The store keeps it
as epoch milliseconds.

Failures raise :class:`TimeError`, a ``ValueError`` whose message names the broken rule
but not the value's field (``"has sub-millisecond precision"``): each caller prefixes the
field's name and raises its own error type (``InvalidArgumentError`` before a request,
``ValueError`` in a pydantic validator).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Go's zero ``time.Time``: what an unset timestamp looks like on the wire.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)
#: A contract time as the wire writes it.
EXAMPLE = "2026-11-30T01:02:03.456Z"

#: RFC 3339's ``date-time`` with ASCII digits: a year from 0001, each field in its range (a
#: day past its month's end is left to the date check), any fraction (digits past the
#: milliseconds must be zeros, checked after), ``Z`` or an offset of at most 23:59.
#: ``TIME_PATTERN`` is the same rule as one expression (the API document's ``pattern``).
_RFC3339 = re.compile(
    r"(?P<date>(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
    r"-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))"
    r"[Tt](?P<h>[01][0-9]|2[0-3]):(?P<m>[0-5][0-9]):(?P<s>[0-5][0-9])"
    r"(?:\.(?P<frac>[0-9]+))?(?P<tz>[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)

#: The times ``parse_rfc3339`` reads, as a JSON Schema ``pattern`` (ECMA-262, anchored): the
#: general rule above with the sub-millisecond rule folded in (at most three fraction
#: digits, then only zeros). What it cannot say: a day past its month's end (02-30) and an
#: instant that leaves the years 0001-9999 in UTC are refused all the same.
TIME_PATTERN: Final = (
    r"^(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
    r"-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,3}0*)?"
    r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)

#: The form the API writes (and the clients send): UTC, three fraction digits, ``Z``.
#: ASCII digits only, so ``datetime.fromisoformat`` reads it exactly as the general path.
#: The canonical form, and the form ``datetime.isoformat`` gives a UTC time with whole
#: milliseconds (what the generated client's models send).
_CANONICAL = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}(?:000)?(?:Z|\+00:00)"
)


class TimeError(ValueError):
    """A time that breaks a contract rule; the message is the rule, without the field."""


def check_time(value: object) -> datetime:
    """``value`` itself if it is a contract time: an aware ``datetime``, whole milliseconds."""
    if not isinstance(value, datetime):
        raise TimeError("must be a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise TimeError("must be timezone-aware (UTC)")
    if value.microsecond % 1000:
        raise TimeError("has sub-millisecond precision")
    return value


def to_utc(value: datetime) -> datetime:
    """The same instant in UTC; an instant outside years 1-9999 there is an error."""
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise TimeError("is outside the years 0001-9999 in UTC") from None


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 time with an offset and at most millisecond precision, in UTC.

    Zeros beyond the milliseconds are accepted (they change nothing); any other finer
    digit is an error.
    """
    if _CANONICAL.fullmatch(text):
        # The canonical and isoformat forms in one call (0.3 instead of 1.8 µs: a batch of
        # 1,000 records carries 1,000 of them); an impossible date goes on to the general
        # path's error.
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            pass
    return parse_rfc3339_general(text)


def parse_rfc3339_general(text: str) -> datetime:
    """``parse_rfc3339`` without its fast path for the canonical form (the reference the
    fast path is tested against)."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise TimeError(f"must be an RFC 3339 string such as {EXAMPLE}")
    fraction = match["frac"] or ""
    if fraction[3:].strip("0"):
        raise TimeError("has sub-millisecond precision")
    tz = match["tz"].upper()
    if tz == "Z":
        zone = UTC
    else:
        sign = -1 if tz[0] == "-" else 1
        zone = timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        parsed = datetime.fromisoformat(
            f"{match['date']}T{match['h']}:{match['m']}:{match['s']}"
        ).replace(microsecond=int(fraction[:3].ljust(3, "0")) * 1000, tzinfo=zone)
    except ValueError as exc:
        raise TimeError(f"is not a valid date and time: {exc}") from None
    return to_utc(parsed)


def format_rfc3339_general(value: datetime) -> str:
    """``format_rfc3339`` as ``isoformat`` writes it: the definition the fast path is
    tested against. Milliseconds are cut, not rounded, and the year is four digits; the
    UTC offset it writes becomes ``Z``."""
    utc = value if value.tzinfo is UTC else value.astimezone(UTC)
    return utc.isoformat(timespec="milliseconds")[:-6] + "Z"


#: ``"YYYY-MM-DDTHH:MM:"`` of the minutes formatted lately, by the minute's fields; a
#: page's records mostly share a few minutes. Emptied when full, so it stays small.
_MINUTES: dict[tuple[int, int, int, int, int], str] = {}
_MINUTES_KEPT: Final = 1024
_SECONDS: Final = tuple(f"{second:02d}" for second in range(60))
_MILLISECONDS: Final = tuple(f".{milli:03d}Z" for milli in range(1000))


def format_rfc3339(value: datetime) -> str:
    """UTC, exactly three fraction digits, ``Z`` suffix (``format_rfc3339_general``).

    A page renders a time per record, and ``isoformat`` of an aware time costs four times
    what this does: the minute's text is kept, the seconds and milliseconds are looked up.
    """
    utc = value if value.tzinfo is UTC else value.astimezone(UTC)
    key = (utc.year, utc.month, utc.day, utc.hour, utc.minute)
    minute = _MINUTES.get(key)
    if minute is None:
        if len(_MINUTES) >= _MINUTES_KEPT:
            _MINUTES.clear()
        minute = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        _MINUTES[key] = minute
    return minute + _SECONDS[utc.second] + _MILLISECONDS[utc.microsecond // 1000]


def utc_now() -> datetime:
    """The current time as a contract time: UTC, cut to whole milliseconds
    (``datetime.now(UTC)`` has microseconds, which every store refuses)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)


def to_epoch_millis(value: datetime) -> int:
    """Epoch milliseconds of an aware time; a sub-millisecond part is dropped, so check
    contract input with :func:`check_time` first (the store clock is cut on purpose)."""
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_MILLISECOND = timedelta(milliseconds=1)


def from_epoch_millis(ms: int) -> datetime:
    """The UTC ``datetime`` of epoch milliseconds."""
    # A product of an exact ``timedelta`` is exact, and a third of the cost of building
    # one from a keyword argument (a page converts a time per record).
    return EPOCH + _MILLISECOND * ms
