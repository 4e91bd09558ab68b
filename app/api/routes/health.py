"""Liveness and readiness, outside the public schema."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse

from app.api.deps import OffloadDep
from app.storage.migrate import readiness

router = APIRouter(include_in_schema=False)


@router.get("/")
async def root() -> RedirectResponse:
    """A browser pointed at the service lands on the API docs."""
    return RedirectResponse("/docs", status_code=307)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is alive; touches nothing."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(request: Request, offload: OffloadDep) -> JSONResponse:
    """The database answers and its schema is at head; else 503."""
    ready, detail = await offload(readiness, request.app.state.engine)
    return JSONResponse(
        {"status": "ready" if ready else "unavailable", "detail": detail},
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": "1"},
    )
