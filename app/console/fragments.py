"""The console's fragments (``/console/fragments/...``): each calls the JSON API in-process
with the caller's token and renders its answer as HTML, or its problem."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import (
    RunPage,
    RunStatus,
    RunSuspensionNotFoundError,
    SessionStatus,
    StatusCounts,
)
from runtime_store_client.filters import label_filters

from . import filters as read
from .api import Api, path
from .checkpoints import summary
from .lists import status_chips
from .pages import RunFiltersDep
from .rendering import (
    PAGE_SIZE,
    PURGE_COUNT_LIMIT,
    RECORDS_PAGE_SIZE,
    RUN_STATUSES,
    SESSION_STATUSES,
    QueryList,
    fragment,
    link,
)
from .run_state import PositionsDep, RunState
from .timeline import run_timeline, wanted_types
from .times import Clock
from .transcript import last_record_id
from .views import RecordView, record_types, run_facts
from .waterfall import record_link

router = APIRouter()


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
        after = read.time(created_after, "created_after")
        before = read.time(created_before, "created_before")
        body = await api.store.list_sessions(
            statuses=read.statuses(SessionStatus, [status], "status"),
            created_after=after,
            created_before=before,
            cursor=cursor,
            limit=PAGE_SIZE,
        )
        counts = await api.store.count_sessions(created_after=after, created_before=before)
        records = await api.store.count_records(session_ids=[s.id for s in body.sessions])
        return {
            "sessions": body.sessions,
            "next": link("/console/sessions", {**filters, "cursor": body.next_cursor})
            if body.next_cursor
            else "",
            "first": link("/console/sessions", filters) if cursor else "",
            "status_chips": status_chips(
                counts,
                SESSION_STATUSES,
                [status],
                lambda chosen: link("/console/sessions", {**filters, "status": chosen}),
            ),
            "record_counts": records.sessions,
            "clock": Clock.current(),
        }

    return await fragment(request, "fragments/sessions.html", load)


@router.get("/fragments/session")
async def session_fragment(
    request: Request, session_id: str = "", cursor: str = ""
) -> HTMLResponse:
    """``GET /v1/sessions/{id}`` and a page of its runs (``GET /v1/runs?session_id=``)."""

    async def load(api: Api) -> dict[str, Any]:
        session = await api.store.load_session(session_id)
        runs = await api.store.search_runs(session_id=session_id, cursor=cursor, limit=PAGE_SIZE)
        counts = await api.store.count_runs(session_id=session_id)
        records = await api.store.count_records(
            run_ids=[run.run_id for run in runs.runs], session_ids=[session_id]
        )
        here = {"session_id": session_id}
        return {
            "session": session,
            "runs": runs.runs,
            "next": link("/console/session", {**here, "cursor": runs.next_cursor})
            if runs.next_cursor
            else "",
            "first": link("/console/session", here) if cursor else "",
            "status_chips": status_chips(
                counts,
                RUN_STATUSES,
                [],
                lambda chosen: link("/console/runs", {**here, "status": chosen}),
            ),
            "record_counts": records.runs,
            "session_records": records.sessions,
            "clock": Clock.current(),
        }

    return await fragment(request, "fragments/session.html", load)


@router.get("/fragments/session/purge")
async def purge_fragment(request: Request, session_id: str = "") -> HTMLResponse:
    """What purging the session deletes: the confirmation's text."""

    async def load(api: Api) -> dict[str, Any]:
        session = await api.store.load_session(session_id)
        runs = await api.store.search_runs(session_id=session_id, limit=PURGE_COUNT_LIMIT)
        running = [run for run in runs.runs if run.status is RunStatus.RUNNING]
        return {
            "session": session,
            "run_count": len(runs.runs),
            "more": bool(runs.next_cursor),
            "running": running,
        }

    return await fragment(request, "fragments/purge.html", load)


@router.get("/fragments/runs")
async def runs_fragment(request: Request, filters: RunFiltersDep, cursor: str = "") -> HTMLResponse:
    """A page of ``GET /v1/runs`` with the page's filters."""

    async def load(api: Api) -> dict[str, Any]:
        statuses = read.statuses(RunStatus, filters.status, "status")
        started_after = read.time(filters.started_after, "started_after")
        started_before = read.time(filters.started_before, "started_before")
        labels = label_filters(filters.label)
        if labels is None:  # two values asked for one key: no run matches (as the API says)
            await api.check_token()
            body = RunPage(runs=[])
            counts = StatusCounts(counts={}, limit=1)
        else:
            body = await api.store.search_runs(
                statuses=statuses,
                agent_id=filters.agent_id,
                session_id=filters.session_id,
                parent_run_id=filters.parent_run_id,
                labels=labels,
                started_after=started_after,
                started_before=started_before,
                cursor=cursor,
                limit=PAGE_SIZE,
            )
            counts = await api.store.count_runs(
                agent_id=filters.agent_id,
                session_id=filters.session_id,
                parent_run_id=filters.parent_run_id,
                labels=labels,
                started_after=started_after,
                started_before=started_before,
            )
        records = await api.store.count_records(run_ids=[run.run_id for run in body.runs])
        return {
            "runs": body.runs,
            "next": link("/console/runs", {**filters.query(), "cursor": body.next_cursor})
            if body.next_cursor
            else "",
            "first": link("/console/runs", filters.query()) if cursor else "",
            "status_chips": status_chips(
                counts,
                RUN_STATUSES,
                filters.status,
                lambda chosen: link("/console/runs", {**filters.query(), "status": chosen}),
            ),
            "record_counts": records.runs,
            "clock": Clock.current(),
        }

    return await fragment(request, "fragments/runs.html", load)


