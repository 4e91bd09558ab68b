"""The transcript of a run, replayed from its records (CONTRACT.md section 10)."""

from __future__ import annotations

import enum
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from app.api.auth import READ
from app.api.deps import CursorQuery, RunIdPath, StoreDep
from app.api.problems import problems
from app.api.transcript_schemas import TranscriptPageBody
from app.storage import SqlStore
from runtime_store_client import InvalidTranscriptError, RunNotFoundError, SessionPurgedError
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


@router.get(
    "/{run_id}/transcript",
    tags=["records"],
    dependencies=[READ],
    operation_id="load-transcript",
    summary="Load a run's transcript",
    response_model=TranscriptPageBody,
    responses=problems(RunNotFoundError, SessionPurgedError, InvalidTranscriptError),
)
def load_transcript(
    run_id: RunIdPath,
    store: StoreDep,
    *,
    cursor: CursorQuery = "",
    limit: Annotated[
        int, Query(ge=1, description="Records scanned for this page (not messages).")
    ] = DEFAULT_RECORDS,
    validate: Annotated[
        TranscriptCheck | None,
        Query(description="Check the whole transcript: `planner` or `bedrock` rules."),
    ] = None,
    thinking: Annotated[
        bool, Query(description="With validate=bedrock: the model runs with thinking enabled.")
    ] = False,
) -> JSONResponse:
    """The messages of the `transcript_messages_seeded` and `transcript_messages_appended`
    records among one page of the run's records, in order; follow `next_cursor` for long
    runs. With `validate`, the whole transcript is checked first and a broken rule answers
    422 `invalid_transcript` listing every violation (message index and rule)."""
    page = store.list_run_records(run_id, cursor, limit)
    messages, _ = replay_run_log_events(page.records)
    if validate is not None:
        whole = messages if not cursor and not page.next_cursor else _whole(store, run_id)
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
    return JSONResponse(
        {"messages": [encode_message(m) for m in messages], "next_cursor": page.next_cursor}
    )


def _whole(store: SqlStore, run_id: str) -> list[Message]:
    try:
        return build_messages_from_run_log(store, run_id)
    except NoTranscriptError:
        return []
