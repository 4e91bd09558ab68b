"""Transcript prefix reads (CONTRACT.md 12.3): the positions a read names and its page's cut.

A read names a prefix of the run's log (``through``: the ID of any committed record of
the run) and a place in it (``after``: "" or the ID of a transcript record at or before
``through``). Both are record IDs, decimal without a sign or leading zero and at most
``MAX_RECORD_ID``; anything else, and a ``limit`` below 1, is
``invalid_transcript_position``. Whether the IDs name such
records is the store's question (it needs the run); the syntax and the cut are decided
here. A page holds at most ``PAGE_RECORDS`` records and ``PAGE_BYTES`` payload bytes
(inclusive); a record that alone passes ``PAGE_BYTES`` can never be on a page:
``payload_too_large``. Both bounds are the contract's, so a page is the same on every
service whatever its settings: the same ``(through, after, limit)``, the same page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from runtime_store_client import InvalidTranscriptPositionError, PayloadTooLargeError

from .cursors import MAX_RECORD_ID
from .text import check_unicode

#: Most records on one page; a larger ``limit`` is served as this.
PAGE_RECORDS: Final = 512
#: Most payload bytes on one page, inclusive.
PAGE_BYTES: Final = 1024 * 1024

#: A record ID's syntax: 1, 2, ... (past 19 digits it cannot be one; ``MAX_RECORD_ID`` bounds it).
_RECORD_ID: Final = re.compile(r"[1-9][0-9]{0,18}")


@dataclass(frozen=True, slots=True)
class TranscriptWindow:
    """A read's positions as record IDs (``after`` 0: from the start) and its page size."""

    through: int
    after: int
    size: int


def _record_id(value: object, what: str) -> int:
    if not isinstance(value, str):
        raise InvalidTranscriptPositionError(f"{what} must be a record ID (a string)")
    check_unicode(value, what)
    # 19 digits reach past a BIGINT: such a number names no record, and no driver may see it
    # (SQLite's overflows, PostgreSQL's answers out of range).
    if not _RECORD_ID.fullmatch(value) or int(value) > MAX_RECORD_ID:
        raise InvalidTranscriptPositionError(f"{what} {value!r} is not a record ID")
    return int(value)


def transcript_window(through: object, after: object, limit: object) -> TranscriptWindow:
    """The positions of a read, checked without the run (``invalid_transcript_position``;
    a lone surrogate is ``invalid_argument`` as everywhere, 2.6)."""
    end = _record_id(through, "through")
    start = 0 if after == "" else _record_id(after, "after")
    if start > end:
        raise InvalidTranscriptPositionError(f"after {after!r} is past through {through!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidTranscriptPositionError(f"limit must be an integer of at least 1: {limit!r}")
    return TranscriptWindow(through=end, after=start, size=min(limit, PAGE_RECORDS))


def transcript_cut(sizes: Sequence[int], size: int, run_id: str) -> int:
    """How many records, of payload ``sizes`` in order, the page keeps: at most ``size``
    and at most ``PAGE_BYTES`` bytes in all; it ends before the record that would pass
    them. ``payload_too_large`` when the first alone passes them (no page can hold it)."""
    total = 0
    for kept, payload_bytes in enumerate(sizes[:size]):
        total += payload_bytes
        if total > PAGE_BYTES:
            if kept == 0:
                raise PayloadTooLargeError(
                    f"a transcript record of run {run_id!r} holds {payload_bytes} payload "
                    f"bytes, more than a page's {PAGE_BYTES}",
                    run_id=run_id,
                )
            return kept
    return min(len(sizes), size)
