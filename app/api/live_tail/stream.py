"""One live-tail stream: opened after the errors known before its first byte, then
following its list from wake-up to wake-up (``open_stream``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Final

import anyio
from fastapi import Header, Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from app.api.auth import REVALIDATE_SECONDS, still_authorized
from app.observability.metrics import LIVE_STREAMS, STREAMS_REFUSED
from app.storage import Notifications, Subscription
from runtime_store_client import (
    RunNotFoundError,
    SessionNotFoundError,
    SessionPurgedError,
    UnavailableError,
)

from .backpressure import Outbox
from .reads import Chunk, SharedReads, shared_reads

#: How long a stream waits before reading again when the database did not answer.
_UNAVAILABLE_RETRY_SECONDS: Final = 1.0


#: How long a stream has to end itself when the server shuts down.
_SHUTDOWN_GRACE_SECONDS: Final = 2.0


#: Longest a new stream waits for its worker to start listening (PostgreSQL) before its
#: first read; past it the stream goes on, covered by its safety re-reads.
_LISTEN_WAIT_SECONDS: Final = 5.0


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
    #: Whether the subscriber's token is still active (``still_authorized``).
    authorized: Callable[[], Awaitable[bool]]
    #: Set by sse-starlette when the server shuts down: the stream ends cleanly, without
    #: ``end`` (the client reconnects to another worker).
    stop: anyio.Event = field(default_factory=anyio.Event)
    #: The token was found revoked while the stream waited: it ends, without ``end``.
    revoked: bool = False

    @property
    def stopping(self) -> bool:
        return self.stop.is_set() or self.subscription.closing

    async def wait(self, seconds: float) -> int:
        """Until woken, ``seconds``, or the server stops; meanwhile the token is confirmed
        every ``REVALIDATE_SECONDS`` (``revoked`` once it is not), so an idle stream of a
        revoked token ends within the revocation bound."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            step = max(0.0, min(deadline - loop.time(), REVALIDATE_SECONDS))
            need = await self.subscription.wait(step, self.stop.wait())
            if self.subscription.was_woken or self.stopping or loop.time() >= deadline:
                return need
            try:
                if not await self.authorized():
                    self.revoked = True
                    return need
            except UnavailableError:  # confirmed before anything is sent (``may_send``)
                continue

    async def may_send(self) -> bool:
        """Whether events may go to the subscriber: its token confirmed active, waiting out
        a database that cannot say; ``False`` once revoked (or the server stops)."""
        while not self.stopping:
            try:
                return await self.authorized()
            except UnavailableError:
                await self.subscription.wait(_UNAVAILABLE_RETRY_SECONDS, self.stop.wait())
        return False

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
            # A revoked token's stream closes without ``end``: the client's reconnect is
            # then refused 401, so it learns why.
            if chunk.events and not await stream.may_send():
                return
            for event in chunk.events:
                yield event
            if chunk.final is not None:
                yield _end("finished", status=chunk.final)
                return
            need = stream.subscription.woken
            if not chunk.more:
                need = await stream.wait(stream.safety_seconds)
                if stream.revoked:
                    return
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


async def open_stream(
    request: Request,
    kind: str,
    owner: str,
    subscription: Subscription,
    read_after: Callable[[str], Chunk],
    cursor: str,
) -> EventSourceResponse:
    hub: Notifications = request.app.state.notifications
    settings: TailSettings = request.app.state.tail_settings
    shared = shared_reads(request)
    stream = _Stream(
        kind,
        owner,
        read_after,
        subscription,
        shared,
        hub.safety_seconds,
        Outbox.of_current_request(),
        lambda: still_authorized(request),
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