@router.get("/fragments/run")
async def run_fragment(request: Request, run_id: str = "") -> HTMLResponse:
    """``GET /v1/runs/{id}``, its checkpoint (summarised with the record that suspended
    it), its record count and duration, the predecessor and outcome its lifecycle records
    name (its first and last records), and the admin actions on it and its session."""

    async def load(api: Api) -> dict[str, Any]:
        run = await api.store.load_run(run_id)
        records = await api.store.list_run_records(run_id, limit=RECORDS_PAGE_SIZE)
        seen = records.records
        count = len(seen)
        if records.next_cursor:  # a long run: its last record by ID (see ``timeline``)
            count = int(await last_record_id(api, run_id))
            if run.status.is_terminal:  # its outcome or suspension is in its last record
                seen = [
                    *seen,
                    *(await api.store.list_run_records(run_id, str(count - 1), 1)).records,
                ]
        suspension = None
        try:
            found = await api.store.load_run_suspension(run_id)
        except RunSuspensionNotFoundError:
            pass
        else:
            suspension = summary(found, seen)
        return {
            "run": run,
            "checkpoint": suspension,
            "suspended_record": record_link(RunState(run_id=run_id), suspension.record_id)
            if suspension is not None and suspension.record_id
            else "",
            "finished": run.status.is_finished,
            "record_count": count,
            "duration": Clock.current().run_duration(run) if run.status.is_finished else "",
            "labels_json": json.dumps(run.labels, ensure_ascii=False, sort_keys=True),
            "session_status": (await api.store.load_session_status(run.session_id)).value
            if run.session_id
            else "",
            **run_facts(seen),
        }

    return await fragment(request, "fragments/run.html", load)


@router.get("/fragments/run/records")
async def records_fragment(
    request: Request,
    kept: PositionsDep,
    run_id: str = "",
    cursor: str = "",
    order: str = "",
    before: str = "",
    latest: str = "",
    type: QueryList = [],  # noqa: B006 - the query's name; FastAPI copies defaults
) -> HTMLResponse:
    """A page of ``GET /v1/runs/{id}/records`` as a timeline: oldest first (the API's
    pages), newest first, or its latest records; filtered by type (``timeline``). While it
    shows the latest records of a run that may still write, the address of the run's live
    tail for the browser to follow."""
    types = wanted_types(type)

    async def load(api: Api) -> dict[str, Any]:
        run = await api.store.load_run(run_id)
        shown = await run_timeline(
            api, run_id, cursor=cursor, order=order, before=before, latest=bool(latest), types=types
        )
        records = [RecordView.of(record) for record in shown["records"]]
        state = RunState(
            run_id=run_id,
            children_cursor=kept.children_cursor,
            timeline_cursor=kept.timeline_cursor,
            records_order="desc" if shown["newest_first"] else "",
            records_type=tuple(sorted(types)),
        )
        here = state.query()
        oldest = {**here, "records_order": ""}
        follow = shown["at_latest"] and not run.status.is_finished

        def at(params: dict[str, str | list[str]]) -> str:
            return link("/console/run", params) + "#records"

        at_start = not (cursor or before or latest)
        return {
            "records": records,
            "status": run.status,
            "run_id": run_id,
            "children_cursor": kept.children_cursor,
            "timeline_cursor": kept.timeline_cursor,
            "newest_first": shown["newest_first"],
            "types": sorted(types),
            "known_types": record_types(types, records),
            "filtered": bool(types),
            "read": shown["read"],
            "at_latest": shown["at_latest"],
            "tail": path("v1", "runs", run_id, "records", "stream") if follow else "",
            "tail_cursor": shown["tail_cursor"],
            "next": at({**here, "records_cursor": shown["next_cursor"]})
            if shown["next_cursor"]
            else at({**here, "records_before": shown["older"]})
            if shown["older"] and shown["newest_first"]
            else "",
            "earlier": at({**here, "records_cursor": shown["earlier_cursor"]})
            if shown["earlier_cursor"]
            else "",
            "first": "" if at_start else at(here),
            "latest": "" if shown["at_latest"] else at({**here, "records_latest": "1"}),
            "oldest_first_link": at(oldest),
            "newest_first_link": at({**here, "records_order": "desc"}),
            "types_json": json.dumps(sorted(types)),
        }

    return await fragment(request, "fragments/records.html", load)
