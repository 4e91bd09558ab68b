"""The product memory store (CONTRACT.md section 9)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response, status

from app.api.auth import READ, WRITE
from app.api.deps import AgentIdPath, RunIdPath, services
from app.api.problem_docs import problems
from app.api.render import respond
from app.api.schemas.memory import AppendMemoryRequest, SnapshotBody
from runtime_store_client import EventConflictError, SessionPurgedError

router = APIRouter(prefix="/v1/agents/{agent_id}/runs/{run_id}/memory", tags=["memory"])


@router.get(
    "",
    dependencies=[READ],
    response_model=SnapshotBody,
    operation_id="load-memory",
    summary="Load a run's memory",
    responses=problems(SessionPurgedError),
)
async def load_memory(agent_id: AgentIdPath, run_id: RunIdPath, request: Request) -> Response:
    """Every memory event of the agent's run, in append order; empty for an unknown run,
    `session_purged` for a run whose session was purged (its memory went with it)."""
    store, calls = services(request)
    return respond(SnapshotBody.of(await calls(store.load_memory, agent_id, run_id)))


@router.post(
    "",
    dependencies=[WRITE],
    operation_id="append-memory-events",
    summary="Append memory events",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses=problems(SessionPurgedError, EventConflictError),
)
async def append_memory_events(
    agent_id: AgentIdPath,
    run_id: RunIdPath,
    body: AppendMemoryRequest,
    request: Request,
    *,
    idempotency_key: Annotated[
        str,
        Header(
            alias="Idempotency-Key",
            description="Makes a retry of this append a no-op once one attempt was stored "
            "(memory events carry no event keys); the same key with other events is "
            "`event_conflict`. The Python client sends one per call.",
        ),
    ] = "",
) -> None:
    """Append the events atomically, in order; an empty list is a no-op."""
    store, calls = services(request)
    await calls(
        store.append_memory_events,
        agent_id,
        run_id,
        [event.contract() for event in body.events],
        idempotency_key=idempotency_key,
    )
