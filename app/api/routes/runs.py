"""Run lifecycle transactions and run reads (CONTRACT.md 3.3-3.12)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.api.auth import READ, WRITE
from app.api.deps import CursorQuery, LimitQuery, RunIdPath, services
from app.api.problem_docs import problems
from app.api.render import (
    respond,
    respond_append_result,
    respond_append_results,
    respond_record_page,
)
from app.api.schemas.records import (
    AppendRecordRequest,
    AppendRecordsRequest,
    AppendResultBody,
    AppendResultsBody,
    RecordPageBody,
)
from app.api.schemas.runs import (
    CancellationRequest,
    CheckpointBody,
    RepairResultBody,
    RunMetaBody,
    RunPageBody,
    SuspensionRequest,
    TerminalRequest,
)
from app.api.wire import Time
from app.domain.limits import check_label_filters
from runtime_store_client import (
    EventConflictError,
    InvalidArgumentError,
    RunCancellationConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunPage,
    RunRecordOwnerMismatchError,
    RunStatus,
    RunSuspensionConflictError,
    RunSuspensionNotFoundError,
    RunTerminalConflictError,
    SessionPurgedError,
)
from runtime_store_client.filters import label_filters
from runtime_store_client.times import EXAMPLE as EXAMPLE_TIME

router = APIRouter(prefix="/v1/runs")


def _label_filters(labels: list[str]) -> dict[str, str] | None:
    """The label filters (``runtime_store_client.filters``); more than 64 are refused
    before any of them is read (CONTRACT.md 2.10)."""
    check_label_filters(labels, "label")
    return label_filters(labels)


@router.get(
    "",
    tags=["runs"],
    dependencies=[READ],
    response_model=RunPageBody,
    operation_id="search-runs",
    summary="Search runs",
    responses=problems(),
)
async def search_runs(  # noqa: PLR0913 - one parameter per filter of CONTRACT.md 11.1
    request: Request,
    *,
    status: Annotated[
        list[RunStatus], Query(description="Only runs in these statuses (repeatable).")
    ] = [],  # noqa: B006 - FastAPI copies query defaults
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
    cursor: CursorQuery = "",
    limit: LimitQuery = 100,
) -> Response:
    """Runs of every session and sessionless runs, newest `started_at` first, ties by
    `run_id` ascending; runs of purged sessions never appear. Naming an unknown session
    or parent matches nothing. A cursor only continues the list with the same filters."""
    store, calls = services(request)
    labels = _label_filters(label)
    if labels is None:  # two values for one key: no run can match
        return respond(RunPageBody.of(RunPage(runs=[])))
    page = await calls(
        store.search_runs,
        statuses=status,
        agent_id=agent_id,
        session_id=session_id,
        parent_run_id=parent_run_id,
        labels=labels,
        started_after=started_after,
        started_before=started_before,
        cursor=cursor,
        limit=limit,
    )
    return respond(RunPageBody.of(page))


_WRITE_PROBLEMS = (
    RunNotFoundError,
    SessionPurgedError,
    RunRecordOwnerMismatchError,
    EventConflictError,
)


@router.post(
    "/{run_id}/records",
    dependencies=[WRITE],
    response_model=AppendResultBody,
    operation_id="append-run-record",
    summary="Append a record",
    tags=["records"],
    responses=problems(*_WRITE_PROBLEMS, RunNotActiveError),
)
async def append_run_record(
    run_id: RunIdPath, body: AppendRecordRequest, request: Request
) -> Response:
    """Append an ordinary record to a running run; it gets the run's next record ID.

    Lifecycle types need their own operation. The same record again returns its original ID
    with `inserted = false`, also after the run stopped.
    """
    store, calls = services(request)
    if body.record.run_id != run_id:
        raise InvalidArgumentError(
            f"record.run_id {body.record.run_id!r} must equal the path's run ID {run_id!r}",
            run_id=run_id,
        )
    record = body.record.contract()
    return respond_append_result(await calls(store.append_run_record, record))


@router.post(
    "/{run_id}/records/batch",
    dependencies=[WRITE],
    response_model=AppendResultsBody,
    operation_id="append-run-records",
    summary="Append a batch of records",
    tags=["records"],
    responses=problems(*_WRITE_PROBLEMS, RunNotActiveError),
)
async def append_run_records(
    run_id: RunIdPath, body: AppendRecordsRequest, request: Request
) -> Response:
    """Append 1 to 1,000 ordinary records of the run in one transaction, in the given
    order, each through the same checks as a single append: an exact retry returns its
    original ID (`inserted = false`), a key repeated inside the batch is a retry of its
    first occurrence when the content is the same, else `event_conflict`. If any record
    fails nothing is written, and the problem names that record in `event_key`."""
    store, calls = services(request)
    records = [item.contract() for item in body.records]
    return respond_append_results(await calls(store.append_run_records, run_id, records))


@router.post(
    "/{run_id}/cancellation",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=AppendResultBody,
    operation_id="record-run-cancellation",
    summary="Record a cancellation request",
    responses=problems(*_WRITE_PROBLEMS, RunNotActiveError, RunCancellationConflictError),
)
async def record_run_cancellation(
    run_id: RunIdPath, body: CancellationRequest, request: Request
) -> Response:
    """Store the first cancellation reason and its `runtime.cancellation_intent` record.

    The status stays `running`: the run ends later through a canceled terminal.
    """
    store, calls = services(request)
    return respond_append_result(
        await calls(store.record_run_cancellation, run_id, body.reason, body.record.contract())
    )


@router.post(
    "/{run_id}/suspension",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=AppendResultBody,
    operation_id="record-run-suspension",
    summary="Suspend a run",
    responses=problems(*_WRITE_PROBLEMS, RunTerminalConflictError, RunSuspensionConflictError),
)
async def record_run_suspension(
    run_id: RunIdPath, body: SuspensionRequest, request: Request
) -> Response:
    """Store the checkpoint, status `suspended` and the `run_suspended` record together."""
    store, calls = services(request)
    return respond_append_result(
        await calls(
            store.record_run_suspension,
            run_id,
            body.checkpoint.contract(),
            body.record.contract(),
        )
    )


@router.post(
    "/{run_id}/terminal",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=AppendResultBody,
    operation_id="record-run-terminal",
    summary="Finish a run",
    responses=problems(*_WRITE_PROBLEMS, RunTerminalConflictError),
)
async def record_run_terminal(
    run_id: RunIdPath, body: TerminalRequest, request: Request
) -> Response:
    """Store the final status (`completed`, `failed`, `canceled`) with its `run_completed`."""
    store, calls = services(request)
    return respond_append_result(
        await calls(store.record_run_terminal, run_id, body.status, body.record.contract())
    )


@router.post(
    "/{run_id}/suspension/repair",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=RepairResultBody,
    operation_id="repair-run-suspension",
    summary="Repair a suspension",
    responses=problems(*_WRITE_PROBLEMS, RunSuspensionConflictError),
)
async def repair_run_suspension(
    run_id: RunIdPath, body: SuspensionRequest, request: Request
) -> Response:
    """Suspend a running run (`stored`), confirm the same suspension (`already_stored`), or
    report a different final state (`different_terminal`, not an error, nothing written)."""
    store, calls = services(request)
    return respond(
        RepairResultBody.of(
            await calls(
                store.repair_run_suspension,
                run_id,
                body.checkpoint.contract(),
                body.record.contract(),
            )
        )
    )


@router.post(
    "/{run_id}/terminal/repair",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=RepairResultBody,
    operation_id="repair-run-terminal",
    summary="Repair a terminal status",
    responses=problems(*_WRITE_PROBLEMS, RunTerminalConflictError),
)
async def repair_run_terminal(
    run_id: RunIdPath, body: TerminalRequest, request: Request
) -> Response:
    """Finish a running run (`stored`), confirm the same terminal (`already_stored`), or
    report a different final state (`different_terminal`, not an error, nothing written)."""
    store, calls = services(request)
    return respond(
        RepairResultBody.of(
            await calls(store.repair_run_terminal, run_id, body.status, body.record.contract())
        )
    )


@router.get(
    "/{run_id}",
    tags=["runs"],
    dependencies=[READ],
    response_model=RunMetaBody,
    operation_id="load-run",
    summary="Load a run",
    responses=problems(RunNotFoundError, SessionPurgedError),
)
async def load_run(run_id: RunIdPath, request: Request) -> Response:
    """The run's identity, status, start outcome, times, labels and cancellation reason."""
    store, calls = services(request)
    return respond(RunMetaBody.of(await calls(store.load_run, run_id)))


@router.get(
    "/{run_id}/suspension",
    tags=["runs"],
    dependencies=[READ],
    response_model=CheckpointBody,
    operation_id="load-run-suspension",
    summary="Load a suspension checkpoint",
    responses=problems(RunNotFoundError, RunSuspensionNotFoundError, SessionPurgedError),
)
async def load_run_suspension(run_id: RunIdPath, request: Request) -> Response:
    """The checkpoint stored with the run's suspension, byte for byte (base64)."""
    store, calls = services(request)
    return respond(CheckpointBody.of(await calls(store.load_run_suspension, run_id)))


@router.get(
    "/{run_id}/records",
    dependencies=[READ],
    response_model=RecordPageBody,
    operation_id="list-run-records",
    summary="List a run's records",
    tags=["records"],
    responses=problems(RunNotFoundError, SessionPurgedError),
)
async def list_run_records(
    run_id: RunIdPath,
    request: Request,
    cursor: CursorQuery = "",
    limit: LimitQuery = 100,
) -> Response:
    """The run's records, oldest first; `next_cursor` is the ID of the page's last record
    when more existed."""
    store, calls = services(request)
    return respond_record_page(await calls(store.list_run_records, run_id, cursor, limit))
