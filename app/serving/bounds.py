"""Every worker's connection bounds (docs/reliability.md, "Connection bounds"): header and
body deadlines, keep-alive, and ``503 unavailable`` beyond the connection cap."""

from __future__ import annotations

import asyncio
import functools
import resource
import sys
import uuid
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, cast

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

if TYPE_CHECKING:
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send
    from uvicorn._types import ASGI3Application


#: Open files a worker keeps for itself beyond its connections and its database pool:
#: standard streams, the event loop, its listening socket, pipes to the supervisor, SQLite
#: files, and connections that are being refused (held at most ``REFUSAL_HEADER_SECONDS``).
FD_HEADROOM = 128


#: How long a connection beyond the cap may take to send the request it is refused.
REFUSAL_HEADER_SECONDS = 1


@dataclass(frozen=True)
class ConnectionBounds:
    """What one worker allows its connections (the ``RUNTIME_STORE_*`` connection settings)."""

    header_timeout_seconds: int = 10
    body_timeout_seconds: int = 30
    keep_alive_seconds: int = 5
    max_connections: int = 1000


def open_file_limit() -> int:
    """The soft ``RLIMIT_NOFILE`` of this process (inherited by its workers)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else sys.maxsize


def connection_cap(requested: int, db_pool_size: int, file_limit: int) -> int:
    """``requested``, lowered so that a full worker still has files for its database pool.

    A worker that runs out of file descriptors can neither accept a connection nor open a
    database connection; capped below the limit, it refuses cleanly instead.
    """
    reserved = FD_HEADROOM + db_pool_size + 4  # the pool's overflow (app/main.py)
    return max(1, min(requested, file_limit - reserved))


class BoundedConfig(Config):
    """uvicorn's ``Config`` serving with ``BoundedHttpToolsProtocol`` under ``bounds``."""

    def __init__(self, app: str, bounds: ConnectionBounds, **options: Any) -> None:
        super().__init__(
            app,
            http=BoundedHttpToolsProtocol,
            timeout_keep_alive=bounds.keep_alive_seconds,
            **options,
        )
        self.bounds = bounds


async def _refuse_over_capacity(scope: Scope, receive: Receive, send: Send) -> None:
    from starlette.requests import Request

    from app.api.problems import RETRY_AFTER_SECONDS, problem_response
    from runtime_store_client import UnavailableError

    response = problem_response(
        Request(scope),
        code=UnavailableError.default_code,
        detail="the server holds as many connections as it allows; retry",
        headers={"Retry-After": RETRY_AFTER_SECONDS, "Connection": "close"},
    )
    await response(scope, receive, send)


@functools.cache
def refuse_over_capacity() -> ASGI3Application:
    """The app that answers every request of a connection beyond the cap."""
    from app.api.middleware.front import Front

    return cast("ASGI3Application", Front(_refuse_over_capacity))


@functools.cache
def _import_route() -> tuple[str, str]:
    from app.api.middleware.body_limit import IMPORT_ROUTE

    return IMPORT_ROUTE


