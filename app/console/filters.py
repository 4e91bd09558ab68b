"""The console's list filters, from the text of its query strings to the client's types.

Each value is read by the contract's own rule in the client package (the status enums,
``times.parse_rfc3339``, ``filters.label_filters``); text that breaks it is
``InvalidArgumentError``, shown as the API would show it (after the API has accepted the
caller's token: ``fragment`` in ``rendering``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from runtime_store_client import InvalidArgumentError
from runtime_store_client.times import TimeError, parse_rfc3339

from .views import api_time

E = TypeVar("E", bound=StrEnum)


def statuses(kind: type[E], values: Sequence[str], what: str) -> list[E]:
    """The statuses named (an empty entry is no filter)."""
    wanted: list[E] = []
    for value in values:
        if not value:
            continue
        try:
            wanted.append(kind(value))
        except ValueError:
            raise InvalidArgumentError(
                f"{what} {value!r} is not one of {', '.join(kind)}"
            ) from None
    return wanted


def time(value: str, what: str) -> datetime | None:
    """A time filter from a form (``datetime-local``, taken as UTC) or RFC 3339 text;
    ``None`` for no filter."""
    if not value:
        return None
    try:
        return parse_rfc3339(api_time(value))
    except TimeError as exc:
        raise InvalidArgumentError(f"{what} {exc}") from None
