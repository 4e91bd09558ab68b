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
