"""Export and import of a session (CONTRACT.md 11.4), as NDJSON streams.

``GET /v1/sessions/{session_id}/export`` reads the session in one snapshot on a database
thread (a heavy slot, ``StoreCalls.heavy``) and streams the lines as they come: the thread
hands chunks to the response through a small bounded queue, so a slow client slows the
reader instead of filling memory, and a client that goes away stops it. An unknown or
purged session is an ordinary problem response: the first chunk (or error) is awaited
before the response starts.

``POST /v1/sessions/import`` reads its body as a stream (exempt from the general body
limit, bounded by ``RUNTIME_STORE_MAX_IMPORT_BYTES``) into a spooled temporary file, then
imports it in one transaction on a database thread. Spooling first means a slow upload
never holds a write transaction (on SQLite, the database's write lock) open.
"""

from __future__ import annotations

import asyncio
import queue
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from app.api.auth import ADMIN
from app.api.deps import BlockingStoreDep, SessionIdPath, StoreCallsDep
from app.api.media_types import NDJSON, refusal
from app.api.middleware.body_limit import IMPORT_ROUTE
from app.api.problem_docs import problems
from app.api.render import respond
from app.api.schemas.sessions import SessionBody
from app.api.store_calls import StoreCalls
from app.storage import EXPORT_FORMAT, encode_export_line
from runtime_store_client import ImportConflictError, SessionNotFoundError, SessionPurgedError

router = APIRouter()

#: Bytes of export lines sent together; chunks waiting between the thread and the response.
CHUNK_BYTES: Final = 64 * 1024
QUEUED_CHUNKS: Final = 8
#: Bytes of an import body kept in memory before its spool moves to a temporary file.
SPOOL_MEMORY_BYTES: Final = 1024 * 1024
#: How often a blocked export thread looks whether its response was abandoned.
_PUT_SECONDS: Final = 0.5

_STARTED = '{"ParentRunID":"","PredecessorRunID":"","Labels":null}'


#: The example session prepared no run with a seed (CONTRACT.md 15.7).
_NO_SEEDS: dict[str, int] = {"seed_operations": 0, "seed_attempts": 0, "seed_records": 0}


def _example_file() -> str:
    """A whole session file, as an export writes it (a finished one-run session); the
    request example of an import, which a service that never held it accepts."""
    session, run, at = "chat-session-archived", "run-7", "2026-11-29T10:00:0{}.000Z"

    def record(number: int, key: str, type: str, payload: str, second: int) -> dict[str, Any]:
        fields = {"id": str(number), "event_key": key, "run_id": run, "agent_id": "planner"}
        return {
            "record": {
                **fields,
                "session_id": session,
                "turn_id": "",
                "type": type,
                "payload": payload,
                "timestamp": at.format(second),
            }
        }

    keys = {"start": f"{run}:start", "parent_link": "", "cancellation": "", "suspension": ""}
    lines: list[dict[str, Any]] = [
        {
            "format": EXPORT_FORMAT,
            "session": {
                "id": session,
                "status": "ended",
                "created_at": at.format(0),
                "ended_at": at.format(9),
            },
        },
        {
            "run": {
                "run_id": run,
                "agent_id": "planner",
                "session_id": session,
                "parent_run_id": "",
                "status": "completed",
                "start_outcome": "proceed",
                "started_at": at.format(1),
                "updated_at": at.format(5),
                "labels": {},
                "cancellation_reason": "",
                "successor_run_id": "",
                "keys": {**keys, "terminal": f"{run}:done"},
                "checkpoint": None,
                "request_digest": None,
                "start_kind": "engine",
                "seed_end_id": "",
            }
        },
        record(1, f"{run}:start", "run_started", _STARTED, 1),
        record(2, f"{run}:note-1", "planner_note", '{"note":"looked it up"}', 2),
        record(3, f"{run}:done", "run_completed", '{"status":"success","phase":"completed"}', 5),
        {"end": {"runs": 1, "records": 3, "memory_events": 0, "memory_batches": 0, **_NO_SEEDS}},
    ]
    return "".join(encode_export_line(line).decode() for line in lines)


_FILE_SCHEMA: dict[str, Any] = {
    "type": "string",
    "description": "NDJSON: a header line, a line per run, per record (session order), per "
    "memory event and memory append, and a trailer line with the counts.",
}


