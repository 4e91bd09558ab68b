"""Liveness and readiness, outside the public schema."""

from __future__ import annotations

import asyncio
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse

from app.api.auth import AuthMode
from app.api.deps import StoreCallsDep
from app.api.store_calls import StoreCalls
from app.observability import metrics
from app.storage import readiness
from runtime_store_client import UnavailableError

router = APIRouter(include_in_schema=False)

#: Seconds ``/readyz`` waits for the read replicas not asked lately to answer: one that
#: does not answer never holds readiness up longer (its check ends in the background, and
#: a later ``/readyz`` reports what it found).
REPLICA_CHECK_WAIT_SECONDS: Final = 0.25
#: The replica checks still running, kept until they end.
_checks: set[asyncio.Future[None]] = set()
#: Longest ``/readyz`` takes: a primary that stopped answering (a failover, CONTRACT.md
#: 16) is "unavailable" by then, never a hang; its check ends on its own later (cut by
#: the read deadline's probe).
READY_WITHIN_SECONDS: Final = 5.0


@router.get("/")
async def root() -> RedirectResponse:
    """A browser pointed at the service lands on the API docs."""
    return RedirectResponse("/docs", status_code=307)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is alive; touches nothing."""
    return {"status": "ok"}


def _auth_readiness(auth: AuthMode, detail: str) -> tuple[bool, str]:
    """Not ready while active tokens exist but the service runs open (no token key)."""
    try:
        problem = auth.misconfiguration()
    except UnavailableError:
        return False, "database unreachable"
    return (False, problem) if problem else (True, detail)


def _ended(check: asyncio.Future[None]) -> None:
    _checks.discard(check)
    if not check.cancelled():
        check.exception()  # retrieved: a check that failed is reported by its replica's state


async def _replica_states(calls: StoreCalls) -> list[dict[str, str]] | None:
    """What each read replica is (CONTRACT.md 14), those not asked lately asked again;
    ``None`` without read replicas."""
    replica_sets = metrics.replica_sets()
    if not replica_sets:
        return None
    started = []
    for replica_set in replica_sets:
        check = asyncio.ensure_future(calls.unbound(replica_set.check_stale))
        _checks.add(check)
        check.add_done_callback(_ended)
        started.append(check)
    await asyncio.wait(started, timeout=REPLICA_CHECK_WAIT_SECONDS)
    return [status for replica_set in replica_sets for status in replica_set.statuses()]


@router.get("/readyz")
async def readyz(request: Request, calls: StoreCallsDep) -> JSONResponse:
    """The database answers and takes writes, its schema is at head and the auth setup is
    sound; else 503, within ``READY_WITHIN_SECONDS``. With read replicas the body names
    each and its state (``ok``, ``unreachable``, ``not_in_recovery``, ``failing``,
    ``unknown``): a replica that cannot serve is skipped (its reads go to the primary), so
    it never makes the service unready."""
    try:
        async with asyncio.timeout(READY_WITHIN_SECONDS):
            ready, detail = await calls.blocking(readiness, request.app.state.engine)
            if ready:
                ready, detail = await calls(_auth_readiness, request.app.state.auth, detail)
    except TimeoutError:
        ready, detail = False, f"the database did not answer within {READY_WITHIN_SECONDS:g} s"
    body: dict[str, Any] = {"status": "ready" if ready else "unavailable", "detail": detail}
    replicas = await _replica_states(calls)
    if replicas is not None:
        body["replicas"] = replicas
    return JSONResponse(
        body,
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": "1"},
    )
