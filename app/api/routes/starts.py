"""The five starts (CONTRACT.md 3.3-3.6, 12.1, 12.2): ``POST /v1/runs/root-starts``,
``child-starts``, ``one-shot-starts``, ``one-shot-child-starts``, ``synchronous-starts``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from app.api.auth import WRITE
from app.api.deps import services
from app.api.problem_docs import problems
from app.api.render import (
    respond,
)
from app.api.schemas.starts import (
    ChildRunStartRequest,
    ChildRunStartResultBody,
    OneShotChildRunStartRequest,
    OneShotChildRunStartResultBody,
    OneShotRunStartRequest,
    OneShotRunStartResultBody,
    RootRunStartRequest,
    RootRunStartResultBody,
    SynchronousRunStartRequest,
)
from runtime_store_client import (
    EventConflictError,
    RunConflictError,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunSessionMismatchError,
    SeedConflictError,
    SeedNotFoundError,
    SeedNotPublishedError,
    SessionNotFoundError,
    SessionPurgedError,
)

router = APIRouter(prefix="/v1/runs")


#: The seed check of every start (CONTRACT.md 15.5): with ``seed_end_id``, its seed must be
#: the run ID's published one; without, a new run ID must not be prepared for a seed.
_SEED_PROBLEMS = (SeedNotFoundError, SeedNotPublishedError, SeedConflictError)
_START_PROBLEMS = (
    RunRecordOwnerMismatchError,
    RunConflictError,
    EventConflictError,
    SessionNotFoundError,
    RunNotFoundError,
    SessionPurgedError,
    *_SEED_PROBLEMS,
)


@router.post(
    "/root-starts",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=RootRunStartResultBody,
    operation_id="start-root-run",
    summary="Start a root run",
    responses=problems(*_START_PROBLEMS),
)
async def start_root_run(body: RootRunStartRequest, request: Request) -> Response:
    """Store a root run of a session with its `run_started` record, in one transaction.

    In an active session the outcome is `proceed` (status `running`). In an ended session the
    run is created already canceled (`stop`, reason `session_ended`) with the `canceled`
    record after `run_started`. An exact retry returns the original record IDs with
    `inserted = false` and the original outcome; a changed retry is `run_conflict`. A
    continuation (`predecessor_run_id`) needs a suspended predecessor with the same session,
    agent and parent.

    `request_digest` (64 lowercase hex, optional; every engine start takes it) is stored by
    the run's first start and compared first on every retry: another digest, or one missing
    on either side, is `run_conflict`. A run no longer `running` retried with its digest
    answers its original outcome, status and record IDs even when the retry proposes a new
    `started_at` (and record times); every other field must be the original's.

    `run.seed_end_id` (every start takes it; absent, null or "" for none) attaches the run
    ID's published seed: its history end, else `seed_not_found`, `seed_not_published` or
    `seed_conflict`. A run ID prepared for a seed cannot start without it (`seed_conflict`).
    """
    store, calls = services(request)
    return respond(
        RootRunStartResultBody.of(
            await calls(
                store.start_root_run,
                body.run.contract(),
                body.started.contract(),
                body.canceled.contract(),
                request_digest=body.request_digest,
            )
        )
    )


@router.post(
    "/child-starts",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=ChildRunStartResultBody,
    operation_id="start-child-run",
    summary="Start a child run",
    responses=problems(*_START_PROBLEMS, RunNotActiveError, RunSessionMismatchError),
)
async def start_child_run(body: ChildRunStartRequest, request: Request) -> Response:
    """Store the `child_run_linked` record on the parent, then the child's `run_started`.

    A new child needs a running parent of the same session (`run_not_active`,
    `run_session_mismatch`); an exact retry of an accepted child stays valid after the
    parent stopped. Outcomes, retries and request digests as for root starts.

    A child continuation may name another parent than its predecessor had (the successor
    of that parent, resumed): it must be running in the same session, and the new link must
    repeat the predecessor's link's `ToolName`, `ToolCallID` and child agent and be written
    by the predecessor's parent's agent (else `run_conflict` naming the fact).
    """
    store, calls = services(request)
    return respond(
        ChildRunStartResultBody.of(
            await calls(
                store.start_child_run,
                body.run.contract(),
                body.parent_linked.contract(),
                body.started.contract(),
                body.canceled.contract(),
                request_digest=body.request_digest,
            )
        )
    )


@router.post(
    "/one-shot-starts",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=OneShotRunStartResultBody,
    operation_id="start-one-shot-run",
    summary="Start a sessionless run",
    responses=problems(
        RunRecordOwnerMismatchError,
        RunConflictError,
        EventConflictError,
        SessionPurgedError,
        *_SEED_PROBLEMS,
    ),
)
async def start_one_shot_run(body: OneShotRunStartRequest, request: Request) -> Response:
    """Store a sessionless run (outcome `proceed`) with its `run_started` record."""
    store, calls = services(request)
    return respond(
        OneShotRunStartResultBody.of(
            await calls(
                store.start_one_shot_run,
                body.run.contract(),
                body.started.contract(),
                request_digest=body.request_digest,
            )
        )
    )


@router.post(
    "/synchronous-starts",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=OneShotRunStartResultBody,
    operation_id="start-synchronous-run",
    summary="Start a synchronous run",
    responses=problems(
        RunRecordOwnerMismatchError,
        RunConflictError,
        EventConflictError,
        SessionPurgedError,
        *_SEED_PROBLEMS,
    ),
)
async def start_synchronous_run(body: SynchronousRunStartRequest, request: Request) -> Response:
    """Store a run for an inline callback that no workflow engine accepted (CONTRACT.md
    12.2): sessionless and parentless, `running` with its `run_started` record, outcome
    `proceed`, `start_kind` `synchronous`. It takes no request digest. A run ID is for ever
    engine-started or synchronous: starting it with the other kind is `run_conflict`. A
    retry must repeat the exact command, time included, in every status (any change is
    `run_conflict`); it answers the original record ID and the run's current status."""
    store, calls = services(request)
    return respond(
        OneShotRunStartResultBody.of(
            await calls(store.start_synchronous_run, body.run.contract(), body.started.contract())
        )
    )


@router.post(
    "/one-shot-child-starts",
    tags=["runs"],
    dependencies=[WRITE],
    response_model=OneShotChildRunStartResultBody,
    operation_id="start-one-shot-child-run",
    summary="Start a sessionless child run",
    responses=problems(*_START_PROBLEMS, RunNotActiveError, RunSessionMismatchError),
)
async def start_one_shot_child_run(body: OneShotChildRunStartRequest, request: Request) -> Response:
    """Link a sessionless child from its running sessionless parent and start it."""
    store, calls = services(request)
    return respond(
        OneShotChildRunStartResultBody.of(
            await calls(
                store.start_one_shot_child_run,
                body.run.contract(),
                body.parent_linked.contract(),
                body.started.contract(),
                request_digest=body.request_digest,
            )
        )
    )
