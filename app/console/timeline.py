"""Record timelines: a run's records in either order or its latest, a session's records in
commit order, each filtered by record type (``/console/session/timeline`` is here).

The records API has no type filter and no reverse order (CONTRACT.md 4), and the console
adds none: it reads the API's own pages. Paging stays honest:

- A filtered page reads up to ``SCAN_PAGES`` API pages and keeps the matching records;
  its "next" link continues from the last record *read*, so a page may hold fewer matches
  (even none) and says how many records it read. Nothing is skipped or shown twice.
- A run's record IDs are ``1 … n`` and a record ID is a valid cursor (1.1, 4): the run's
  last record is found in about 2·log2(n) reads of one record (``last_record_id``), and a
  window of IDs is read forward from the ID before it. So "newest first" and "latest"
  read windows backward from ``n`` without reading the whole log.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import Record, RecordPage

from .api import Api
from .rendering import RECORDS_PAGE_SIZE, QueryList, fragment, link, page
from .transcript import last_record_id
from .views import RecordView, record_types

router = APIRouter()

#: API pages a filtered timeline page reads at most (of ``RECORDS_PAGE_SIZE`` each).
SCAN_PAGES: Final = 10

Reader = Callable[[str, int], Awaitable[RecordPage]]


def wanted_types(values: Sequence[str]) -> frozenset[str]:
    """The record types asked for (empty entries dropped; none: every type)."""
    return frozenset(value for value in values if value)


@dataclass
class Scan:
    """Records kept by a scan, and where it stopped."""

    records: list[Record]
    #: Where the next page reads from: a cursor forward, a record ID backward ("": none).
    next: str
    #: Records read (kept or not).
    read: int
    #: Forward: the cursor after the last record read (where a live tail starts).
    last: str = ""


async def scan_forward(read: Reader, cursor: str, types: frozenset[str]) -> Scan:
    """Records from ``cursor`` on: one API page, or with a type filter up to
    ``SCAN_PAGES`` until a page of matches is kept."""
    kept: list[Record] = []
    count = 0
    last = cursor
    for _ in range(SCAN_PAGES if types else 1):
        body = await read(cursor, RECORDS_PAGE_SIZE)
        count += len(body.records)
        kept += [record for record in body.records if not types or record.type in types]
        if body.records:
            last = body.records[-1].id
        cursor = body.next_cursor
        if not cursor or len(kept) >= RECORDS_PAGE_SIZE:
            break
    return Scan(kept, cursor, count, last)


async def read_ids(api: Api, run_id: str, low: int, high: int) -> list[Record]:
    """The run's records with IDs ``low`` to ``high``, oldest first (a page may stop early
    at the API's byte budget: read on until ``high``)."""
    found: list[Record] = []
    cursor = str(low - 1) if low > 1 else ""
    while True:
        body = await api.store.list_run_records(run_id, cursor, high - low + 1 - len(found))
        found += [record for record in body.records if int(record.id) <= high]
        if not body.records or int(body.records[-1].id) >= high or not body.next_cursor:
            return found
        cursor = body.next_cursor


async def scan_backward(
    api: Api, run_id: str, before: int, types: frozenset[str]
) -> tuple[list[Record], int]:
    """The run's records with IDs below ``before``, newest first: one window of a page, or
    with a type filter up to ``SCAN_PAGES`` windows until a page of matches is kept. Also
    the ID the next (older) page reads below: 0 when none is left."""
    kept: list[Record] = []
    high = before - 1
    for _ in range(SCAN_PAGES if types else 1):
        if high < 1:
            break
        low = max(1, high - RECORDS_PAGE_SIZE + 1)
        window = await read_ids(api, run_id, low, high)
        kept += [record for record in reversed(window) if not types or record.type in types]
        high = low - 1
        if len(kept) >= RECORDS_PAGE_SIZE:
            break
    return kept, high + 1 if high >= 1 else 0


async def run_timeline(
    api: Api,
    run_id: str,
    *,
    cursor: str,
    order: str,
    before: str,
    latest: bool,
    types: frozenset[str],
) -> dict[str, Any]:
    """What the records fragment shows of one run: its records in the asked order, the
    pager's positions, and whether the page shows the run's latest records (then its
    live tail starts at ``tail_cursor``)."""
    newest_first = order == "desc"
    if newest_first or latest:
        top = int(before) if before.isdecimal() and int(before) > 0 else 0
        last = int(await last_record_id(api, run_id))
        records, older = await scan_backward(api, run_id, top or last + 1, types)
        return {
            "records": records if newest_first else records[::-1],
            "newest_first": newest_first,
            "older": str(older) if older else "",
            "at_latest": not top,
            "tail_cursor": str(last),
            "next_cursor": "",
            "read": (top or last + 1) - max(older, 1),
            "earlier_cursor": str(max(0, older - 1 - RECORDS_PAGE_SIZE))
            if older and not newest_first and not types
            else "",
        }

    async def read(position: str, limit: int) -> RecordPage:
        return await api.store.list_run_records(run_id, position, limit)

    scan = await scan_forward(read, cursor, types)
    return {
        "records": scan.records,
        "newest_first": False,
        "older": "",
        "at_latest": not scan.next,
        "tail_cursor": scan.last,
        "next_cursor": scan.next,
        "read": scan.read,
        "earlier_cursor": "",
    }


# --- the session timeline --------------------------------------------------------------


@router.get("/session/timeline")
async def session_timeline_page(
    session_id: str = "",
    cursor: str = "",
    type: QueryList = [],  # noqa: B006 - the query's name; FastAPI copies defaults
) -> HTMLResponse:
    """Every record of every run of a session, in commit order, with a type filter."""
    return page(
        "session_timeline.html",
        f"Records of session {session_id}",
        "sessions",
        session_id=session_id,
        data=link(
            "/console/fragments/session/timeline",
            {"session_id": session_id, "cursor": cursor, "type": type},
        ),
    )


@router.get("/fragments/session/timeline")
async def session_timeline_fragment(
    request: Request,
    session_id: str = "",
    cursor: str = "",
    type: QueryList = [],  # noqa: B006
) -> HTMLResponse:
    """A page of ``GET /v1/sessions/{id}/records`` (commit order), filtered by type."""
    types = wanted_types(type)

    async def load(api: Api) -> dict[str, Any]:
        async def read(position: str, limit: int) -> RecordPage:
            return await api.store.list_session_run_records(session_id, position, limit)

        scan = await scan_forward(read, cursor, types)
        here: dict[str, str | list[str]] = {"session_id": session_id, "type": sorted(types)}
        records = [RecordView.of(record) for record in scan.records]
        return {
            "session_id": session_id,
            "records": records,
            "types": sorted(types),
            "known_types": record_types(types, records),
            "read": scan.read,
            "filtered": bool(types),
            "next": link("/console/session/timeline", {**here, "cursor": scan.next})
            if scan.next
            else "",
            "first": link("/console/session/timeline", here) if cursor else "",
        }

    return await fragment(request, "fragments/session_timeline.html", load)
