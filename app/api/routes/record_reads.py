"""Reads of a run's records beyond the lists: transcript prefixes (CONTRACT.md 12.3) and a
record by its key (12.5)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.api.auth import READ
from app.api.deps import JsonInteger, RunIdPath, services
from app.api.examples import RECORD_KEY_EXAMPLE, TRANSCRIPT_THROUGH_EXAMPLE
from app.api.problem_docs import problems
from app.api.render import respond, respond_record_page
from app.api.schemas.records import RecordBody, RecordPageBody
from runtime_store_client import (
    InvalidTranscriptPositionError,
    RecordNotFoundError,
    RunNotFoundError,
    SessionPurgedError,
)

router = APIRouter(prefix="/v1/runs")


@router.get(
    "/{run_id}/transcript-records",
    dependencies=[READ],
    response_model=RecordPageBody,
    operation_id="list-run-transcript-records",
    summary="Read a prefix of a run's transcript records",
    tags=["records"],
    responses=problems(RunNotFoundError, SessionPurgedError, InvalidTranscriptPositionError),
)
async def list_run_transcript_records(
    run_id: RunIdPath,
    request: Request,
    through: Annotated[
        str,
        Query(
            description="The ID of a committed record of the run, of any type: the page "
            "reads up to and including it, so records appended later never change it.",
            examples=[TRANSCRIPT_THROUGH_EXAMPLE],
        ),
    ],
    after: Annotated[
        str,
        Query(
            description='"" to read from the start, or the ID of a transcript record of the '
            "run at or before `through` (the previous page's `next_cursor`)."
        ),
    ] = "",
    limit: Annotated[
        int,
        Query(
            description="Records per page, at least 1; above 512 it is served as 512. A page "
            "also ends before the record that would pass 1 MiB of payloads."
        ),
        JsonInteger,
    ] = 100,
) -> Response:
    """The run's `transcript_messages_seeded` and `transcript_messages_appended` records
    after `after` and up to and including `through`, in record order. `next_cursor` is the
    ID of the page's last record when more transcript records follow up to `through`, else
    "". The same `through`, `after` and `limit` always give the same page. A position that
    is not one of the run's is 422 `invalid_transcript_position`; a single transcript record
    over 1 MiB is 413 `payload_too_large`."""
    store, calls = services(request)
    return respond_record_page(
        await calls(store.list_run_transcript_records, run_id, through, after, limit)
    )


@router.get(
    "/{run_id}/record",
    dependencies=[READ],
    response_model=RecordBody,
    operation_id="load-run-record",
    summary="Load a record by its event key",
    tags=["records"],
    responses=problems(RunNotFoundError, SessionPurgedError, RecordNotFoundError),
)
async def load_run_record(
    run_id: RunIdPath,
    request: Request,
    event_key: Annotated[
        str, Query(description="The record's event key.", examples=[RECORD_KEY_EXAMPLE])
    ],
) -> Response:
    """The record stored under `event_key` in the run, as a page carries it (with its
    `id`); 404 `record_not_found` when the run holds none under that key."""
    store, calls = services(request)
    return respond(RecordBody.of(await calls(store.load_run_record, run_id, event_key)))
