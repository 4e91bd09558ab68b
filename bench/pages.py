"""Page latency against list size: the first, middle and last page of 100 records.

For each size, one session holding one run of ``size`` bulk-loaded 1 KB records (plus its
``run_started``) is written with direct SQL. Pages are then read one at a time through
the HTTP API (and, on PostgreSQL, with the psycopg ceiling) at three positions: the start
(empty cursor), the middle and the last page. Cursors for the middle and the end are built
the way the store builds them, so no page before them has to be read first.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.cursors import SESSION_RECORDS, CursorCodec
from app.storage.access.service_keys import cursor_codec
from tests.contract.builders import at

from . import bulk
from .config import PAGE_SIZE
from .report import Row
from .workloads import PAYLOAD, Database, new_prefix, start_in_new_session, to_ms

LISTS = ("list_run_records", "list_session_run_records")
#: Rows per bulk transaction, so a 10M load never builds one giant transaction.
CHUNK = 1_000_000
WARM_READS = 2


def scale_label(count: int) -> str:
    for divisor, suffix in ((1_000_000, "M"), (1_000, "k")):
        if count >= divisor and count % divisor == 0:
            return f"{count // divisor}{suffix}"
    return str(count)


def page_operation(list_name: str, size: int, position: str) -> str:
    return f"page {list_name} @{scale_label(size)} {position}"


@dataclass(frozen=True)
class PageSet:
    """A session with one run of ``size`` bulk records after its ``run_started``."""

    size: int
    run_id: str
    session_id: str
    codec: CursorCodec

    @property
    def total(self) -> int:
        return self.size + 1

    def cursors(self, list_name: str) -> list[tuple[str, str]]:
        """(position, cursor) of the first, middle and last page of ``list_name``."""
        middle, last = self.total // 2, max(0, self.total - PAGE_SIZE)
        if list_name == "list_run_records":
            return [("start", ""), ("middle", str(middle)), ("end", str(last) if last else "")]
        return [
            ("start", ""),
            ("middle", self.session_cursor(middle)),
            ("end", self.session_cursor(last)),
        ]

    def session_cursor(self, position: int) -> str:
        """The cursor a page ending at session position ``position`` hands out."""
        if not position:
            return ""
        return self.codec.seal(SESSION_RECORDS, self.session_id, [position])


def load_page_sets(db: Database, sizes: Sequence[int]) -> list[PageSet]:
    """Bulk-load one session and run per size (chunks of ``CHUNK`` rows per transaction)."""
    sets: list[PageSet] = []
    for size in sizes:
        prefix = new_prefix(f"pages{scale_label(size)}")
        run = start_in_new_session(db, f"{prefix}-session", f"{prefix}-run")
        for done in range(0, size, CHUNK):
            bulk.add_records(
                db.engine, run.run_id, min(CHUNK, size - done), PAYLOAD, timestamp_ms=to_ms(at(10))
            )
        sets.append(PageSet(size, run.run_id, run.session_id, cursor_codec(db.engine)))
    bulk.analyze(db.engine)
    return sets


def measure_pages(backend: str, store: Any, sets: Sequence[PageSet], repeats: int) -> list[Row]:
    """Rows ``page <list> @<size> <position>`` for one backend, one reader at a time.

    ``store`` is anything with the two list methods (``HttpStore``, ``CeilingStore``).
    The reads take turns (every page once per round) so drift hits every size alike.
    """
    reads: list[tuple[str, Callable[[], Any]]] = []
    for list_name in LISTS:
        for page_set in sets:
            key = page_set.run_id if list_name == "list_run_records" else page_set.session_id
            for position, cursor in page_set.cursors(list_name):
                page = functools.partial(getattr(store, list_name), key, cursor, PAGE_SIZE)
                reads.append((page_operation(list_name, page_set.size, position), page))
    for _, warm in reads:
        for _ in range(WARM_READS):
            warm()
    latencies: dict[str, list[float]] = {operation: [] for operation, _ in reads}
    for _ in range(repeats):
        for operation, read in reads:
            started = time.perf_counter()
            read()
            latencies[operation].append(time.perf_counter() - started)
    return [
        Row.of(operation, backend, 1, latencies[operation], sum(latencies[operation]))
        for operation, _ in reads
    ]


def growth(rows: Sequence[Row], backend: str, list_name: str, small: int, large: int) -> float:
    """Largest p50 ratio, over the three positions, of pages at ``large`` to ``small``."""
    by_operation = {row.operation: row for row in rows if row.backend == backend}
    worst = 0.0
    for position in ("start", "middle", "end"):
        low = by_operation.get(page_operation(list_name, small, position))
        high = by_operation.get(page_operation(list_name, large, position))
        if low is None or high is None or low.p50_ms <= 0:
            return float("nan")
        worst = max(worst, high.p50_ms / low.p50_ms)
    return worst
