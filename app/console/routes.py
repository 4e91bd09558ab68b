"""The console's routes: page shells, HTML fragments, and its two assets.

A page (``/console/...``) is a shell with no data: layout, navigation and the filter form
filled from its query string. The browser (``console.js``) then fetches the page's
fragments (``/console/fragments/...``) with the bearer token kept in the tab's
``sessionStorage``; each fragment calls the JSON API in-process (``app.console.api``) with
that token and renders the answer, or the API's problem, with Jinja2 (autoescaped:
payloads are untrusted model output). Identifiers travel in query strings, so any ID
(slashes included) makes a valid console URL. None of these routes is in the OpenAPI
document.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from typing import Annotated, Any, Final
from urllib.parse import urlencode

import jinja2
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .api import Api, ApiError, path
from .views import (
    FINISHED,
    RecordView,
    api_time,
    base64_size,
    conversation,
    findings_by_message,
    human_bytes,
    run_facts,
    thinking_used,
)

router = APIRouter(prefix="/console", include_in_schema=False)

#: Items per page of every console list.
PAGE_SIZE: Final = 50
#: Records per page of a run's timeline.
RECORDS_PAGE_SIZE: Final = 100
#: Runs counted for a purge confirmation (one API page; beyond: "more than").
PURGE_COUNT_LIMIT: Final = 1000
#: Findings listed above a transcript (each is also marked on its message).
MAX_LISTED_FINDINGS: Final = 50
RUN_STATUSES: Final = ("running", "suspended", "completed", "failed", "canceled")
SESSION_STATUSES: Final = ("active", "ended")

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
ASSETS: Final = {"console.css": "text/css", "console.js": "text/javascript"}

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
    environment.globals.update(link=link, asset_version=asset_version(), human_bytes=human_bytes)
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
    """A fragment from the API's answers, or the API's problem as a readable message
    (with the problem's status)."""
    try:
        async with Api(request) as api:
            context = await load(api)
    except ApiError as refused:
        return render(
            "problem.html",
            {"problem": refused.problem},
            status=refused.problem.status,
            fragment=True,
        )
    return render(template, context, fragment=True)


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


@router.get("/static/{name}")
async def static_asset(name: str) -> Response:
    """The stylesheet and the script (versioned by content in the pages' links)."""
    media_type = ASSETS.get(name)
    if media_type is None:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(
        asset(name),
        media_type=media_type,
        headers={
            "Cache-Control": "public, max-age=86400, immutable",
            "X-Content-Type-Options": "nosniff",
        },
    )


# --- run filters -----------------------------------------------------------------------

RunFilters = dict[str, str | list[str]]


def run_filters(
    status: QueryList = [],  # noqa: B006 - FastAPI copies query defaults
    label: QueryList = [],  # noqa: B006
    agent_id: str = "",
    session_id: str = "",
    parent_run_id: str = "",
    started_after: str = "",
    started_before: str = "",
) -> RunFilters:
    """The search API's run filters from a console query string (empty entries dropped),
    as the form shows them and as links carry them."""
    return {
        "status": [item for item in status if item],
        "agent_id": agent_id,
        "label": [item for item in label if item],
        "session_id": session_id,
        "parent_run_id": parent_run_id,
        "started_after": started_after,
        "started_before": started_before,
    }


RunFiltersDep = Annotated[RunFilters, Depends(run_filters)]


# --- pages -----------------------------------------------------------------------------


@router.get("")
async def console_home() -> RedirectResponse:
    """The console opens on its sessions list."""
    return RedirectResponse("/console/sessions", status_code=307)


@router.get("/sessions")
async def sessions_page(
    status: str = "", created_after: str = "", created_before: str = "", cursor: str = ""
) -> HTMLResponse:
    """Sessions, newest first, filtered by status and creation time."""
    filters = {"status": status, "created_after": created_after, "created_before": created_before}
    return page(
        "sessions.html",
        "Sessions",
        "sessions",
        filters=filters,
        statuses=SESSION_STATUSES,
        data=link("/console/fragments/sessions", {**filters, "cursor": cursor}),
        paged=bool(cursor),
    )


@router.get("/session")
async def session_page(session_id: str = "", cursor: str = "") -> HTMLResponse:
    """One session: its status and times, its runs, the admin actions."""
    return page(
        "session.html",
        f"Session {session_id}",
        "sessions",
        session_id=session_id,
        data=link("/console/fragments/session", {"session_id": session_id, "cursor": cursor}),
    )


@router.get("/runs")
async def runs_page(filters: RunFiltersDep, cursor: str = "") -> HTMLResponse:
    """Runs of every session, newest first, with the search API's filters."""
    label = list(filters["label"])  # always a list: run_filters builds it
    labels = [*label, "", ""][: max(2, len(label))]
    return page(
        "runs.html",
        "Runs",
        "runs",
        filters=filters,
        labels=labels,
        statuses=RUN_STATUSES,
        data=link("/console/fragments/runs", {**filters, "cursor": cursor}),
        paged=bool(cursor),
    )


@router.get("/run")
async def run_page(
    run_id: str = "", records_cursor: str = "", children_cursor: str = ""
) -> HTMLResponse:
    """One run: its meta, child runs and records, followed live while it runs."""
    return page(
        "run.html",
        f"Run {run_id}",
        "runs",
        run_id=run_id,
        meta=link("/console/fragments/run", {"run_id": run_id}),
        children=link(
            "/console/fragments/run/children",
            {"run_id": run_id, "cursor": children_cursor, "records_cursor": records_cursor},
        ),
        records=link(
            "/console/fragments/run/records",
            {"run_id": run_id, "cursor": records_cursor, "children_cursor": children_cursor},
        ),
    )


@router.get("/run/transcript")
async def transcript_page(
    run_id: str = "", cursor: str = "", offset: int = 0, thinking: str = ""
) -> HTMLResponse:
    """A run's transcript as a conversation, with the validators' findings."""
    return page(
        "transcript.html",
        f"Transcript of {run_id}",
        "runs",
        run_id=run_id,
        thinking=thinking,
        data=link(
            "/console/fragments/run/transcript",
            {"run_id": run_id, "cursor": cursor, "offset": str(offset), "thinking": thinking},
        ),
    )


# --- fragments -------------------------------------------------------------------------


@router.get("/fragments/sessions")
async def sessions_fragment(
    request: Request,
    status: str = "",
    created_after: str = "",
    created_before: str = "",
    cursor: str = "",
) -> HTMLResponse:
    """A page of ``GET /v1/sessions``."""
    filters = {"status": status, "created_after": created_after, "created_before": created_before}

    async def load(api: Api) -> dict[str, Any]:
        body = await api.get(
            "/v1/sessions",
            {
                "status": status,
                "created_after": api_time(created_after),
                "created_before": api_time(created_before),
                "cursor": cursor,
                "limit": str(PAGE_SIZE),
            },
        )
        return {
            "sessions": body["sessions"],
            "next": link("/console/sessions", {**filters, "cursor": body["next_cursor"]})
            if body["next_cursor"]
            else "",
            "first": link("/console/sessions", filters) if cursor else "",
        }

    return await fragment(request, "fragments/sessions.html", load)


@router.get("/fragments/session")
async def session_fragment(
    request: Request, session_id: str = "", cursor: str = ""
) -> HTMLResponse:
    """``GET /v1/sessions/{id}`` and a page of its runs (``GET /v1/runs?session_id=``)."""

    async def load(api: Api) -> dict[str, Any]:
        session = await api.get(path("v1", "sessions", session_id))
        runs = await api.get(
            "/v1/runs", {"session_id": session_id, "cursor": cursor, "limit": str(PAGE_SIZE)}
        )
        return {
            "session": session,
            "runs": runs["runs"],
            "next": link(
                "/console/session", {"session_id": session_id, "cursor": runs["next_cursor"]}
            )
            if runs["next_cursor"]
            else "",
            "first": link("/console/session", {"session_id": session_id}) if cursor else "",
        }

    return await fragment(request, "fragments/session.html", load)


@router.get("/fragments/session/purge")
async def purge_fragment(request: Request, session_id: str = "") -> HTMLResponse:
    """What purging the session deletes: the confirmation's text."""

    async def load(api: Api) -> dict[str, Any]:
        session = await api.get(path("v1", "sessions", session_id))
        runs = await api.get(
            "/v1/runs", {"session_id": session_id, "limit": str(PURGE_COUNT_LIMIT)}
        )
        running = [run for run in runs["runs"] if run["status"] == "running"]
        return {
            "session": session,
            "run_count": len(runs["runs"]),
            "more": bool(runs["next_cursor"]),
            "running": running,
        }

    return await fragment(request, "fragments/purge.html", load)


@router.get("/fragments/runs")
async def runs_fragment(request: Request, filters: RunFiltersDep, cursor: str = "") -> HTMLResponse:
    """A page of ``GET /v1/runs`` with the page's filters."""

    async def load(api: Api) -> dict[str, Any]:
        params = [
            (key, api_time(value) if key.startswith("started_") else value)
            for key, values in filters.items()
            for value in ([values] if isinstance(values, str) else values)
        ]
        params += [("cursor", cursor), ("limit", str(PAGE_SIZE))]
        body = await api.get("/v1/runs", params)
        return {
            "runs": body["runs"],
            "next": link("/console/runs", {**filters, "cursor": body["next_cursor"]})
            if body["next_cursor"]
            else "",
            "first": link("/console/runs", filters) if cursor else "",
        }

    return await fragment(request, "fragments/runs.html", load)


@router.get("/fragments/run")
async def run_fragment(request: Request, run_id: str = "") -> HTMLResponse:
    """``GET /v1/runs/{id}``, its checkpoint, and the predecessor and outcome its
    lifecycle records name (from the first page of its records)."""

    async def load(api: Api) -> dict[str, Any]:
        run = await api.get(path("v1", "runs", run_id))
        records = await api.get(
            path("v1", "runs", run_id, "records"), {"limit": str(RECORDS_PAGE_SIZE)}
        )
        checkpoint = None
        try:
            found = await api.get(path("v1", "runs", run_id, "suspension"))
        except ApiError as missing:
            if missing.problem.code != "run_suspension_not_found":
                raise
        else:
            checkpoint = {"id": found["id"], "size": base64_size(found["data"])}
        return {
            "run": run,
            "checkpoint": checkpoint,
            "finished": run["status"] in FINISHED,
            **run_facts(records["records"]),
        }

    return await fragment(request, "fragments/run.html", load)


@router.get("/fragments/run/children")
async def children_fragment(
    request: Request, run_id: str = "", cursor: str = "", records_cursor: str = ""
) -> HTMLResponse:
    """A page of the run's children (``GET /v1/runs?parent_run_id=``)."""

    async def load(api: Api) -> dict[str, Any]:
        body = await api.get(
            "/v1/runs", {"parent_run_id": run_id, "cursor": cursor, "limit": str(PAGE_SIZE)}
        )
        here = {"run_id": run_id, "records_cursor": records_cursor}
        return {
            "runs": body["runs"],
            "next": link("/console/run", {**here, "children_cursor": body["next_cursor"]})
            + "#children"
            if body["next_cursor"]
            else "",
            "first": link("/console/run", here) + "#children" if cursor else "",
        }

    return await fragment(request, "fragments/children.html", load)


@router.get("/fragments/run/records")
async def records_fragment(
    request: Request, run_id: str = "", cursor: str = "", children_cursor: str = ""
) -> HTMLResponse:
    """A page of ``GET /v1/runs/{id}/records`` as a timeline; on its last page, while the
    run may still write, the address of its live tail for the browser to follow."""

    async def load(api: Api) -> dict[str, Any]:
        run = await api.get(path("v1", "runs", run_id))
        body = await api.get(
            path("v1", "runs", run_id, "records"),
            {"cursor": cursor, "limit": str(RECORDS_PAGE_SIZE)},
        )
        records = [RecordView.of(record) for record in body["records"]]
        here = {"run_id": run_id, "children_cursor": children_cursor}
        last = records[-1].id if records else cursor
        follow = not body["next_cursor"] and run["status"] not in FINISHED
        return {
            "records": records,
            "status": run["status"],
            "tail": path("v1", "runs", run_id, "records", "stream") if follow else "",
            "tail_cursor": last,
            "next": link("/console/run", {**here, "records_cursor": body["next_cursor"]})
            + "#records"
            if body["next_cursor"]
            else "",
            "first": link("/console/run", here) + "#records" if cursor else "",
        }

    return await fragment(request, "fragments/records.html", load)


@router.get("/fragments/run/transcript")
async def transcript_fragment(
    request: Request, run_id: str = "", cursor: str = "", offset: int = 0, thinking: str = ""
) -> HTMLResponse:
    """A page of ``GET /v1/runs/{id}/transcript`` as a conversation, with the findings
    of the whole transcript's checks (``?validate=planner`` and ``?validate=bedrock``)
    marked on the messages they name."""

    async def load(api: Api) -> dict[str, Any]:
        transcript_path = path("v1", "runs", run_id, "transcript")
        body = await api.get(transcript_path, {"cursor": cursor})
        messages = body["messages"]
        thinking_on = thinking == "on" if thinking else thinking_used(messages)
        checks: dict[str, list[dict[str, Any]]] = {}
        notes: dict[str, str] = {}
        for validator, params in (
            ("planner", {"validate": "planner"}),
            ("bedrock", {"validate": "bedrock", "thinking": "true" if thinking_on else "false"}),
        ):
            # limit=1: the check reads the whole transcript, the page it returns is unused.
            problem = await api.problem_or_none(transcript_path, {**params, "limit": "1"})
            if problem is None:
                checks[validator] = []
            elif problem.code == "invalid_transcript":
                checks[validator] = problem.violations
            else:
                notes[validator] = f"{problem.code}: {problem.detail}"
        here = {"run_id": run_id, "thinking": thinking}
        findings = findings_by_message(checks)
        return {
            "run_id": run_id,
            "messages": conversation(messages, offset, findings),
            "whole": findings.get(-1, []),
            "listed": sorted(
                (index, finding)
                for index, found in findings.items()
                if index >= 0
                for finding in found
            )[:MAX_LISTED_FINDINGS],
            "shown": range(offset, offset + len(messages)),
            "checks": checks,
            "notes": notes,
            "thinking_on": thinking_on,
            "next": link(
                "/console/run/transcript",
                {**here, "cursor": body["next_cursor"], "offset": str(offset + len(messages))},
            )
            if body["next_cursor"]
            else "",
            "first": link("/console/run/transcript", here) if cursor else "",
        }

    return await fragment(request, "fragments/transcript.html", load)
