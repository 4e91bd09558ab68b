"""The header's jump box: ``GET /console/go?id=…`` finds whether an ID is a session, a run,
or both, through the API with the caller's token.

The token lives in the tab's ``sessionStorage`` and only the console's script sends it, so
the script asks this route for JSON (``Accept: application/json``) and navigates itself;
a plain form GET (no script, or open mode) is redirected to the one match, or shown the
matches, or told that nothing matched, as a page.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from runtime_store_client import (
    RunNotFoundError,
    SessionNotFoundError,
    SessionPurgedError,
    StoreError,
)

from .api import Api
from .rendering import SECURITY_HEADERS, link, page, problem

router = APIRouter()


async def _matches(api: Api, wanted: str) -> list[dict[str, str]]:
    """Each kind of object ``wanted`` names, with its console page: a session, a run, or
    both (a run's ID may equal a session's). Purged and unknown IDs match nothing."""
    found: list[dict[str, str]] = []
    try:
        await api.store.load_session(wanted)
    except (SessionNotFoundError, SessionPurgedError):
        pass
    else:
        found.append({"kind": "session", "url": link("/console/session", {"session_id": wanted})})
    try:
        await api.store.load_run(wanted)
    except (RunNotFoundError, SessionPurgedError):
        pass
    else:
        found.append({"kind": "run", "url": link("/console/run", {"run_id": wanted})})
    return found


@router.get("/go")
async def go(request: Request, id: str = "") -> Response:  # the form field is "id"
    """Where an ID leads: JSON for the console's script, a redirect or a page otherwise."""
    wanted = id.strip()
    as_json = "application/json" in request.headers.get("accept", "")
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
    try:
        async with Api(request) as api:
            if not wanted:  # nothing to look up: the token still decides first
                await api.check_token()
                found = []
            else:
                found = await _matches(api, wanted)
    except StoreError as refused:
        described = problem(refused)
        if as_json:
            return JSONResponse(described, status_code=refused.status, headers=headers)
        shown = page("jump.html", "Go to an ID", "", wanted=wanted, problem=described, found=[])
        shown.status_code = refused.status
        return shown
    body: dict[str, Any] = {"id": wanted, "found": found}
    if as_json:
        return JSONResponse(body, headers=headers)
    if len(found) == 1:
        return RedirectResponse(found[0]["url"], status_code=303, headers=headers)
    result = page("jump.html", "Go to an ID", "", wanted=wanted, problem=None, found=found)
    if not found:
        result.status_code = 404
    return result
