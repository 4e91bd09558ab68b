"""The live tail (CONTRACT.md 11.3): a run's or a session's records as server-sent events.

A stream is served from the log itself: after every wake-up (``app.storage.notifications``)
it reads the next page from the subscriber's cursor, so every record is sent exactly once,
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

import asyncio
import contextlib
import fcntl
import json
import struct
import termios
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Final

import anyio
from fastapi import APIRouter, Header, Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from app.api.auth import READ
from app.api.deps import CursorQuery, OffloadDep, RunIdPath, SessionIdPath, StoreDep
from app.api.offload import Offload
from app.api.problems import problems
from app.api.schemas import RecordBody
from app.observability.metrics import LIVE_STREAMS, STREAMS_REFUSED
from app.storage import Notifications, Subscription
from app.storage.records import StreamPage
from runtime_store_client import (
    InvalidArgumentError,
    LifecycleRecordType,
    RunNotFoundError,
    SessionNotFoundError,
    SessionPurgedError,
    UnavailableError,
)

router = APIRouter()

#: How long a stream waits before reading again when the database did not answer.
_UNAVAILABLE_RETRY_SECONDS: Final = 1.0
#: How long a stream has to end itself when the server shuts down.
_SHUTDOWN_GRACE_SECONDS: Final = 2.0
#: Longest a new stream waits for its worker to start listening (PostgreSQL) before its
#: first read; past it the stream goes on, covered by its safety re-reads.
_LISTEN_WAIT_SECONDS: Final = 5.0
#: The record type only a run's final status writes (CONTRACT.md 1.7, 3.3, 3.10).
_FINAL_TYPE: Final = LifecycleRecordType.RUN_COMPLETED.value

_STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "`text/event-stream`: `event: record` per record (`id`: the cursor "
        "after it; `data`: the record as in a page), comment heartbeats, and `event: end` "
        '(`data`: `{"reason": "finished", "status": ...}` or `{"reason": "purged"}`) when '
        "the stream is over.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}

LastEventId = Annotated[
    str | None,
    Header(
        alias="Last-Event-ID",
        description="The `id` of the last event received; resumes after it and wins over `cursor`.",
    ),
]


@dataclass(frozen=True)
class TailSettings:
    """How streams behave in this worker (``RUNTIME_STORE_TAIL_*`` settings)."""

    heartbeat_seconds: float = 15.0
    page_size: int = 1000


# --- pages, rendered once --------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A page as encoded events, with the cursor after the last one."""

    events: list[bytes]
    cursor: str
    more: bool
    #: The run's final status when the page ends with its ``run_completed`` record.
    final: str | None = None


def render(page: StreamPage, cursor: str, *, run_stream: bool) -> Chunk:
    """Encode a page's records as events (on a database thread: it costs CPU)."""
    events: list[bytes] = []
    final = None
    for record, after in zip(page.records, page.cursors, strict=True):
        data = RecordBody.of(record).model_dump_json()
        events.append(ServerSentEvent(data=data, event="record", id=after).encode())
        if run_stream and record.type == _FINAL_TYPE:
            final = str(json.loads(record.payload).get("phase", ""))
            break  # nothing follows it
    return Chunk(events, page.cursors[-1] if page.cursors else cursor, page.more, final)


class SharedReads:
    """Single-flight reads of one list at one cursor, per worker.

    A subscriber joins a read in flight only if it started at or after the wake-up
    generation the subscriber needs (``Subscription.wait``): a read begun before the
    commit that woke it might not see that commit.
    """

    def __init__(self, hub: Notifications, offload: Offload) -> None:
        self._hub = hub
        self._offload = offload
        self._inflight: dict[tuple[str, str, str], tuple[int, asyncio.Future[Chunk]]] = {}

    async def read(self, key: tuple[str, str, str], need: int, read: Callable[[], Chunk]) -> Chunk:
        entry = self._inflight.get(key)
        if entry is None or entry[0] < need:
            future = asyncio.ensure_future(self._offload.unbound(read))
            entry = (self._hub.generation, future)
            self._inflight[key] = entry
            future.add_done_callback(lambda _: self._forget(key, entry))
        return await asyncio.shield(entry[1])

    def _forget(self, key: tuple[str, str, str], entry: tuple[int, asyncio.Future[Chunk]]) -> None:
        if self._inflight.get(key) is entry:
            del self._inflight[key]
        future = entry[1]
        if not future.cancelled():
            future.exception()  # retrieved: its awaiters may all have gone


