"""Contract times: timezone-aware UTC with millisecond precision, stored as epoch ms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from runtime_store_client import InvalidArgumentError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Go's zero ``time.Time``: what an unset timestamp looks like on the wire.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def to_millis(value: datetime | None, what: str) -> int:
    """Epoch milliseconds of a required time; sub-millisecond parts are errors, never cut."""
    if value is None:
        raise InvalidArgumentError(f"{what} is required")
    if not isinstance(value, datetime):
        raise InvalidArgumentError(f"{what} must be a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgumentError(f"{what} must be timezone-aware (UTC)")
    if value.microsecond % 1000:
        raise InvalidArgumentError(f"{what} has sub-millisecond precision")
    if value == ZERO_TIME:
        raise InvalidArgumentError(f"{what} is required (zero time)")
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def from_millis(ms: int) -> datetime:
    """The UTC ``datetime`` of epoch milliseconds."""
    return _EPOCH + timedelta(milliseconds=ms)


def now_millis() -> int:
    """The store clock, truncated to the millisecond the contract stores."""
    now = datetime.now(UTC)
    delta = now - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
