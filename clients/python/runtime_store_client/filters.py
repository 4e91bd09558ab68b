"""List filters as the contract spells them (CONTRACT.md 11.1), for every side."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidArgumentError


def label_filters(labels: Iterable[str]) -> dict[str, str] | None:
    """``key:value`` label filters as a map: the key is the text before the first ``:``
    (the value may hold more colons); an empty key or no ``:`` is ``invalid_argument``.
    ``None`` when two values are asked for one key: no run can match."""
    wanted: dict[str, str] = {}
    for label in labels:
        key, colon, value = label.partition(":")
        if not colon or not key:
            raise InvalidArgumentError(
                f"label filter {label!r} must be key:value with a non-empty key"
            )
        if wanted.setdefault(key, value) != value:
            return None
    return wanted
