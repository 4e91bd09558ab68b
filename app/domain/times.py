"""Contract times in storage form (epoch ms), on the rules of ``runtime_store_client.times``."""

from __future__ import annotations

from datetime import UTC, datetime

from runtime_store_client import InvalidArgumentError
from runtime_store_client.times import (
    ZERO_TIME,
    TimeError,
    check_time,
    from_epoch_millis,
    to_epoch_millis,
)

__all__ = ["ZERO_TIME", "from_millis", "now_millis", "to_millis"]


def to_millis(value: datetime | None, what: str) -> int:
    """Epoch milliseconds of a required time; sub-millisecond parts are errors, never cut."""
    if value is None:
        raise InvalidArgumentError(f"{what} is required")
    try:
        check_time(value)
    except TimeError as exc:
        raise InvalidArgumentError(f"{what} {exc}") from None
    # Go's zero time is how an unset timestamp arrives: required means set.
    if value == ZERO_TIME:
        raise InvalidArgumentError(f"{what} is required (zero time)")
    return to_epoch_millis(value)


#: The UTC ``datetime`` of epoch milliseconds.
from_millis = from_epoch_millis


def now_millis() -> int:
    """The store clock, truncated to the millisecond the contract stores."""
    return to_epoch_millis(datetime.now(UTC))
