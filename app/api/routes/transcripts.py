"""The transcript of a run, replayed from its records (CONTRACT.md section 10).

A page replays the transcript records among one page of the run's records. Validation
needs the whole transcript, so it reads the run from its start in pages of
``REPLAY_PAGE_SIZE``, up to a bound (records and payload bytes, settings
``max_transcript_records`` and ``max_transcript_bytes``): a run beyond it answers 413
``payload_too_large`` instead of holding a database thread for seconds. Everything runs in
one ``StoreCalls.heavy`` call, so validations never take more than a quarter of the database
threads.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.api.auth import READ
from app.api.deps import BlockingStoreDep, CursorQuery, JsonInteger, RunIdPath, StoreCallsDep
from app.api.problem_docs import problems
from app.api.transcript_schemas import TranscriptPageBody
from app.storage import SqlStore
from runtime_store_client import (
    InvalidTranscriptError,
    Page,
    PayloadTooLargeError,
    RunNotFoundError,
    SessionPurgedError,
)
from runtime_store_client.transcript import (
    Message,
    NoTranscriptError,
    bedrock_violations,
    build_messages_from_run_log,
    encode_message,
    planner_transcript_violations,
    replay_run_log_events,
)

router = APIRouter(prefix="/v1/runs")

#: Records scanned per page by default (the replay page size of CONTRACT.md 10.3).
DEFAULT_RECORDS = 512


class TranscriptCheck(enum.StrEnum):
    PLANNER = "planner"
    BEDROCK = "bedrock"


@dataclass(frozen=True, slots=True)
class TranscriptBounds:
    """How much of a run one transcript validation may read."""

    records: int = 10_000
    payload_bytes: int = 64 * 1024 * 1024


class _BoundedReader:
    """``list_run_records`` that stops a validation once it read more than its bounds."""

    def __init__(self, store: SqlStore, bounds: TranscriptBounds) -> None:
        self._store = store
        self._bounds = bounds
        self._records = 0
        self._bytes = 0

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        page = self._store.list_run_records(run_id, cursor, limit)
        self._records += len(page.records)
        self._bytes += sum(len(record.payload) for record in page.records)
        if self._records > self._bounds.records or self._bytes > self._bounds.payload_bytes:
            raise PayloadTooLargeError(
                f"validating the transcript of run {run_id!r} would read more than "
                f"{self._bounds.records} records or {self._bounds.payload_bytes} payload "
                "bytes (settings max_transcript_records, max_transcript_bytes); read it "
                "page by page without validate",
                run_id=run_id,
            )
        return page


def _whole(store: SqlStore, run_id: str, bounds: TranscriptBounds) -> list[Message]:
    try:
        return build_messages_from_run_log(_BoundedReader(store, bounds), run_id)
    except NoTranscriptError:
        return []


def _transcript_page(
    store: SqlStore,
    run_id: str,
    cursor: str,
    limit: int,
    validate: TranscriptCheck | None,
    thinking: bool,
    bounds: TranscriptBounds,
) -> dict[str, object]:
    page = store.list_run_records(run_id, cursor, limit)
    messages, _ = replay_run_log_events(page.records)
    if validate is not None:
        whole = messages if not cursor and not page.next_cursor else _whole(store, run_id, bounds)
        violations = (
            planner_transcript_violations(whole)
            if validate is TranscriptCheck.PLANNER
            else bedrock_violations(whole, thinking)
        )
        if violations:
            raise InvalidTranscriptError(
                f"the transcript breaks {len(violations)} {validate.value} rule(s)",
                run_id=run_id,
                violations=violations,
            )
    return {"messages": [encode_message(m) for m in messages], "next_cursor": page.next_cursor}


@router.get(
    "/{run_id}/transcript",
    tags=["records"],
    dependencies=[READ],
    operation_id="load-transcript",
    summary="Load a run's transcript",
    response_model=TranscriptPageBody,
    responses=problems(RunNotFoundError, SessionPurgedError, InvalidTranscriptError),
)
async def load_transcript(
    request: Request,
    run_id: RunIdPath,
    store: BlockingStoreDep,
    calls: StoreCallsDep,
    *,
    cursor: CursorQuery = "",
    limit: Annotated[
        int, Query(ge=1, description="Records scanned for this page (not messages)."), JsonInteger
    ] = DEFAULT_RECORDS,
    validate: Annotated[
        TranscriptCheck | None,
        Query(
            description="Check the whole transcript: `planner` or `bedrock` rules. Reads the "
            "run from its start, up to the service's bound (default 10,000 records or 64 MiB "
            "of payloads); a longer run answers 413 `payload_too_large`."
        ),
    ] = None,
    thinking: Annotated[
        bool, Query(description="With validate=bedrock: the model runs with thinking enabled.")
    ] = False,
) -> JSONResponse:
    """The messages of the `transcript_messages_seeded` and `transcript_messages_appended`
    records among one page of the run's records, in order; follow `next_cursor` for long
    runs. With `validate`, the whole transcript is checked first and a broken rule answers
    422 `invalid_transcript` listing every violation (message index and rule)."""
    bounds: TranscriptBounds = request.app.state.transcript_bounds
    body = await calls.heavy(
        _transcript_page, store, run_id, cursor, limit, validate, thinking, bounds
    )
    return JSONResponse(body)
