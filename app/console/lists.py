"""What the console's lists show above and beside their rows: the status counts as
filter chips (``GET /v1/session-counts``, ``/v1/run-counts``) and each run's record count
(``GET /v1/record-counts``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from runtime_store_client import StatusCounts


@dataclass(frozen=True)
class Chip:
    """One status with its count, a link to the list filtered by it."""

    status: str  # "" for every status
    count: str  # "10000+" when the count stopped at its limit
    href: str
    current: bool


def shown(count: int, capped: bool) -> str:
    return f"{count}+" if capped else str(count)


def status_chips(
    counts: StatusCounts,
    statuses: Sequence[str],
    selected: Iterable[str],
    href: Callable[[str], str],
) -> list[Chip]:
    """An "all" chip, then one per status in ``statuses`` order; ``href(status)`` is the
    list filtered by it ("" for all), with the page's other filters kept."""
    chosen = {status for status in selected if status}
    total = sum(counts.counts.get(status, 0) for status in statuses)
    any_capped = any(counts.capped(status) for status in statuses)
    chips = [Chip("", shown(total, any_capped), href(""), not chosen)]
    for status in statuses:
        count = counts.counts.get(status, 0)
        chips.append(
            Chip(status, shown(count, counts.capped(status)), href(status), status in chosen)
        )
    return chips
