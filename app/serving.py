"""Several uvicorn workers that share the load: one ``SO_REUSEPORT`` socket per worker.

uvicorn's own multi-worker mode binds one socket and hands it to every worker; whichever
worker wakes first accepts every pending connection, so a client that opens its keep-alive
pool in one burst lands on one worker (16 of 16 connections in the benchmark) while the
others idle. Here the parent binds one listening socket per worker on the same address
with ``SO_REUSEPORT``, and the kernel spreads new connections over them. Each worker
serves its own socket; a replacement for a dead worker takes over the same socket, so
connections that queued on it meanwhile are served, not lost. The supervision (health
checks, restarts, signals) is uvicorn's ``Multiprocess``.

Every worker also bounds its connections (``BoundedHttpToolsProtocol``, docs/reliability.md
"Connection bounds"): request headers must arrive within a deadline, a request body within
another, an idle keep-alive connection is closed (uvicorn's ``timeout_keep_alive``), and a
worker holding its maximum of connections answers new ones ``503 unavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import platform
import resource
import socket
import sys
import uuid
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from uvicorn._types import ASGI3Application
from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import Server, ServerState
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from app.api.body_limit import IMPORT_ROUTE
from app.api.problems import RETRY_AFTER_SECONDS, problem_response
from app.api.request_id import HEADER as REQUEST_ID_HEADER
from app.api.request_id import RequestIdMiddleware, request_id_of
from app.observability.metrics import forget_worker
from runtime_store_client import UnavailableError

log = logging.getLogger("uvicorn.error")


def reuse_port_available() -> bool:
    return hasattr(socket, "SO_REUSEPORT")


def bind_worker_sockets(host: str, port: int, count: int, backlog: int) -> list[socket.socket]:
    """``count`` listening sockets on one address (``port`` 0: one free port for all)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            port = sock.getsockname()[1]
            sock.listen(backlog)
            sock.set_inheritable(True)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class SpreadWorkers(Multiprocess):
    """``Multiprocess`` where worker ``i`` always serves ``worker_sockets[i]``."""

    def __init__(self, config: Config, worker_sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets=[])
        self.worker_sockets = worker_sockets
        self.processes_num = len(worker_sockets)

    def _new(self, index: int) -> Process:
        process = Process(self.config, [self.worker_sockets[index]])
        process.start()
        return process

    def init_processes(self) -> None:
        self.processes = [self._new(index) for index in range(self.processes_num)]

    def restart_all(self) -> None:
        """As uvicorn's: each replacement serves before the worker it replaces is retired."""
        for index, old in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new = self._new(index)
            if not new.wait_until_ready(self.config.timeout_worker_healthcheck, self.should_exit):
                new.kill()
                new.join()
                forget_worker(new.pid)
                if not self.should_exit.is_set():
                    log.error(f"worker [{new.pid}] was not ready in time; restart aborted")
                return
            old.terminate()
            old.join()
            forget_worker(old.pid)
            self.processes[index] = new

    def keep_subprocess_alive(self) -> None:
        """As uvicorn's, except that a replacement takes over its predecessor's socket."""
        if self.should_exit.is_set():
            return
        for index, process in enumerate(self.processes):
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()
            process.join()
            forget_worker(process.pid)
            if process.exitcode == STARTUP_FAILURE:
                log.error(f"worker [{process.pid}] failed to start, stopping")
                self.should_exit.set()
                return
            if self.should_exit.is_set():
                return
            log.info(f"worker [{process.pid}] died; starting its replacement")
            self.processes[index] = self._new(index)

    def handle_ttin(self) -> None:
        log.info("SIGTTIN ignored: the worker count is fixed at start (one socket each)")

    def handle_ttou(self) -> None:
        log.info("SIGTTOU ignored: the worker count is fixed at start (one socket each)")


def serve_workers(config: Config) -> None:
    """Run ``config.workers`` workers on their own ``SO_REUSEPORT`` sockets until a signal."""
    sockets = bind_worker_sockets(config.host, config.port, config.workers, config.backlog)
    try:
        SpreadWorkers(config, sockets).run()
    finally:
        for sock in sockets:
            sock.close()


# --- memory ------------------------------------------------------------------------------

#: glibc's ``mallopt`` parameter for the number of malloc arenas.
_M_ARENA_MAX = -8
#: Arenas a serving process keeps: glibc's default is 8 per core, and every database thread
#: that frees a page's rows into an arena of its own keeps that memory (the SQLite
#: service's peak RSS over the benchmark's grid: 145-146 MB with the default, 138-139 MB
#: with two; docs/performance.md).
MALLOC_ARENAS = 2


def limit_malloc_arenas() -> bool:
    """Cap glibc's malloc arenas for this process and the workers it starts, unless the
    operator set ``MALLOC_ARENA_MAX``; whether the cap applies here (glibc only)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    os.environ["MALLOC_ARENA_MAX"] = str(MALLOC_ARENAS)  # read by glibc in each worker
    if platform.libc_ver()[0] != "glibc":
        return False
    # The running process's own symbols: glibc is loaded already, no library search.
    return bool(ctypes.CDLL(None).mallopt(_M_ARENA_MAX, MALLOC_ARENAS))


# --- connection bounds -------------------------------------------------------------------

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
    response = problem_response(
        Request(scope),
        code=UnavailableError.default_code,
        detail="the server holds as many connections as it allows; retry",
        headers={"Retry-After": RETRY_AFTER_SECONDS, "Connection": "close"},
    )
    await response(scope, receive, send)


#: The app that answers every request of a connection beyond the cap.
REFUSE_OVER_CAPACITY = cast(ASGI3Application, RequestIdMiddleware(_refuse_over_capacity))


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
            self.app = REFUSE_OVER_CAPACITY
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
        self.body_streamed = (self.scope.get("method"), self.scope.get("path")) == IMPORT_ROUTE
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


def serve_one_socket(config: Config) -> None:
    """``uvicorn.run`` for a prepared ``config``: one server, or uvicorn's workers on one
    shared socket (``serve_workers`` spreads them over one socket each)."""
    if config.workers > 1:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    server = Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises SIGINT once it is down
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
