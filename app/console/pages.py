"""The console's pages: shells with no data (layout, navigation, the filter form filled
from the query string) whose fragments ``console.js`` then fetches; and its assets."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, Response

from .rendering import (
    ASSETS,
    RUN_STATUSES,
    SESSION_STATUSES,
    QueryList,
    asset,
    link,
    page,
)
from .run_state import RunStateDep

router = APIRouter()


@router.get("/static/{name}")
async def static_asset(name: str) -> Response:
    """The stylesheet and the scripts (versioned by content in the pages' links)."""
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


@dataclass(frozen=True)
class RunFilters:
    """The search API's run filters as a console query string carries them (empty
    entries dropped): as the form shows them and as links carry them (``query``)."""

    status: list[str]
    agent_id: str
    label: list[str]
    session_id: str
    parent_run_id: str
    started_after: str
    started_before: str

    def query(self) -> dict[str, str | list[str]]:
        return asdict(self)


def run_filters(
    status: QueryList = [],  # noqa: B006 - FastAPI copies query defaults
    label: QueryList = [],  # noqa: B006
    agent_id: str = "",
    session_id: str = "",
    parent_run_id: str = "",
    started_after: str = "",
    started_before: str = "",
) -> RunFilters:
    """The run filters of a console query string."""
    return RunFilters(
        status=[item for item in status if item],
        agent_id=agent_id,
        label=[item for item in label if item],
        session_id=session_id,
        parent_run_id=parent_run_id,
        started_after=started_after,
        started_before=started_before,
    )


RunFiltersDep = Annotated[RunFilters, Depends(run_filters)]


# --- pages -----------------------------------------------------------------------------


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
    labels = [*filters.label, "", ""][: max(2, len(filters.label))]
    return page(
        "runs.html",
        "Runs",
        "runs",
        filters=filters,
        labels=labels,
        statuses=RUN_STATUSES,
        data=link("/console/fragments/runs", {**filters.query(), "cursor": cursor}),
        paged=bool(cursor),
    )


@router.get("/run")
async def run_page(state: RunStateDep) -> HTMLResponse:
    """One run: its meta and checkpoint, its tree, a waterfall of its records' times, and
    its records (in either order, its latest, filtered by type), followed live while it
    runs; the admin actions on it. The whole view is in the URL (``RunState``)."""
    return page(
        "run.html",
        f"Run {state.run_id}",
        "runs",
        run_id=state.run_id,
        meta=link("/console/fragments/run", {"run_id": state.run_id}),
        children=state.fragment("children"),
        timeline=state.fragment("timeline"),
        records=link(
            "/console/fragments/run/records",
            {
                "run_id": state.run_id,
                "cursor": state.records_cursor,
                "children_cursor": state.children_cursor,
                "timeline_cursor": state.timeline_cursor,
                "order": state.records_order,
                "before": state.records_before,
                "latest": state.records_latest,
                "type": list(state.records_type),
            },
        ),
    )


@router.get("/run/transcript")
async def transcript_page(
    run_id: str = "", through: str = "", after: str = "", offset: int = 0, thinking: str = ""
) -> HTMLResponse:
    """A run's transcript as a conversation, with the validators' findings: a prefix of
    its records (up to ``through``, by default the run's last), page by page."""
    return page(
        "transcript.html",
        f"Transcript of {run_id}",
        "runs",
        run_id=run_id,
        thinking=thinking,
        data=link(
            "/console/fragments/run/transcript",
            {
                "run_id": run_id,
                "through": through,
                "after": after,
                "offset": str(offset),
                "thinking": thinking,
            },
        ),
    )