class _Export:
    """One export: its lines produced on a database thread, read by the response."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        self.lines = lines
        self.chunks: queue.Queue[bytes | BaseException | None] = queue.Queue(QUEUED_CHUNKS)
        self.ready = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.abandoned = threading.Event()

    # --- on the database thread ---------------------------------------------------------

    def produce(self) -> None:
        """Read every line (the first one alone, so errors and the start come quickly)."""
        try:
            buffer = bytearray()
            first = True
            for line in self.lines:
                buffer += line
                if first or len(buffer) >= CHUNK_BYTES:
                    if not self._put(bytes(buffer)):
                        return
                    buffer.clear()
                    first = False
            if buffer and not self._put(bytes(buffer)):
                return
            self._put(None)
        except Exception as exc:
            self._put(exc)
        finally:
            close = getattr(self.lines, "close", None)
            if close is not None:
                close()  # ends the snapshot's transaction

    def _put(self, item: bytes | BaseException | None) -> bool:
        while not self.abandoned.is_set():
            try:
                self.chunks.put(item, timeout=_PUT_SECONDS)
            except queue.Full:
                continue
            try:
                self.loop.call_soon_threadsafe(self.ready.set)
            except RuntimeError:  # the event loop is gone: so is the response
                return False
            return True
        return False

    # --- on the event loop --------------------------------------------------------------

    async def next(self) -> bytes | None:
        """The next chunk; ``None`` at the end; the export's error raised."""
        while True:
            try:
                item = self.chunks.get_nowait()
            except queue.Empty:
                self.ready.clear()
                try:
                    item = self.chunks.get_nowait()
                except queue.Empty:
                    await self.ready.wait()
                    continue
            if isinstance(item, BaseException):
                raise item
            return item


class _ExportResponse(StreamingResponse):
    """The export's chunks; however the response ends, the reading thread stops and its
    snapshot closes before the response is done."""

    def __init__(self, export: _Export, first: bytes, producer: asyncio.Task[None], name: str):
        super().__init__(
            self._chunks(export, first),
            media_type=NDJSON,
            headers={"Content-Disposition": f"attachment; filename*=UTF-8''{name}.ndjson"},
        )
        self.export = export
        self.producer = producer

    @staticmethod
    async def _chunks(export: _Export, first: bytes) -> AsyncIterator[bytes]:
        chunk: bytes | None = first
        while chunk is not None:
            yield chunk
            chunk = await export.next()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.export.abandoned.set()
            with anyio.CancelScope(shield=True):
                await self.producer


@router.get(
    "/v1/sessions/{session_id}/export",
    tags=["sessions"],
    dependencies=[ADMIN],
    operation_id="export-session",
    summary="Export a session",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The session as NDJSON, read in one consistent snapshot.",
            "content": {NDJSON: {"schema": _FILE_SCHEMA}},
        },
        **problems(SessionNotFoundError, SessionPurgedError),
    },
)
async def export_session(
    session_id: SessionIdPath, store: BlockingStoreDep, calls: StoreCallsDep
) -> StreamingResponse:
    """Everything of the session, one JSON object per line, from one snapshot: a header
    `{"format": "runtime-store.session/2", "session": …}`, every run (meta, remembered
    lifecycle keys, checkpoint as base64), every record in session order (payload as its
    exact text), every memory event and memory append of its runs, and a trailer with the
    counts. `POST /v1/sessions/import` recreates it byte for byte on any database."""
    export = _Export(store.export_lines(session_id))
    producer = asyncio.ensure_future(_produce(calls, export))
    try:
        first = await export.next()
    except BaseException:
        export.abandoned.set()
        with anyio.CancelScope(shield=True):
            await producer
        raise
    return _ExportResponse(export, first or b"", producer, quote(session_id, safe=""))


async def _produce(calls: StoreCalls, export: _Export) -> None:
    await calls.heavy(export.produce)


@router.post(
    IMPORT_ROUTE[1],
    tags=["sessions"],
    dependencies=[ADMIN],
    response_model=SessionBody,
    operation_id="import-session",
    summary="Import a session",
    responses=problems(ImportConflictError),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A session file made by `GET /v1/sessions/{session_id}/export`.",
            "content": {NDJSON: {"schema": _FILE_SCHEMA, "example": _example_file()}},
        }
    },
)
async def import_session(
    request: Request, store: BlockingStoreDep, calls: StoreCallsDep
) -> Response:
    """Recreate an exported session, in one transaction, with identical IDs, record IDs,
    session order, bytes, statuses and remembered keys.

    An existing (or purged) session or run ID is `409 import_conflict` naming it; a line
    that breaks a rule is `422 invalid_argument` with its 1-based number in `line` (a file
    cut short is refused at the line its trailer was due). Either way nothing is written.
    The body is bounded by `RUNTIME_STORE_MAX_IMPORT_BYTES` (413 beyond)."""
    unsupported = refusal(request.headers.get("content-type"), NDJSON)
    if unsupported is not None:
        raise unsupported
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES) as spool:
        async for chunk in request.stream():
            spool.write(chunk)
        spool.seek(0)
        session = await calls.heavy(store.import_session, spool)
    return respond(SessionBody.of(session))
