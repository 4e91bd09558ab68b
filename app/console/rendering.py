"""How the console renders: its security headers, templates, links, fragments and assets.

Templates are Jinja2 with autoescape on (payloads are untrusted model output); a fragment
calls the JSON API in-process (``app.console.api``) with the caller's token and renders
the answer, or the contract error it was refused with, as a problem with its status.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from typing import Annotated, Any, Final
from urllib.parse import urlencode

import jinja2
from fastapi import Query, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import (
    AuthError,
    PermissionDeniedError,
    RunStatus,
    SessionStatus,
    StoreError,
)
from runtime_store_client.errors import problem_title
from runtime_store_client.times import format_rfc3339

from .api import Api
from .views import human_bytes

#: Items per page of every console list.
PAGE_SIZE: Final = 50
#: Records per page of a run's timeline.
RECORDS_PAGE_SIZE: Final = 100
#: Runs counted for a purge confirmation (one API page; beyond: "more than").
PURGE_COUNT_LIMIT: Final = 1000
#: Findings listed above a transcript (each is also marked on its message).
MAX_LISTED_FINDINGS: Final = 50
RUN_STATUSES: Final = tuple(status.value for status in RunStatus)
SESSION_STATUSES: Final = tuple(status.value for status in SessionStatus)

#: Everything a console page loads comes from this service; no inline script or style,
#: and HTML may reach the DOM only through the console's own Trusted Types policy.
CONTENT_SECURITY_POLICY: Final = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types console",
    )
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: The stylesheet and the scripts: ``console.js`` (the core) first, the others build on it.
ASSETS: Final = {
    "console.css": "text/css",
    "console.js": "text/javascript",
    "console-actions.js": "text/javascript",
    "console-live.js": "text/javascript",
    "console-run-actions.js": "text/javascript",  # the run page's actions (issue 48)
    "console-times.js": "text/javascript",  # console lists (issue 33)
    "favicon.svg": "image/svg+xml",  # also answered at /favicon.ico (routes.root_router)
}

QueryList = Annotated[list[str], Query()]


# --- rendering -------------------------------------------------------------------------


def link(target: str, params: Mapping[str, str | Sequence[str]] | None = None) -> str:
    """A console URL with its query string; empty values left out."""
    pairs: list[tuple[str, str]] = []
    for key, value in (params or {}).items():
        values = [value] if isinstance(value, str) else list(value)
        pairs += [(key, item) for item in values if item]
    return f"{target}?{urlencode(pairs)}" if pairs else target


@functools.cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("app.console", "templates"),
        autoescape=True,  # every value is text: model output can never become markup
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals.update(
        link=link,
        asset_version=asset_version(),
        human_bytes=human_bytes,
        SessionStatus=SessionStatus,
    )
    environment.filters["time"] = format_rfc3339  # as the API writes times
    return environment


def render(
    template: str, context: Mapping[str, Any], *, status: int = 200, fragment: bool = False
) -> HTMLResponse:
    html = _environment().get_template(template).render(context)
    headers = dict(SECURITY_HEADERS)
    if fragment:  # data read with the caller's token: never kept by a cache
        headers["Cache-Control"] = "no-store"
    return HTMLResponse(html, status_code=status, headers=headers)


Loader = Callable[[Api], Awaitable[dict[str, Any]]]


async def fragment(request: Request, template: str, load: Loader) -> HTMLResponse:
    """A fragment from the API's answers, or the error a call was refused with as a
    readable problem (with its status)."""
    try:
        async with Api(request) as api:
            try:
                context = await load(api)
            except StoreError:
                if not api.sent:  # refused here: the API would have judged the token first
                    await api.check_token()
                raise
    except StoreError as refused:
        return render("problem.html", problem(refused), status=refused.status, fragment=True)
    return render(template, context, fragment=True)


def problem(error: StoreError) -> dict[str, Any]:
    """What the problem template shows of a contract error, and the hint it deserves."""
    return {
        "code": error.code,
        "status": error.status,
        "title": problem_title(error.status),
        "detail": error.message,
        "needs_token": error.code == AuthError.default_code,
        "denied": isinstance(error, PermissionDeniedError),
    }


def page(template: str, title: str, section: str, **context: Any) -> HTMLResponse:
    return render(template, {"title": title, "section": section, **context})


# --- assets ----------------------------------------------------------------------------


@functools.cache
def asset(name: str) -> bytes:
    return (resources.files("app.console") / "static" / name).read_bytes()


@functools.cache
def asset_version() -> str:
    digest = hashlib.sha256()
    for name in sorted(ASSETS):
        digest.update(asset(name))
    return digest.hexdigest()[:12]
