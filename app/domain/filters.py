"""List filters shared by every list that takes them (CONTRACT.md 3.1, 11.1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime_store_client import InvalidArgumentError, RunStatus, SessionStatus


def statuses(values: Sequence[Any] | str, kind: type[RunStatus] | type[SessionStatus]) -> list[str]:
    """The distinct statuses asked for, sorted (a cursor binds them in this form); one that
    is not a ``kind`` (a run status on sessions, say) is ``invalid_argument``."""
    if isinstance(values, str):
        values = [values]
    try:
        return sorted({kind(value).value for value in values})
    except ValueError:
        raise InvalidArgumentError(
            f"unknown {kind.__name__} in {list(values)!r}; one of "
            f"{sorted(status.value for status in kind)}"
        ) from None


# --- counts for the operator's lists (issue 33) ------------------------------------------

#: The largest status count one call asks for: a count reads at most this many index
#: entries per status, so its cost is bounded whatever the number of rows.
MAX_COUNT_LIMIT = 10_000
#: The most IDs one record-count call names, runs and sessions together.
MAX_RECORD_COUNT_IDS = 100


def count_limit(limit: object) -> int:
    """The bound of a status count: an integer from 1 to ``MAX_COUNT_LIMIT``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_COUNT_LIMIT:
        raise InvalidArgumentError(f"limit must be an integer from 1 to {MAX_COUNT_LIMIT}")
    return limit
