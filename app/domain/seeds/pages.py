"""Pages of seed records (15.4): the limit, where a page starts, where it is cut."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptPositionError,
)

from .encoding import MAX_PAGE_BYTES, MAX_PAGE_RECORDS, parse_position, position_text

# --- pages ------------------------------------------------------------------------------


def check_limit(limit: object) -> int:
    """A page's ``limit`` (15.4): an integer >= 1, served as at most 512."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidTranscriptPositionError("limit must be an integer of at least 1")
    return min(limit, MAX_PAGE_RECORDS)


def page_after(after: object, first: int, last: int, run_id: str) -> int:
    """The position a page starts after: "" is the range's start (``first - 1``), else an
    exact record ID of the range ``first``..``last``."""
    if not isinstance(after, str):
        raise InvalidArgumentError("after must be a string")
    if after == "":
        return first - 1
    position = parse_position(after)
    if position is None or not first <= position <= last:
        raise InvalidTranscriptPositionError(
            f"after {after!r} is not a record of the listed range", run_id=run_id
        )
    return position


_PAGE_FRAME: Final = len(b'{"records":[],"next_cursor":""}')


def page_length(sizes: Sequence[int], positions: Sequence[int], limit: int) -> int:
    """How many records of ``sizes`` (their wire sizes, in order, at ``positions``) the
    page holds: the longest run that keeps the bound of 15.1, measured with
    ``next_cursor`` set to the last record's ID; at least one."""
    total = _PAGE_FRAME
    count = 0
    for size, position in zip(sizes[:limit], positions, strict=False):
        grown = total + size + (1 if count else 0)
        if count and grown + len(position_text(position)) > MAX_PAGE_BYTES:
            break
        total = grown
        count += 1
    return count
