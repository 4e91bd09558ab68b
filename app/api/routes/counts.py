"""Counts for the operator's lists (issue 33): how many sessions and runs of each status a
list holds, bounded, and how many records runs and sessions hold.

Their own paths, not ``/v1/runs/counts``: ``GET /v1/runs/{id}`` must reach a run named
``counts`` (CONTRACT.md 2.9). The status counts take the filters of ``GET /v1/runs`` and
``GET /v1/sessions`` through the same code (``app/storage/search/finding.py``), so a filter means
exactly what it means to the list.
"""

from __future__ import annotations

from typing import Annotated, Self

from fastapi import APIRouter, Query, Request, Response
from pydantic import Field

from app.api.auth import READ
from app.api.deps import JsonInteger, services
from app.api.problem_docs import problems
from app.api.render import respond
from app.api.routes.runs import _label_filters
from app.api.schemas.wire_model import WireModel
from app.api.wire import Time
from app.domain.filters import MAX_COUNT_LIMIT
from runtime_store_client import RecordCounts, RunStatus, StatusCounts
from runtime_store_client.times import EXAMPLE as EXAMPLE_TIME

router = APIRouter(prefix="/v1")


class StatusCountsBody(WireModel):
    """How many of each status the list holds, every status present (0 included)."""

    counts: dict[str, int] = Field(
        description="Status to count; a count equal to `limit` means at least that many.",
        examples=[{"running": 3, "completed": 10000, "failed": 2}],
    )
    limit: int = Field(description="The bound of every count.", examples=[MAX_COUNT_LIMIT])

    @classmethod
    def of(cls, counts: StatusCounts) -> Self:
        return cls.model_construct(counts=counts.counts, limit=counts.limit)


class RecordCountsBody(WireModel):
    """The number of records of each run and session asked for; unknown and purged IDs
    are left out."""

    runs: dict[str, int] = Field(description="Run ID to its number of records.")
    sessions: dict[str, int] = Field(
        description="Session ID to the number of records of all its runs."
    )

    @classmethod
    def of(cls, counts: RecordCounts) -> Self:
        return cls.model_construct(runs=counts.runs, sessions=counts.sessions)


CountLimitQuery = Annotated[
    int,
    Query(
        ge=1,
        le=MAX_COUNT_LIMIT,
        description="The bound of each count: a count stops there (at least that many).",
    ),
    JsonInteger,
]


@router.get(
    "/session-counts",
    tags=["sessions"],
    dependencies=[READ],
    response_model=StatusCountsBody,
    operation_id="count-sessions",
    summary="Count sessions by status",
    responses=problems(),
)
async def count_sessions(
    request: Request,
    *,
    created_after: Annotated[
        Time | None,
        Query(description="Only sessions created at or after this time.", examples=[EXAMPLE_TIME]),
    ] = None,
    created_before: Annotated[
        Time | None,
        Query(description="Only sessions created before this time (half-open range)."),
    ] = None,
    limit: CountLimitQuery = MAX_COUNT_LIMIT,
) -> Response:
    """How many sessions of each status (`active`, `ended`) `GET /v1/sessions` lists with
    these filters. Each count reads at most `limit` sessions, so its cost is bounded
    whatever the number of sessions: a count equal to `limit` means "at least `limit`".
    Each status is counted on its own, so counts taken while writers commit may not add
    up to one moment."""
    store, calls = services(request)
    counts = await calls(
        store.count_sessions,
        created_after=created_after,
        created_before=created_before,
        limit=limit,
    )
    return respond(StatusCountsBody.of(counts))


@router.get(
    "/run-counts",
    tags=["runs"],
    dependencies=[READ],
    response_model=StatusCountsBody,
    operation_id="count-runs",
    summary="Count runs by status",
    responses=problems(),
)
async def count_runs(
    request: Request,
    *,
    agent_id: Annotated[str, Query(description="Only runs of this agent.")] = "",
    session_id: Annotated[str, Query(description="Only runs of this session.")] = "",
    parent_run_id: Annotated[str, Query(description="Only children of this run.")] = "",
    label: Annotated[
        list[str],
        Query(
            description="Only runs carrying this label, as `key:value` (the key ends at the "
            "first colon); repeatable, every label must match.",
            examples=["team:search"],
        ),
    ] = [],  # noqa: B006 - FastAPI copies query defaults
    started_after: Annotated[
        Time | None,
        Query(description="Only runs started at or after this time.", examples=[EXAMPLE_TIME]),
    ] = None,
    started_before: Annotated[
        Time | None, Query(description="Only runs started before this time (half-open).")
    ] = None,
    limit: CountLimitQuery = MAX_COUNT_LIMIT,
) -> Response:
    """How many runs of each status `GET /v1/runs` finds with these filters (the same
    filters, meaning the same, refused the same way; no `status`, `cursor` or page
    `limit`). Every run status is present, 0 included. Each count reads at most `limit`
    runs, so its cost is bounded whatever the number of runs: a count equal to `limit`
    means "at least `limit`". Each status is counted on its own, so counts taken while
    writers commit may not add up to one moment."""
    store, calls = services(request)
    labels = _label_filters(label)
    if labels is None:  # two values for one key: no run can match
        return respond(
            StatusCountsBody.of(
                StatusCounts(counts={str(s): 0 for s in sorted(RunStatus)}, limit=limit)
            )
        )
    counts = await calls(
        store.count_runs,
        agent_id=agent_id,
        session_id=session_id,
        parent_run_id=parent_run_id,
        labels=labels,
        started_after=started_after,
        started_before=started_before,
        limit=limit,
    )
    return respond(StatusCountsBody.of(counts))


@router.get(
    "/record-counts",
    tags=["records"],
    dependencies=[READ],
    response_model=RecordCountsBody,
    operation_id="count-records",
    summary="Count the records of runs and sessions",
    responses=problems(),
)
async def count_records(
    request: Request,
    *,
    run_id: Annotated[
        list[str], Query(description="A run whose records to count (repeatable).")
    ] = [],  # noqa: B006 - FastAPI copies query defaults
    session_id: Annotated[
        list[str], Query(description="A session whose records to count (repeatable).")
    ] = [],  # noqa: B006 - FastAPI copies query defaults
) -> Response:
    """The number of records each run named holds, and each session named (all its runs
    together), read from counters the store keeps: one lookup per ID. At most
    100 IDs per request, runs and sessions together; unknown and purged
    IDs are left out of the answer."""
    store, calls = services(request)
    counts = await calls(store.count_records, run_ids=run_id, session_ids=session_id)
    return respond(RecordCountsBody.of(counts))
