"""Waiting for a run (CONTRACT.md 13.4): answered when the run reaches the state asked
for, served by the live tail's wake-ups.

A finish or a suspension always appends a record (``run_completed``, ``run_suspended``),
which wakes the run's subscribers (``app.storage.live_tail.notifications``); the wait then reads
the run again. It subscribes before its first read, so a change committed between that
read and the wait is never missed; a safety re-read every ``safety_seconds`` bounds what a
lost wake-up costs.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Final

from fastapi import APIRouter, Query, Request, Response

from app.api.auth import READ, REVALIDATE_SECONDS, still_authorized
from app.api.deps import JsonFloat, RunIdPath, services
from app.api.problem_docs import problems
from app.api.render import respond
from app.api.schemas.runs import RunMetaBody
from app.observability.metrics import STREAMS_REFUSED
from app.storage import Notifications, Subscription
from runtime_store_client import (
    AuthError,
    InvalidArgumentError,
    RunMeta,
    RunNotFoundError,
    SessionPurgedError,
    UnavailableError,
    WaitUntil,
)

router = APIRouter()

#: The header of an answer given at the timeout, before the run got there.
WAIT_HEADER: Final = "Run-Wait"
MAX_WAIT_SECONDS: Final = 60.0
_LISTEN_WAIT_SECONDS: Final = 5.0


def _answer(meta: RunMeta, *, timed_out: bool) -> Response:
    response = respond(RunMetaBody.of(meta))
    response.headers["Cache-Control"] = "no-store"
    if timed_out:
        response.headers[WAIT_HEADER] = "timeout"
    return response


async def _wait_authorized(request: Request, subscription: Subscription, seconds: float) -> None:
    """Until the run's subscription is woken or ``seconds`` pass, confirming the token every
    ``REVALIDATE_SECONDS``: a revoked token's wait is refused (401) within the revocation
    bound, not answered later."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        await subscription.wait(max(0.0, min(deadline - loop.time(), REVALIDATE_SECONDS)))
        if subscription.was_woken or loop.time() >= deadline:
            return
        if not await still_authorized(request):
            raise AuthError("the bearer token was revoked while the wait went on")


@router.get(
    "/v1/runs/{run_id}/wait",
    tags=["runs"],
    dependencies=[READ],
    response_model=RunMetaBody,
    operation_id="wait-for-run",
    summary="Wait until a run finishes",
    responses={
        200: {
            "description": "The run's meta: once it reached the state asked for, or at the "
            "timeout (then with the header `Run-Wait: timeout`).",
            "headers": {
                WAIT_HEADER: {
                    "description": "`timeout` when the run had not reached the state.",
                    "schema": {"type": "string"},
                }
            },
        },
        **problems(RunNotFoundError, SessionPurgedError, InvalidArgumentError),
    },
)
async def wait_for_run(
    run_id: RunIdPath,
    request: Request,
    until: Annotated[
        WaitUntil,
        Query(
            description="`finished` (completed, failed, canceled) or `stopped` (also suspended)."
        ),
    ] = WaitUntil.FINISHED,
    timeout: Annotated[
        float,
        Query(ge=0, le=MAX_WAIT_SECONDS, description="Seconds to wait, at most 60.", examples=[5]),
        JsonFloat,  # "a number" (13.4): not Python's 1_0 or inf
    ] = 30.0,
) -> Response:
    """The run's meta as soon as it reaches `until` (at once if it already has); at the
    timeout its current meta with `Run-Wait: timeout`. Clients wait again after a timeout."""
    store, calls = services(request)
    meta = await calls(store.load_run, run_id)
    if until.reached(meta.status):
        return _answer(meta, timed_out=False)
    hub: Notifications = request.app.state.notifications
    subscription = hub.subscribe_run(run_id, meta.session_id)
    if subscription is None:
        STREAMS_REFUSED.labels("wait").inc()
        raise UnavailableError("this worker serves as many waits and streams as it allows; retry")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        await hub.ready(min(_LISTEN_WAIT_SECONDS, timeout))
        while True:
            meta = await calls(store.load_run, run_id)
            if until.reached(meta.status):
                return _answer(meta, timed_out=False)
            remaining = deadline - loop.time()
            if remaining <= 0:
                return _answer(meta, timed_out=True)
            await _wait_authorized(request, subscription, min(remaining, hub.safety_seconds))
    finally:
        subscription.close()
