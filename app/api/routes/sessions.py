"""Session administration (CONTRACT.md 3.1, 3.2) and the session-wide lists."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status

from app.api.auth import ADMIN, READ
from app.api.deps import CursorQuery, LimitQuery, SessionIdPath, services
from app.api.problem_docs import problems
from app.api.render import respond, respond_record_page
from app.api.schemas.records import RecordPageBody
from app.api.schemas.runs import RunPageBody
from app.api.schemas.sessions import (
    CreateSessionRequest,
    EndSessionRequest,
    SessionBody,
    SessionPageBody,
    SessionStatusBody,
)
from app.api.wire import Time
from runtime_store_client import (
    RunStatus,
    SessionActiveError,
    SessionEndedError,
    SessionHasActiveRunsError,
    SessionNotFoundError,
    SessionPurgedError,
    SessionStatus,
)
from runtime_store_client.times import EXAMPLE as EXAMPLE_TIME

router = APIRouter(prefix="/v1/sessions")


@router.get(
    "",
    tags=["sessions"],
    dependencies=[READ],
    response_model=SessionPageBody,
    operation_id="list-sessions",
    summary="List sessions",
    responses=problems(),
)
async def list_sessions(
    request: Request,
    *,
    status: Annotated[
        list[SessionStatus],
        Query(description="Only sessions in these statuses (repeatable); default both."),
    ] = [],  # noqa: B006 - FastAPI copies query defaults
    created_after: Annotated[
        Time | None,
        Query(description="Only sessions created at or after this time.", examples=[EXAMPLE_TIME]),
    ] = None,
    created_before: Annotated[
        Time | None,
        Query(description="Only sessions created before this time (half-open range)."),
    ] = None,
    cursor: CursorQuery = "",
    limit: LimitQuery = 100,
) -> Response:
    """Sessions newest `created_at` first, ties by `session_id` ascending; purged sessions
    never appear. A cursor only continues the list with the same filters."""
    store, calls = services(request)
    page = await calls(
        store.list_sessions,
        statuses=status,
        created_after=created_after,
        created_before=created_before,
        cursor=cursor,
        limit=limit,
    )
    return respond(SessionPageBody.of(page))


@router.post(
    "",
    tags=["sessions"],
    dependencies=[ADMIN],
    response_model=SessionBody,
    operation_id="create-session",
    summary="Create a session",
    responses=problems(SessionEndedError, SessionPurgedError),
)
async def create_session(body: CreateSessionRequest, request: Request) -> Response:
    """Create an active session, or return the active one unchanged (original `created_at`).

    An ended session answers `session_ended`; a purged one `session_purged`.
    """
    store, calls = services(request)
    return respond(
        SessionBody.of(await calls(store.create_session, body.session_id, body.created_at))
    )


@router.get(
    "/{session_id}",
    tags=["sessions"],
    dependencies=[READ],
    response_model=SessionBody,
    operation_id="load-session",
    summary="Load a session",
    responses=problems(SessionNotFoundError, SessionPurgedError),
)
async def load_session(session_id: SessionIdPath, request: Request) -> Response:
    """The session with its status and times."""
    store, calls = services(request)
    return respond(SessionBody.of(await calls(store.load_session, session_id)))


@router.post(
    "/{session_id}/end",
    tags=["sessions"],
    dependencies=[ADMIN],
    response_model=SessionBody,
    operation_id="end-session",
    summary="End a session",
    responses=problems(SessionNotFoundError, SessionPurgedError),
)
async def end_session(
    session_id: SessionIdPath, body: EndSessionRequest, request: Request
) -> Response:
    """End the session: running runs continue and may still write; new starts get `stop`.

    Ending an ended session returns it unchanged (the first `ended_at` is kept).
    """
    store, calls = services(request)
    return respond(SessionBody.of(await calls(store.end_session, session_id, body.ended_at)))


@router.delete(
    "/{session_id}",
    tags=["sessions"],
    dependencies=[ADMIN],
    operation_id="purge-session",
    summary="Purge a session",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses=problems(SessionNotFoundError, SessionActiveError, SessionHasActiveRunsError),
)
async def purge_session(session_id: SessionIdPath, request: Request) -> None:
    """Delete an ended session with its runs, checkpoints and records, in one transaction.

    The session ID and its run IDs stay reserved forever: every later operation naming them
    answers `session_purged`. Purging a purged session is a no-op. Sessionless runs are
    never touched.
    """
    store, calls = services(request)
    await calls(store.purge_session, session_id)


@router.get(
    "/{session_id}/status",
    tags=["sessions"],
    dependencies=[READ],
    response_model=SessionStatusBody,
    operation_id="load-session-status",
    summary="Load a session's status",
    responses=problems(SessionNotFoundError, SessionPurgedError),
)
async def load_session_status(session_id: SessionIdPath, request: Request) -> Response:
    """`active` or `ended`."""
    store, calls = services(request)
    return respond(SessionStatusBody(status=await calls(store.load_session_status, session_id)))


@router.get(
    "/{session_id}/runs",
    tags=["sessions"],
    dependencies=[READ],
    response_model=RunPageBody,
    operation_id="list-session-runs",
    summary="List a session's runs",
    responses=problems(SessionNotFoundError, SessionPurgedError),
)
async def list_session_runs(
    session_id: SessionIdPath,
    request: Request,
    *,
    status: Annotated[
        list[RunStatus], Query(description="Only runs in these statuses (repeatable).")
    ] = [],  # noqa: B006 - FastAPI copies query defaults
    cursor: CursorQuery = "",
    limit: LimitQuery = 100,
) -> Response:
    """Runs of the session ordered by `started_at`, then `run_id`, page by page."""
    store, calls = services(request)
    return respond(
        RunPageBody.of(
            await calls(
                store.list_session_runs, session_id, statuses=status, cursor=cursor, limit=limit
            )
        )
    )


@router.get(
    "/{session_id}/records",
    dependencies=[READ],
    response_model=RecordPageBody,
    operation_id="list-session-run-records",
    summary="List a session's records",
    tags=["records"],
    responses=problems(SessionNotFoundError, SessionPurgedError),
)
async def list_session_run_records(
    session_id: SessionIdPath,
    request: Request,
    cursor: CursorQuery = "",
    limit: LimitQuery = 100,
) -> Response:
    """Every record of every run of the session, in commit order, page by page.

    A reader that pages while writers commit never skips a record and never sees one twice.
    A page also stops early once its payloads exceed the byte budget (at least one record).
    """
    store, calls = services(request)
    return respond_record_page(
        await calls(store.list_session_run_records, session_id, cursor, limit)
    )