def _shared_reads(request: Request) -> SharedReads:
    state = request.app.state
    shared: SharedReads | None = getattr(state, "tail_reads", None)
    if shared is None:
        shared = state.tail_reads = SharedReads(state.notifications, state.offload)
    return shared


# --- backpressure ----------------------------------------------------------------------


class Outbox:
    """What a stream sent that its client has not taken yet: the bytes still in the
    transport's buffer, plus those in the socket's send queue that the client has not
    acknowledged (Linux ``SIOCOUTQ``). A client's kernel acknowledges only what fits its
    receive window, which a client that does not read never empties."""

    #: Bytes the client may leave unacknowledged when the next page is read: a few
    #: events, so that a reading client's delayed acknowledgement of its last small
    #: segments does not hold its stream back; a page beyond it is never read until the
    #: client has taken the one before.
    ALLOWANCE: Final = 8 * 1024
    #: Polling of the send queue while the client is behind (there is no event for it).
    FIRST_POLL: Final = 0.005
    LAST_POLL: Final = 0.25

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        self._fd = sock.fileno() if sock is not None else -1

    @classmethod
    def of_current_request(cls) -> Outbox:
        """The outbox of the request served by the current task: uvicorn runs each
        request in a task of its ``RequestResponseCycle.run_asgi``, which holds the
        connection's transport. Elsewhere (a test client) there is none to watch."""
        task = asyncio.current_task()
        frame = getattr(task.get_coro(), "cr_frame", None) if task is not None else None
        cycle = frame.f_locals.get("self") if frame is not None else None
        transport = getattr(cycle, "transport", None)
        if not callable(getattr(transport, "get_write_buffer_size", None)):
            transport = None
        return cls(transport)

    def pending(self) -> int:
        """Bytes sent to the client that it has not taken yet (0 when unknown)."""
        if self._transport is None or self._transport.is_closing():
            return 0
        size: int = self._transport.get_write_buffer_size()
        if self._fd >= 0:
            with contextlib.suppress(OSError):  # SIOCOUTQ is TIOCOUTQ on Linux
                queued = fcntl.ioctl(self._fd, termios.TIOCOUTQ, b"\0\0\0\0")
                size += struct.unpack("i", queued)[0]
        return size

    async def drained(self, stopping: Callable[[], bool]) -> None:
        """Until the client has taken all but ``ALLOWANCE`` bytes (or the stream stops)."""
        poll = self.FIRST_POLL
        while self.pending() > self.ALLOWANCE and not stopping():
            await asyncio.sleep(poll)
            poll = min(poll * 2, self.LAST_POLL)


# --- one stream ------------------------------------------------------------------------


@dataclass
class _Stream:
    """One subscriber's stream: its list, its wake-ups, and the server's stop signal."""

    kind: str
    owner: str
    read_after: Callable[[str], Chunk]
    subscription: Subscription
    shared: SharedReads
    safety_seconds: float
    outbox: Outbox
    #: Set by sse-starlette when the server shuts down: the stream ends cleanly, without
    #: ``end`` (the client reconnects to another worker).
    stop: anyio.Event = field(default_factory=anyio.Event)

    @property
    def stopping(self) -> bool:
        return self.stop.is_set() or self.subscription.closing

    async def wait(self, seconds: float) -> int:
        return await self.subscription.wait(seconds, self.stop.wait())

    async def read(self, cursor: str, need: int) -> Chunk | None:
        """The page after ``cursor`` from a read started at generation ``need`` or later,
        waiting out a database that does not answer (the stream stays open); ``None``
        when the server stops."""
        while not self.stopping:
            try:
                return await self.shared.read(
                    (self.kind, self.owner, cursor), need, lambda: self.read_after(cursor)
                )
            except UnavailableError:
                need = await self.wait(_UNAVAILABLE_RETRY_SECONDS)
        return None


def _end(reason: str, **details: str) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps({"reason": reason, **details}), event="end")


