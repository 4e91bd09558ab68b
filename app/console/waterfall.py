"""A run's records as a waterfall (``/console/fragments/run/timeline``): per record its time
since the run started, the gap since the record before it, and the durations of what a
pair of records starts and ends, drawn as bars with no script and no stylesheet of its own
(inline SVG: the page's policy allows no inline style).

Pairs: a ``tool_call_scheduled`` record and the ``tool_result_received`` record naming the
same runtime tool-call ID (``ToolCallID`` or ``tool_call_id`` in their payloads; never
the model's tool-use ID, CONTRACT.md 10.2), and the run's own ``run_started`` and its
``run_completed`` or ``run_suspended``. Records of one ``turn_id`` make a turn, whose
duration runs from its first record to its last. Everything is read from the page of
records shown (``RECORDS_PAGE_SIZE``, paged by ``timeline_cursor``): a call whose result
is on another page says so.

A gap is *long* when it is at least ``LONG_GAP_MS`` and at least a tenth of the time the
page spans: the waits an operator looks for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import LifecycleRecordType, Record

from .api import Api
from .rendering import RECORDS_PAGE_SIZE, fragment
from .run_state import RunState, RunStateDep
from .times import duration
from .views import parse_payload, showable

router = APIRouter()

LONG_GAP_MS: Final = 5_000
CALL_TYPES: Final = frozenset({"tool_call_scheduled"})
RESULT_TYPES: Final = frozenset({"tool_result_received"})
END_TYPES: Final = frozenset({LifecycleRecordType.RUN_COMPLETED, LifecycleRecordType.RUN_SUSPENDED})
_CALL_ID_KEYS: Final = ("ToolCallID", "tool_call_id")
_NAME_KEYS: Final = ("ToolName", "tool_name", "name")


def elapsed(milliseconds: int) -> str:
    """``850 ms``, ``1.25 s``, ``12.5 s``, then as ``times.duration`` (``3 min 5 s``)."""
    if milliseconds < 1000:
        return f"{max(milliseconds, 0)} ms"
    if milliseconds < 10_000:
        return f"{milliseconds / 1000:.2f} s"
    if milliseconds < 60_000:
        return f"{milliseconds / 1000:.1f} s"
    return duration(milliseconds)


def _millis(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _percent(part: int, whole: int) -> str:
    return f"{min(100.0, max(0.0, 100.0 * part / whole)) if whole > 0 else 0.0:.2f}"


@dataclass
class Pair:
    """One end of a paired step: what it is, the other end, and how long it took."""

    kind: str  # "tool call" or "run"
    role: str  # "start" or "end"
    name: str
    other_id: str = ""
    duration_ms: int | None = None

    @property
    def duration(self) -> str:
        return elapsed(self.duration_ms) if self.duration_ms is not None else ""


@dataclass
class Row:
    """One record of the waterfall."""

    id: str
    type: str
    event_key: str
    turn_id: str
    at_ms: int
    gap_ms: int | None
    long_gap: bool = False
    pair: Pair | None = None
    #: The bar: where the record sits and how wide its step is, in percent of the span.
    x: str = "0"
    width: str = "0"

    @property
    def at(self) -> str:
        return elapsed(self.at_ms)

    @property
    def gap(self) -> str:
        return "" if self.gap_ms is None else elapsed(self.gap_ms)


@dataclass
class Turn:
    turn_id: str
    first_id: str
    records: int
    start_ms: int
    end_ms: int

    @property
    def duration(self) -> str:
        return elapsed(self.end_ms - self.start_ms)


@dataclass
class Waterfall:
    rows: list[Row]
    span_ms: int
    turns: list[Turn] = field(default_factory=list)
    long_gaps: int = 0

    @property
    def span(self) -> str:
        return elapsed(self.span_ms)


def _field(record: Record, keys: tuple[str, ...]) -> str:
    """The first of ``keys`` a JSON object payload holds as a non-empty string."""
    try:
        payload = parse_payload(record.payload.decode())
    except (ValueError, RecursionError):
        return ""
    if not isinstance(payload, dict):
        return ""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return showable(value)
    return ""


def waterfall(started_at: datetime, records: list[Record], previous: datetime | None) -> Waterfall:
    """The rows of ``records`` (oldest first) of a run started at ``started_at``;
    ``previous`` is the time of the record before the first (none: the run's first)."""
    start = _millis(started_at)
    rows: list[Row] = []
    before = _millis(previous) if previous is not None else None
    for record in records:
        at = _millis(record.timestamp)
        rows.append(
            Row(
                id=record.id,
                type=record.type,
                event_key=showable(record.event_key),
                turn_id=showable(record.turn_id),
                at_ms=at - start,
                gap_ms=None if before is None else at - before,
            )
        )
        before = at
    span = max([row.at_ms for row in rows] + [1])
    shown = Waterfall(rows, span)
    _pair(shown, records)
    _turns(shown)
    for row in rows:
        row.long_gap = row.gap_ms is not None and row.gap_ms >= max(LONG_GAP_MS, span / 10)
        shown.long_gaps += row.long_gap
        row.x = _percent(row.at_ms, span)
        if row.pair is not None and row.pair.role == "start" and row.pair.duration_ms is not None:
            row.width = _percent(row.pair.duration_ms, span)
    return shown


def _pair(shown: Waterfall, records: list[Record]) -> None:
    """Tool calls with their results (by the runtime's tool-call ID), and the run's start
    with its end, when both are among ``records``."""
    calls: dict[str, Row] = {}
    start: Row | None = None
    for row, record in zip(shown.rows, records, strict=True):
        if row.type == LifecycleRecordType.RUN_STARTED:
            start = row
            row.pair = Pair("run", "start", "run")
        elif row.type in END_TYPES:
            row.pair = Pair("run", "end", "run")
            if start is not None:
                _join(start, row)
        elif row.type in CALL_TYPES or row.type in RESULT_TYPES:
            call_id = _field(record, _CALL_ID_KEYS)
            if not call_id:
                continue
            name = _field(record, _NAME_KEYS) or call_id
            if row.type in CALL_TYPES:
                row.pair = Pair("tool call", "start", name)
                calls.setdefault(call_id, row)
            else:
                row.pair = Pair("tool call", "end", name)
                call = calls.pop(call_id, None)
                if call is not None:
                    _join(call, row)


def _join(first: Row, last: Row) -> None:
    assert first.pair is not None
    assert last.pair is not None
    took = last.at_ms - first.at_ms
    first.pair.other_id, first.pair.duration_ms = last.id, took
    last.pair.other_id, last.pair.duration_ms = first.id, took


def _turns(shown: Waterfall) -> None:
    turns: dict[str, Turn] = {}
    for row in shown.rows:
        if not row.turn_id:
            continue
        turn = turns.get(row.turn_id)
        if turn is None:
            turns[row.turn_id] = Turn(row.turn_id, row.id, 1, row.at_ms, row.at_ms)
        else:
            turn.records += 1
            turn.end_ms = max(turn.end_ms, row.at_ms)
    shown.turns = list(turns.values())


def record_link(state: RunState, record_id: str) -> str:
    """The record in the run page's records list (its page starts at it)."""
    number = int(record_id) if record_id.isdecimal() else 1
    return state.page(
        f"record-{record_id}",
        records_cursor=str(number - 1) if number > 1 else "",
        records_order="",
        records_before="",
        records_latest="",
        records_type=(),
    )


@router.get("/fragments/run/timeline")
async def timeline_fragment(request: Request, state: RunStateDep) -> HTMLResponse:
    """A page of the run's records as a waterfall of times, gaps and durations."""

    async def load(api: Api) -> dict[str, Any]:
        run = await api.store.load_run(state.run_id)
        cursor = state.timeline_cursor
        body = await api.store.list_run_records(state.run_id, cursor, RECORDS_PAGE_SIZE)
        previous = None
        if cursor.isdecimal() and int(cursor) > 0:  # the record before this page's first
            before = await api.store.list_run_records(
                state.run_id, str(int(cursor) - 1) if int(cursor) > 1 else "", 1
            )
            previous = before.records[0].timestamp if before.records else None
        shown = waterfall(run.started_at, body.records, previous)
        return {
            "run": run,
            "shown": shown,
            "link_to": lambda record_id: record_link(state, record_id),
            "next": state.page("timeline", timeline_cursor=body.next_cursor)
            if body.next_cursor
            else "",
            "first": state.page("timeline", timeline_cursor="") if cursor else "",
            "long_gap": elapsed(LONG_GAP_MS),
        }

    return await fragment(request, "fragments/timeline.html", load)
