"""The transcript of a run, replayed from its records (CONTRACT.md section 10).

A page replays the transcript records among one page of the run's records. A run started
with a seed (15.6) composes its history: the first page (no cursor) begins with what the run
inherits from its seed, composed by the client's helper (``build_seed_history``: its
literals, then its source run's history through the prefix, with the prefix's exclusions);
later pages hold the run's own messages only, so the pages joined are the run's whole
history, as ``build_messages_from_run_log`` gives it. The page's JSON has no key that marks
a message, so nothing marks the inherited ones: a reader that needs the boundary reads the
seed's history itself (its length is the number of inherited messages).

Validation needs the whole transcript, so it reads the run (and its seed) from its start in
pages of ``REPLAY_PAGE_SIZE``, up to a bound (records and payload bytes, settings
``max_transcript_records`` and ``max_transcript_bytes``): a run beyond it answers 413
``payload_too_large`` instead of holding a database thread for seconds. The seed's history on
a first page has the same bound. Everything runs in one ``StoreCalls.heavy`` call, so
validations never take more than a quarter of the database threads.
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
from app.api.schemas.transcripts import TranscriptPageBody
from app.storage import SqlStore
from runtime_store_client import (
    InvalidTranscriptError,
    Page,
    PayloadTooLargeError,
    RunMeta,
    RunNotFoundError,
    RunSeed,
    SeedPage,
    SessionPurgedError,
)
from runtime_store_client.transcript import (
    Message,
    NoTranscriptError,
    bedrock_violations,
    build_messages_from_run_log,
    build_seed_history,
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
    """How much of a run one transcript validation, or the seed's history on a first page,
    may read."""

    records: int = 10_000
    payload_bytes: int = 64 * 1024 * 1024


class _BoundedReader:
    """The reads of a replay (CONTRACT.md 10.3 and 15.6) that stop it once it read more
    records (of the run, of its seed, of their sources) or payload bytes than its bounds."""

    def __init__(
        self, store: SqlStore, bounds: TranscriptBounds, run_id: str, *, validating: bool
    ) -> None:
        self._store = store
        self._bounds = bounds
        self._run_id = run_id
        self._validating = validating
        self._records = 0
        self._bytes = 0

    def _count(self, records: int, payload_bytes: int) -> None:
        self._records += records
        self._bytes += payload_bytes
        if self._records > self._bounds.records or self._bytes > self._bounds.payload_bytes:
            doing, advice = (
                ("validating the transcript", "; read it page by page without validate")
                if self._validating
                else ("composing the history inherited from the seed", "")
            )
            raise PayloadTooLargeError(
                f"{doing} of run {self._run_id!r} would read more than "
                f"{self._bounds.records} records or {self._bounds.payload_bytes} payload "
                f"bytes (settings max_transcript_records, max_transcript_bytes){advice}",
                run_id=self._run_id,
            )

    def _counted(self, page: Page) -> Page:
        self._count(len(page.records), sum(len(record.payload) for record in page.records))
        return page

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        return self._counted(self._store.list_run_records(run_id, cursor, limit))

    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        return self._counted(self._store.list_run_transcript_records(run_id, through, after, limit))

    def load_run(self, run_id: str) -> RunMeta:
        return self._store.load_run(run_id)

    def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        return self._store.load_run_seed(run_id, seed_end_id)

    def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        page = self._store.list_run_seed_records(run_id, seed_end_id, after, limit)
        self._count(
            len(page.records),
            sum(
                len(record.messages or b"")
                + len(record.literal_part.data if record.literal_part else b"")
                for record in page.records
            ),
        )
        return page


def _whole(store: SqlStore, run_id: str, bounds: TranscriptBounds) -> list[Message]:
    try:
        return build_messages_from_run_log(
            _BoundedReader(store, bounds, run_id, validating=True), run_id
        )
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
    if not cursor:  # a seeded run's history begins with its seed's (15.6)
        seed_reader = _BoundedReader(store, bounds, run_id, validating=False)
        messages = build_seed_history(seed_reader, run_id).messages + messages
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
    runs. For a run started with a seed (CONTRACT.md 15.6), the first page begins with the
    history the run inherits from its seed (its literal messages and its source run's
    history, with the seed's exclusions); nothing in the page marks those messages (read the
    seed to tell them apart), and later pages hold the run's own messages only. With
    `validate`, the whole history is checked first and a broken rule answers 422
    `invalid_transcript` listing every violation (message index and rule)."""
    bounds: TranscriptBounds = request.app.state.transcript_bounds
    body = await calls.heavy(
        _transcript_page, store, run_id, cursor, limit, validate, thinking, bounds
    )
    return JSONResponse(body)
