"""Liveness and readiness, outside the public schema."""

from __future__ import annotations

import asyncio
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse

from app.api.auth import AuthMode
from app.api.deps import StoreCallsDep
from app.storage import readiness
from runtime_store_client import UnavailableError

router = APIRouter(include_in_schema=False)

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


@router.get("/readyz")
async def readyz(request: Request, calls: StoreCallsDep) -> JSONResponse:
    """The database answers and takes writes, its schema is at head and the auth setup is
    sound; else 503, within ``READY_WITHIN_SECONDS``."""
    try:
        async with asyncio.timeout(READY_WITHIN_SECONDS):
            ready, detail = await calls.blocking(readiness, request.app.state.engine)
            if ready:
                ready, detail = await calls(_auth_readiness, request.app.state.auth, detail)
    except TimeoutError:
        ready, detail = False, f"the database did not answer within {READY_WITHIN_SECONDS:g} s"
    return JSONResponse(
        {"status": "ready" if ready else "unavailable", "detail": detail},
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": "1"},
    )
