"""The live tail's iterators (CONTRACT.md 11.3): records as they commit, resumed on a drop.

A tail keeps the ``id`` of the last event it yielded: that is the cursor after the record,
so when the connection drops (a worker restarted, a proxy timed out, the server went away)
it reconnects with ``Last-Event-ID`` and the server goes on from exactly there: no record
is lost or repeated. Reconnects back off with jitter and give up (``UnavailableError``) when
the service stays unreachable for the client's ``deadline``. Contract errors (unknown run,
purged session, a forged cursor) are raised as they are. The server ends a run's stream
when the run is over, and both streams when the session is purged: iteration stops there.

The generated client cannot stream, so the tails speak to the same ``httpx`` client
directly; ``httpx-sse`` parses the event stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import EventSource, ServerSentEvent

from .._generated.models import RecordBody
from ..errors import SessionPurgedError, StoreError, UnavailableError
from ..types import Record
from ._convert import record
from ._retry import RetryPolicy, transport_error

#: Seconds without a byte after which a stream counts as dropped: the server sends a
#: heartbeat at least every 15 s.
READ_TIMEOUT = 45.0


def run_stream_path(run_id: str) -> str:
    return f"/v1/runs/{quote(run_id, safe='')}/records/stream"


def session_stream_path(session_id: str) -> str:
    return f"/v1/sessions/{quote(session_id, safe='')}/records/stream"


class _Resume:
    """What both tails share: the cursor, the end, and when to give up reconnecting."""

    def __init__(self, path: str, cursor: str, policy: RetryPolicy) -> None:
        self.path = path
        #: The cursor after the last record yielded: pass it back to resume elsewhere.
        self.cursor = cursor
        #: Why the server ended the stream (``{"reason": ...}``); ``None`` while it runs.
        self.end: dict[str, Any] | None = None
        self._policy = policy
        self._failures = 0
        self._failing_since: float | None = None
        #: A stream was open once: errors now may mean it ended while the client was away.
        self.reconnecting = False

    def request(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if self.cursor:
            headers["Last-Event-ID"] = self.cursor
        timeout = httpx.Timeout(client.timeout.connect or 10.0, read=READ_TIMEOUT)
        return client.build_request(
            "GET",
            self.path,
            params={"cursor": self.cursor} if self.cursor else None,
            headers=headers,
            timeout=timeout,
        )

    def take(self, event: ServerSentEvent) -> Record | None:
        """The record of an event (``None`` for any other event); ``end`` is noted."""
        if event.event == "record":
            decoded = record(RecordBody.from_dict(json.loads(event.data)))
            self.cursor = event.id
            self._failures, self._failing_since = 0, None
            return decoded
        if event.event == "end":
            self.end = json.loads(event.data) if event.data else {}
        return None

    def connected(self) -> None:
        self.reconnecting = True

    def gone(self, error: StoreError) -> bool:
        """Whether ``error`` on a reconnect means the stream ended while the client was
        away (its session purged): then ``end`` is set, as the server would have sent."""
        if self.reconnecting and isinstance(error, SessionPurgedError):
            self.end = {"reason": "purged"}
            return True
        return False

    def after_failure(self, exc: httpx.TransportError | StoreError) -> float:
        """Seconds before reconnecting after ``exc``; raises it when it is final."""
        error = transport_error(exc) if isinstance(exc, httpx.TransportError) else exc
        if self.gone(error):
            return 0.0
        return self.backoff(error)

    def backoff(self, error: StoreError) -> float:
        """Seconds before the next reconnect; raises ``error`` when it is final or the
        service stayed unreachable past the deadline."""
        if not isinstance(error, UnavailableError):
            raise error
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        self._failures += 1
        delay = self._policy.delay(self._failures, error)
        if now - self._failing_since + delay > self._policy.deadline:
            raise error
        return delay


class RecordTail(Iterator[Record]):
    """``for record in store.tail_run_records(run_id): ...``; ``with`` it to stop early."""

    def __init__(self, client: httpx.Client, path: str, cursor: str, policy: RetryPolicy):
        self._client = client
        self._resume = _Resume(path, cursor, policy)
        self._response: httpx.Response | None = None
        self._events: Iterator[ServerSentEvent] | None = None
        self._closed = False

    @property
    def cursor(self) -> str:
        """The cursor after the last record yielded (a stream's or a page's ``cursor=``)."""
        return self._resume.cursor

    @property
    def end(self) -> dict[str, Any] | None:
        """Why the stream ended (``{"reason": "finished", "status": ...}`` or
        ``{"reason": "purged"}``); ``None`` until it has."""
        return self._resume.end

    def __iter__(self) -> RecordTail:
        return self

    def __next__(self) -> Record:
        try:
            while not self._closed and self._resume.end is None:
                try:
                    taken = self._next_record()
                except (httpx.TransportError, StoreError) as exc:
                    self._disconnect()
                    time.sleep(self._resume.after_failure(exc))
                    continue
                if taken is not None:
                    return taken
                self._disconnect()  # the stream ended: by ``end``, or the server stopped
        except BaseException:
            self.close()
            raise
        self.close()
        raise StopIteration

    def _next_record(self) -> Record | None:
        """The next record of this connection (opened if need be); ``None`` at its end."""
        if self._events is None:
            self._connect()
        assert self._events is not None
        for event in self._events:
            taken = self._resume.take(event)
            if taken is not None or self._resume.end is not None:
                return taken
        return None

    def _connect(self) -> None:
        response = self._client.send(self._resume.request(self._client), stream=True)
        self._response = response
        self._events = EventSource(response).iter_sse()
        self._resume.connected()

    def _disconnect(self) -> None:
        response, self._response, self._events = self._response, None, None
        if response is not None:
            response.close()

    def close(self) -> None:
        """Stop following: the connection is closed; iteration ends."""
        self._closed = True
        self._disconnect()

    def __enter__(self) -> RecordTail:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncRecordTail(AsyncIterator[Record]):
    """``async for record in store.tail_run_records(run_id): ...``; ``async with`` it to
    stop early."""

    def __init__(
        self, client: httpx.AsyncClient, path: str, cursor: str, policy: RetryPolicy
    ) -> None:
        self._client = client
        self._resume = _Resume(path, cursor, policy)
        self._response: httpx.Response | None = None
        self._events: AsyncIterator[ServerSentEvent] | None = None
        self._closed = False

    @property
    def cursor(self) -> str:
        return self._resume.cursor

    @property
    def end(self) -> dict[str, Any] | None:
        return self._resume.end

    def __aiter__(self) -> AsyncRecordTail:
        return self

    async def __anext__(self) -> Record:
        try:
            while not self._closed and self._resume.end is None:
                try:
                    taken = await self._next_record()
                except (httpx.TransportError, StoreError) as exc:
                    await self._disconnect()
                    await asyncio.sleep(self._resume.after_failure(exc))
                    continue
                if taken is not None:
                    return taken
                await self._disconnect()
        except BaseException:
            await self.aclose()
            raise
        await self.aclose()
        raise StopAsyncIteration

    async def _next_record(self) -> Record | None:
        if self._events is None:
            await self._connect()
        assert self._events is not None
        async for event in self._events:
            taken = self._resume.take(event)
            if taken is not None or self._resume.end is not None:
                return taken
        return None

    async def _connect(self) -> None:
        response = await self._client.send(self._resume.request(self._client), stream=True)
        self._response = response
        self._events = EventSource(response).aiter_sse()
        self._resume.connected()

    async def _disconnect(self) -> None:
        response, self._response, self._events = self._response, None, None
        if response is not None:
            await response.aclose()

    async def aclose(self) -> None:
        """Stop following: the connection is closed; iteration ends."""
        self._closed = True
        await self._disconnect()

    async def __aenter__(self) -> AsyncRecordTail:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
