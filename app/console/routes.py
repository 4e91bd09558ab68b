"""The console's routes: page shells (``pages``), HTML fragments (``fragments``) and its
assets, under ``/console``.

A page is a shell with no data; the browser (``console.js``) then fetches the page's
fragments with the bearer token kept in the tab's ``sessionStorage``; each fragment calls
the JSON API in-process with that token and renders the answer, or the API's problem, with
Jinja2 (``rendering``). Identifiers travel in query strings, so any ID (slashes included)
makes a valid console URL. None of these routes is in the OpenAPI document.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

from . import fragments, jump, pages, timeline, transcript, tree, waterfall, webhooks
from .rendering import CONTENT_SECURITY_POLICY

router = APIRouter(prefix="/console", include_in_schema=False)


@router.get("")
async def console_home() -> RedirectResponse:
    """The console opens on its sessions list."""
    return RedirectResponse("/console/sessions", status_code=307)


#: Outside ``/console``: what every browser asks any site for, the console's icon (an SVG;
#: browsers go by its media type, not the name).
root_router = APIRouter(include_in_schema=False)


@root_router.get("/favicon.ico")
async def favicon() -> Response:
    return await pages.static_asset("favicon.svg")


router.include_router(pages.router)
router.include_router(fragments.router)
router.include_router(transcript.router)
router.include_router(timeline.router)  # the session timeline (issue 33)
router.include_router(jump.router)
router.include_router(tree.router)  # the run tree (issue 48)
router.include_router(waterfall.router)  # the run's waterfall (issue 48)
router.include_router(webhooks.router)

__all__ = ["CONTENT_SECURITY_POLICY", "root_router", "router"]
