"""The live tail (CONTRACT.md 11.3): a run's or a session's records as server-sent events.

A stream is served from the log itself: after every wake-up
(``app.storage.live_tail.notifications``) it reads the next page from the subscriber's
cursor, so every record is sent exactly once,
in list order, whichever replica committed it. Each event's ``id`` is the cursor after its
record, so a client that reconnects with ``Last-Event-ID`` resumes exactly there. Errors
known before the first byte (unknown run, purged session, forged cursor, too many streams)
are ordinary problem responses.

Subscribers of one list at one cursor (fifty dashboards on one run) share each read and
its rendering (``SharedReads``): one query per wake-up, not one per subscriber. A run's
stream ends after its ``run_completed`` record: a lifecycle record that only the final
status writes, and after which nothing is appended.

A stream reads only as fast as its client reads (CONTRACT.md 2.10, ``Outbox``): it reads
its next page only once what it sent before has left the server, i.e. the transport's
buffer is empty and the client has acknowledged all but ``Outbox.ALLOWANCE`` bytes of it.
A client that stops reading fills its receive window; the stream then waits, costing no
database read beyond the page it is sending (its heartbeats go on).
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse

from app.api.auth import READ
from app.api.deps import CursorQuery, RunIdPath, SessionIdPath, StoreCallsDep, StoreDep
from app.api.problem_docs import problems
from app.storage import Notifications
from runtime_store_client import (
    InvalidArgumentError,
    RunNotFoundError,
    SessionNotFoundError,
    SessionPurgedError,
)

from ..live_tail.reads import Chunk, render
from ..live_tail.stream import LastEventId, _subscribed, open_stream

router = APIRouter()


#: One record event: ``id`` is the cursor after the record, ``data`` the record's JSON.
_RECORD_EVENT: Final[dict[str, Any]] = {
    "title": "RecordEvent",
    "type": "object",
    "required": ["event", "id", "data"],
    "properties": {
        "event": {"const": "record"},
        "id": {"type": "string", "description": "The cursor after the record."},
        "data": {
            "type": "string",
            "description": "The record as in a page.",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/RecordBody"},
        },
    },
}


def _end_event(*reasons: dict[str, Any]) -> dict[str, Any]:
    """The last event of a stream, ``data`` telling why it ended."""
    return {
        "title": "EndEvent",
        "type": "object",
        "required": ["event", "data"],
        "properties": {
            "event": {"const": "end"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {"oneOf": list(reasons)},
            },
        },
    }


_FINISHED: Final[dict[str, Any]] = {
    "type": "object",
    "description": "The run is completed, failed or canceled and its last record was sent.",
    "required": ["reason", "status"],
    "properties": {
        "reason": {"const": "finished"},
        "status": {"type": "string", "enum": ["completed", "failed", "canceled"]},
    },
    "additionalProperties": False,
}
_PURGED: Final[dict[str, Any]] = {
    "type": "object",
    "description": "The session was purged.",
    "required": ["reason"],
    "properties": {"reason": {"const": "purged"}},
    "additionalProperties": False,
}


def _stream_response(*ends: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    """A stream's 200: ``text/event-stream`` whose events ``itemSchema`` describes (as FastAPI
    documents its own event streams and OpenAPI 3.2 defines it: each event is an object of
    its ``event``, ``id`` and ``data`` fields, ``data`` holding JSON). Comment lines are
    heartbeats and carry no event."""
    return {
        200: {
            "description": "`text/event-stream`: `event: record` per record (`id`: the cursor "
            "after it; `data`: the record as in a page), comment heartbeats (at least every "
            "15 s), and `event: end` when the stream is over "
            + (
                '(`data`: `{"reason": "finished", "status": ...}` or `{"reason": "purged"}`).'
                if len(ends) > 1
                else '(`data`: `{"reason": "purged"}`).'
            ),
            "content": {
                "text/event-stream": {
                    "itemSchema": {"oneOf": [_RECORD_EVENT, _end_event(*ends)]},
                }
            },
        }
    }


@router.get(
    "/v1/runs/{run_id}/records/stream",
    dependencies=[READ],
    operation_id="tail-run-records",
    summary="Follow a run's records live",
    tags=["records"],
    response_class=EventSourceResponse,
    responses={
        **_stream_response(_FINISHED, _PURGED),
        **problems(RunNotFoundError, SessionPurgedError, InvalidArgumentError),
    },
)
async def tail_run_records(
    request: Request,
    run_id: RunIdPath,
    store: StoreDep,
    calls: StoreCallsDep,
    cursor: CursorQuery = "",
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """Every record of the run after `cursor` (a record ID, as a page's `next_cursor`),
    then each new one as it commits. Ends with `event: end` once the run is completed,
    failed or canceled and its last record was sent, or when its session is purged; a
    suspended run's stream stays open. Heartbeat comments come at least every 15 s."""
    hub: Notifications = request.app.state.notifications
    size = request.app.state.tail_settings.page_size
    meta = await calls(store.load_run, run_id)
    subscription = _subscribed(hub.subscribe_run(run_id, meta.session_id), "run")

    def read_after(after: str) -> Chunk:
        page = store.run_records_after(run_id, after, size)
        return render(page, after, run_stream=True)

    return await open_stream(
        request, "run", run_id, subscription, read_after, last_event_id or cursor
    )


@router.get(
    "/v1/sessions/{session_id}/records/stream",
    dependencies=[READ],
    operation_id="tail-session-run-records",
    summary="Follow a session's records live",
    tags=["records"],
    response_class=EventSourceResponse,
    responses={
        **_stream_response(_PURGED),
        **problems(SessionNotFoundError, SessionPurgedError, InvalidArgumentError),
    },
)
async def tail_session_run_records(
    request: Request,
    session_id: SessionIdPath,
    store: StoreDep,
    cursor: CursorQuery = "",
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """Every record of the session's runs after `cursor` (as a page's `next_cursor`), in
    commit order, then each new one as it commits. Ends with `event: end` when the
    session is purged. Heartbeat comments come at least every 15 s."""
    hub: Notifications = request.app.state.notifications
    size = request.app.state.tail_settings.page_size
    subscription = _subscribed(hub.subscribe_session(session_id), "session")

    def read_after(after: str) -> Chunk:
        page = store.session_records_after(session_id, after, size)
        return render(page, after, run_stream=False)

    return await open_stream(
        request, "session", session_id, subscription, read_after, last_event_id or cursor
    )