async def _follow(stream: _Stream, first: Chunk) -> AsyncIterator[bytes | ServerSentEvent]:
    """The events of ``first``, then of each page read after a wake-up."""
    chunk: Chunk | None = first
    try:
        while chunk is not None:
            for event in chunk.events:
                yield event
            if chunk.final is not None:
                yield _end("finished", status=chunk.final)
                return
            need = stream.subscription.woken
            if not chunk.more:
                need = await stream.wait(stream.safety_seconds)
            # Only as fast as the client reads: no page read while it has not taken the
            # last one.
            await stream.outbox.drained(lambda: stream.stopping)
            chunk = await stream.read(chunk.cursor, need)
    except (SessionPurgedError, RunNotFoundError, SessionNotFoundError):
        yield _end("purged")
    finally:
        stream.subscription.close()


def _subscribed(subscription: Subscription | None, kind: str) -> Subscription:
    if subscription is None:
        STREAMS_REFUSED.labels(kind).inc()
        raise UnavailableError("this worker serves as many live streams as it allows; retry")
    return subscription


class _StreamResponse(EventSourceResponse):
    """The event stream; however it ends (finished, disconnected, cancelled, never
    started), its subscription is closed and the live-stream gauge goes down."""

    def __init__(self, stream: _Stream, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stream = stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gauge = LIVE_STREAMS.labels(self._stream.kind)
        gauge.inc()
        try:
            await super().__call__(scope, receive, send)
        finally:
            gauge.dec()
            self._stream.subscription.close()


async def _open(
    request: Request,
    kind: str,
    owner: str,
    subscription: Subscription,
    read_after: Callable[[str], Chunk],
    cursor: str,
) -> EventSourceResponse:
    hub: Notifications = request.app.state.notifications
    settings: TailSettings = request.app.state.tail_settings
    shared = _shared_reads(request)
    stream = _Stream(
        kind,
        owner,
        read_after,
        subscription,
        shared,
        hub.safety_seconds,
        Outbox.of_current_request(),
    )
    try:
        # Subscribed and listening before this first read, so no commit can fall between
        # the two.
        await hub.ready(_LISTEN_WAIT_SECONDS)
        first = await shared.read((kind, owner, cursor), hub.generation, lambda: read_after(cursor))
    except BaseException:
        subscription.close()
        raise
    return _StreamResponse(
        stream,
        _follow(stream, first),
        ping=settings.heartbeat_seconds,
        shutdown_event=stream.stop,
        shutdown_grace_period=_SHUTDOWN_GRACE_SECONDS,
        # A reverse proxy must pass each event on as it comes.
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


# --- the endpoints ---------------------------------------------------------------------


@router.get(
    "/v1/runs/{run_id}/records/stream",
    dependencies=[READ],
    operation_id="tail-run-records",
    summary="Follow a run's records live",
    tags=["records"],
    response_class=EventSourceResponse,
    responses={
        **_STREAM_RESPONSE,
        **problems(RunNotFoundError, SessionPurgedError, InvalidArgumentError),
    },
)
async def tail_run_records(
    request: Request,
    run_id: RunIdPath,
    store: StoreDep,
    offload: OffloadDep,
    cursor: CursorQuery = "",
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """Every record of the run after `cursor` (a record ID, as a page's `next_cursor`),
    then each new one as it commits. Ends with `event: end` once the run is completed,
    failed or canceled and its last record was sent, or when its session is purged; a
    suspended run's stream stays open. Heartbeat comments come at least every 15 s."""
    hub: Notifications = request.app.state.notifications
    size = request.app.state.tail_settings.page_size
    meta = await offload(store.load_run, run_id)
    subscription = _subscribed(hub.subscribe_run(run_id, meta.session_id), "run")

    def read_after(after: str) -> Chunk:
        page = store.run_records_after(run_id, after, size)
        return render(page, after, run_stream=True)

    return await _open(request, "run", run_id, subscription, read_after, last_event_id or cursor)


@router.get(
    "/v1/sessions/{session_id}/records/stream",
    dependencies=[READ],
    operation_id="tail-session-run-records",
    summary="Follow a session's records live",
    tags=["records"],
    response_class=EventSourceResponse,
    responses={
        **_STREAM_RESPONSE,
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

    return await _open(
        request, "session", session_id, subscription, read_after, last_event_id or cursor
    )