def _http11(response: Response) -> bytes:
    """``response`` (a complete, non-streaming one) as HTTP/1.1 bytes."""
    status = HTTPStatus(response.status_code)
    lines = [f"HTTP/1.1 {status.value} {status.phrase}".encode()]
    lines += [name + b": " + value for name, value in response.raw_headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + response.body


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with deadlines for the request and a connection cap.

    * From the moment a connection is accepted, or the first byte of a later request on
      it arrives, the request's headers must be complete within
      ``header_timeout_seconds``; otherwise the connection is closed without an answer
      (there is no request to answer). A connection that never sends anything is closed
      too, so idle sockets cannot hold file descriptors.
    * From the end of the headers, the whole body must arrive within
      ``body_timeout_seconds``; otherwise the answer is ``408 request_timeout`` (if the
      app has not answered yet) and the connection is closed. A session import's body
      (``IMPORT_ROUTE``, up to gigabytes) may take longer in all, but never that long
      between two chunks.
    * Between requests, uvicorn's ``timeout_keep_alive`` closes an idle connection.
    * A connection accepted while the worker already holds ``max_connections`` is answered
      ``503 unavailable`` (``Retry-After``, then closed) as soon as its request's headers
      arrive, or closed after ``REFUSAL_HEADER_SECONDS`` if they do not. Connections
      already held are served as usual. (uvicorn's own ``limit_concurrency`` is not used: it
      counts the idle connections too and refuses the requests of every connection,
      established ones included, with a text body.)
    """

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.bounds = config.bounds if isinstance(config, BoundedConfig) else ConnectionBounds()
        self.header_deadline: asyncio.TimerHandle | None = None
        self.body_deadline: asyncio.TimerHandle | None = None
        self.body_streamed = False

    def connection_made(  # type: ignore[override]
        self, transport: asyncio.Transport
    ) -> None:
        refused = len(self.connections) >= self.bounds.max_connections
        super().connection_made(transport)
        seconds = self.bounds.header_timeout_seconds
        if refused:
            self.app = refuse_over_capacity()
            seconds = min(seconds, REFUSAL_HEADER_SECONDS)
        self.header_deadline = self.loop.call_later(seconds, self._headers_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadlines()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.header_deadline is None:  # a later request on a kept-alive connection
            self.header_deadline = self.loop.call_later(
                self.bounds.header_timeout_seconds, self._headers_timed_out
            )

    def on_headers_complete(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
            self.header_deadline = None
        super().on_headers_complete()
        # A session import's body is read as it is imported: it must keep arriving, at most
        # the body timeout between two chunks, however long the whole takes.
        self.body_streamed = (self.scope.get("method"), self.scope.get("path")) == _import_route()
        self.body_deadline = self.loop.call_later(
            self.bounds.body_timeout_seconds, self._body_timed_out
        )

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        if self.body_streamed and self.body_deadline is not None:
            self.body_deadline.cancel()
            self.body_deadline = self.loop.call_later(
                self.bounds.body_timeout_seconds, self._body_timed_out
            )

    def on_message_complete(self) -> None:
        if self.body_deadline is not None:
            self.body_deadline.cancel()
            self.body_deadline = None
        super().on_message_complete()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes that are not an HTTP/1.1 request (an unknown method such
        as ``curl -X FOO``, a broken request line or header): a problem like every error."""
        from starlette.requests import Request

        from app.api.problems import problem_response
        from app.api.request_id import HEADER as REQUEST_ID_HEADER

        request_id = uuid.uuid4().hex
        scope = {"type": "http", "headers": [], "state": {"request_id": request_id}}
        response = problem_response(
            Request(scope),
            code="bad_request",
            detail=f"{msg.rstrip('.')} (an unknown method, or a malformed request line or header)",
            headers={"Connection": "close", REQUEST_ID_HEADER: request_id},
        )
        self.transport.write(_http11(response))
        self.transport.close()

    def _cancel_deadlines(self) -> None:
        for deadline in (self.header_deadline, self.body_deadline):
            if deadline is not None:
                deadline.cancel()
        self.header_deadline = self.body_deadline = None

    def _headers_timed_out(self) -> None:
        self.header_deadline = None
        self.transport.close()

    def _body_timed_out(self) -> None:
        self.body_deadline = None
        if self.pipeline:
            # A pipelined request waits, unread, for the one before it: its body cannot
            # arrive before that one is answered.
            self.body_deadline = self.loop.call_later(
                self.bounds.body_timeout_seconds, self._body_timed_out
            )
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started and not cycle.disconnected:
            # The app is waiting for the body: it reads a disconnect and its own answer, if
            # any, is dropped; this one is written in its place.
            cycle.disconnected = True
            cycle.message_event.set()
            from starlette.requests import Request

            from app.api.problems import problem_response
            from app.api.request_id import HEADER as REQUEST_ID_HEADER
            from app.api.request_id import request_id_of

            request = Request(cycle.scope)  # type: ignore[arg-type]
            request_id = request_id_of(request)
            headers = {"Connection": "close"}
            if request_id:
                headers[REQUEST_ID_HEADER] = request_id
            response = problem_response(
                request,
                code="request_timeout",
                detail=f"the request body did not arrive within "
                f"{self.bounds.body_timeout_seconds} s",
                headers=headers,
            )
            self.transport.write(_http11(response))
        self.transport.close()
