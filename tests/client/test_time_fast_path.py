"""``parse_rfc3339`` reads the canonical form (``2026-11-30T01:02:03.456Z``) in one call;
it must give exactly what the general path gives, value and zone, and the general path's
error for anything else. ``format_rfc3339`` keeps each minute's text and looks up the rest;
it must write exactly what ``isoformat`` gives (``format_rfc3339_general``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from runtime_store_client import times
from runtime_store_client.times import (
    TimeError,
    format_rfc3339,
    format_rfc3339_general,
    parse_rfc3339,
    parse_rfc3339_general,
)

EDGES = [
    "0001-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z",
    "2024-02-29T12:00:00.500Z",
    "2026-11-30T01:02:03.456Z",
    "1970-01-01T00:00:00.000Z",
    # What ``datetime.isoformat`` gives (the generated client's models send it).
    "2026-11-30T01:02:03.456000+00:00",
    "0001-01-01T00:00:00.000000+00:00",
    "9999-12-31T23:59:59.999000+00:00",
    "2026-11-30T01:02:03.456+00:00",
    "2026-11-30T01:02:03.456000Z",
]

REFUSED = [
    "0000-01-01T00:00:00.000Z",  # year 0
    "2026-02-29T00:00:00.000Z",  # not a leap year
    "2026-13-01T00:00:00.000Z",
    "2026-01-32T00:00:00.000Z",
    "2026-01-01T24:00:00.000Z",
    "2026-01-01T23:60:00.000Z",
    "2026-01-01T23:59:60.000Z",  # a leap second
    "2026-01-01T00:00:00.000z",  # lower-case z: the general path
    "2026-01-01t00:00:00.000Z",
    "2026-01-01T00:00:00.0001Z",
    "2026-01-01T00:00:00Z",
    "\u0662\u0660\u0662\u0666-01-01T00:00:00.000Z",  # non-ASCII digits
    "2026-01-01T00:00:00.000Z ",
    "2026-01-01T00:00:00.000001+00:00",  # sub-millisecond
    "2026-01-01T00:00:00.000100+00:00",
    "2026-01-01T00:00:00.000000-00:00",  # not the fast path's offset
    "2026-01-01T00:00:00.000000+01:00",
    "0001-01-01T00:00:00.000000+01:00",  # before year 1 in UTC
    "2026-01-01T00:00:00.0000+00:00",
]


def _outcome(parse: object, text: str) -> object:
    assert callable(parse)
    try:
        value = parse(text)
    except TimeError as exc:
        return ("error", str(exc))
    return ("value", value, value.tzinfo, value.utcoffset())


@pytest.mark.parametrize("text", EDGES + REFUSED)
def test_the_fast_path_agrees_with_the_general_path(text: str) -> None:
    assert _outcome(parse_rfc3339, text) == _outcome(parse_rfc3339_general, text)


def test_the_fast_path_agrees_on_random_canonical_times() -> None:
    rng = random.Random(18)
    for _ in range(20_000):
        text = (
            f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 31):02d}T"
            f"{rng.randint(0, 24):02d}:{rng.randint(0, 60):02d}:{rng.randint(0, 60):02d}."
            f"{rng.randint(0, 999):03d}{rng.choice(['', '000', '001', '500'])}"
            f"{rng.choice(['Z', '+00:00', '+00:30', '-00:00'])}"
        )
        assert _outcome(parse_rfc3339, text) == _outcome(parse_rfc3339_general, text), text


def test_a_canonical_time_is_read_in_utc() -> None:
    assert parse_rfc3339("2026-11-30T01:02:03.456Z").tzinfo is UTC


FORMAT_EDGES = [
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),  # cut, not rounded
    datetime(2024, 2, 29, 12, 0, 0, 500_000, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
    datetime(2026, 11, 30, 1, 2, 3, 456_000, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2026, 1, 1, 0, 0, 0, 999, tzinfo=timezone(timedelta(hours=-23, minutes=-59))),
    datetime(1, 1, 1, 23, 0, tzinfo=timezone(timedelta(hours=1))),  # year 1 in UTC too
]


@pytest.mark.parametrize("value", FORMAT_EDGES, ids=str)
def test_the_time_written_is_what_isoformat_writes(value: datetime) -> None:
    assert format_rfc3339(value) == format_rfc3339_general(value)
    assert format_rfc3339(value) == format_rfc3339(value)  # again, from the kept minute


def test_the_time_written_agrees_on_random_times() -> None:
    rng = random.Random(32)
    low, high = datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC)
    span = int((high - low).total_seconds())
    for _ in range(20_000):
        zone = rng.choice([UTC, timezone(timedelta(minutes=rng.randint(-1439, 1439)))])
        value = (
            low + timedelta(seconds=rng.randint(0, span), microseconds=rng.randint(0, 999_999))
        ).astimezone(zone)
        assert format_rfc3339(value) == format_rfc3339_general(value), repr(value)


def test_the_kept_minutes_stay_bounded() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for minute in range(3 * times._MINUTES_KEPT):
        format_rfc3339(start + timedelta(minutes=minute))
        assert len(times._MINUTES) <= times._MINUTES_KEPT
