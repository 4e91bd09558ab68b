"""Several uvicorn workers that share the load: one ``SO_REUSEPORT`` socket per worker.

uvicorn's own multi-worker mode binds one socket and hands it to every worker; whichever
worker wakes first accepts every pending connection, so a client that opens its keep-alive
pool in one burst lands on one worker (16 of 16 connections in the benchmark) while the
others idle. Here the parent binds one listening socket per worker on the same address
with ``SO_REUSEPORT``, and the kernel spreads new connections over them. Each worker
serves its own socket; a replacement for a dead worker takes over the same socket, so
connections that queued on it meanwhile are served, not lost. The supervision (health
checks, restarts, signals) is uvicorn's ``Multiprocess``, except at start: a starting worker
is given a start-up timeout instead of the health check's 5 s (a loaded machine may take
longer than that to import the app), and failed starts in a row stop the service
(``SpreadWorkers``).

Every worker also bounds its connections (``BoundedHttpToolsProtocol``, docs/reliability.md
"Connection bounds"): request headers must arrive within a deadline, a request body within
another, an idle keep-alive connection is closed (uvicorn's ``timeout_keep_alive``), and a
worker holding its maximum of connections answers new ones ``503 unavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import logging
import os
import pickle
import platform
import resource
import socket
import sys
import time
import uuid
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final, cast

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import Server, ServerState
from uvicorn.supervisors.multiprocess import Multiprocess, Process

if TYPE_CHECKING:
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send
    from uvicorn._types import ASGI3Application

# A worker process starts by importing this module (it unpickles its ``BoundedConfig`` and
# its ``Worker``) and answers the supervisor's health checks only afterwards: everything of
# the app (FastAPI, SQLAlchemy, the client package) is imported where it is used, so that
# this takes a fraction of a second even on a loaded machine (``Worker``).

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


#: Seconds a new worker may take to start serving (import, app, lifespan) before it is
#: replaced (``RUNTIME_STORE_WORKER_START_TIMEOUT_SECONDS``).
DEFAULT_START_TIMEOUT_SECONDS: Final = 90
#: Worker starts that fail in a row (a worker dies, or is not ready in time, before it
#: serves; no start succeeds in between) after which ``serve`` stops instead of retrying.
CRASH_LOOP_STARTS: Final = 5
#: Tests only: a worker sleeps this many seconds before it answers health checks, as one
#: still importing on a loaded machine does.
TEST_START_DELAY_ENV: Final = "RUNTIME_STORE_TEST_WORKER_START_DELAY"
#: Tests only: a worker exits with this status as it starts, as one that crashes does.
TEST_START_EXIT_ENV: Final = "RUNTIME_STORE_TEST_WORKER_START_EXIT"


class Worker(Process):
    """uvicorn's worker process, with its start watched by the supervisor.

    A new worker answers health checks only once it has imported what it needs to unpickle
    (this module) and it is ``ready`` once its server serves. Until then the supervisor
    asks without waiting (``poll_ready``), one question at a time, and gives it
    ``start_timeout`` seconds instead of the health check's few.
    """

    def __init__(self, config: Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        self.started_at = 0.0
        self.ready = False
        self._asked = False

    def start(self) -> None:
        self.started_at = time.monotonic()
        super().start()

    def starting_for(self) -> float:
        """Seconds since this worker was started."""
        return time.monotonic() - self.started_at

    def poll_ready(self) -> bool:
        """Whether the worker's server serves, without waiting for its answer: a ping is
        sent unless one is unanswered, and an answer that arrived is read."""
        if self.ready:
            return True
        try:
            if not self._asked:
                self.parent_conn.send(b"ping")
                self._asked = True
            if self.parent_conn.poll(0):
                self._asked = False
                self.ready = bool(self.parent_conn.recv())
        except (OSError, EOFError, pickle.UnpicklingError):
            return False
        return self.ready

    def target(self, sockets: list[socket.socket] | None = None) -> None:  # pragma: no cover
        """In the worker process: uvicorn's, after the tests' start-up hooks."""
        delay = os.environ.get(TEST_START_DELAY_ENV)
        if delay:
            time.sleep(float(delay))
        exit_status = os.environ.get(TEST_START_EXIT_ENV)
        if exit_status:
            sys.exit(int(exit_status))
        super().target(sockets)


class SpreadWorkers(Multiprocess):
    """``Multiprocess`` where worker ``i`` always serves ``worker_sockets[i]`` (all the same
    socket when there is one for all), with a start-up timeout and a crash-loop stop.

    * A worker that is starting (not yet serving) is given ``start_timeout`` seconds, not
      the health check's 5: on a loaded machine its imports alone may take longer. Past
      the timeout it is logged (``worker [pid] not ready within N s``) and replaced.
    * A serving worker that dies or misses a health check is replaced, as in uvicorn.
    * ``CRASH_LOOP_STARTS`` failed starts in a row (no worker became ready in between)
      stop the service with one error line; ``failed`` is then set (as when a worker's
      lifespan fails: uvicorn's ``STARTUP_FAILURE``), and ``serve_workers`` exits non-zero.
    """

    def __init__(
        self,
        config: Config,
        worker_sockets: list[socket.socket],
        start_timeout: float = DEFAULT_START_TIMEOUT_SECONDS,
    ) -> None:
        super().__init__(config, sockets=[])
        self.worker_sockets = worker_sockets
        self.processes_num = len(worker_sockets)
        self.start_timeout = start_timeout
        self.failed_starts = 0
        self.failed = False
        self.processes: list[Worker] = []  # type: ignore[assignment]

    def _new(self, index: int) -> Worker:
        process = Worker(self.config, [self.worker_sockets[index]])
        process.start()
        return process

    def init_processes(self) -> None:
        self.processes = [self._new(index) for index in range(self.processes_num)]

    def _wait_until_ready(self, process: Worker) -> bool:
        """Whether ``process`` serves within the start-up timeout (not on exit or death)."""
        while process.starting_for() < self.start_timeout:
            if self.should_exit.is_set() or not process.process.is_alive():
                return False
            if process.poll_ready():
                return True
            time.sleep(0.1)
        return False

    def restart_all(self) -> None:
        """As uvicorn's: each replacement serves before the worker it replaces is retired."""
        from app.observability.metrics import forget_worker

        for index, old in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new = self._new(index)
            if not self._wait_until_ready(new):
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
        """As uvicorn's, except that a replacement takes over its predecessor's socket, a
        starting worker is given the start-up timeout, and a crash loop stops."""
        for index, process in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            if not process.ready and process.process.is_alive():
                if process.poll_ready():
                    self.failed_starts = 0
                    continue
                if process.starting_for() < self.start_timeout:
                    continue  # still starting: no health check kills it
                self._replace(index, process, hung=True)
            elif not process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                self._replace(index, process, hung=False)

    def _replace(self, index: int, process: Worker, *, hung: bool) -> None:
        """Retire ``process`` (dead, hung at start, or not answering) and start another in
        its place, unless the service stops."""
        from app.observability.metrics import forget_worker

        process.kill()
        process.join()
        forget_worker(process.pid)
        if process.exitcode == STARTUP_FAILURE:
            log.error(f"worker [{process.pid}] failed to start, stopping")
            self._stop_failed()
            return
        if self.should_exit.is_set():
            return
        if process.ready:
            log.info(f"worker [{process.pid}] died; starting its replacement")
        else:
            self.failed_starts += 1
            ended = (
                f"not ready within {self.start_timeout:g} s"
                if hung
                else f"{_ended(process)} while starting"
            )
            if self.failed_starts >= CRASH_LOOP_STARTS:
                log.error(
                    f"worker [{process.pid}] {ended}: {self.failed_starts} worker starts in "
                    "a row failed, stopping"
                )
                self._stop_failed()
                return
            log.error(f"worker [{process.pid}] {ended}; starting its replacement")
        self.processes[index] = self._new(index)

    def _stop_failed(self) -> None:
        self.failed = True
        self.should_exit.set()

    def handle_ttin(self) -> None:
        log.info("SIGTTIN ignored: the worker count is fixed at start (one socket each)")

    def handle_ttou(self) -> None:
        log.info("SIGTTOU ignored: the worker count is fixed at start (one socket each)")


def _ended(process: Process) -> str:
    """How a dead worker ended: its exit status or its signal."""
    code = process.exitcode
    if code is None:
        return "ended"
    return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"


def serve_workers(config: Config, start_timeout: float = DEFAULT_START_TIMEOUT_SECONDS) -> None:
    """Run ``config.workers`` workers on their own ``SO_REUSEPORT`` sockets until a signal;
    exit with uvicorn's ``STARTUP_FAILURE`` status when the workers cannot start."""
    sockets = bind_worker_sockets(config.host, config.port, config.workers, config.backlog)
    try:
        _supervise(config, sockets, start_timeout)
    finally:
        for sock in sockets:
            sock.close()


def _supervise(config: Config, sockets: list[socket.socket], start_timeout: float) -> None:
    supervisor = SpreadWorkers(config, sockets, start_timeout)
    supervisor.run()
    if supervisor.failed:
        sys.exit(STARTUP_FAILURE)


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
    from app.api.request_id import RequestIdMiddleware

    return cast("ASGI3Application", RequestIdMiddleware(_refuse_over_capacity))


@functools.cache
def _import_route() -> tuple[str, str]:
    from app.api.body_limit import IMPORT_ROUTE

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


def serve_one_socket(config: Config, start_timeout: float = DEFAULT_START_TIMEOUT_SECONDS) -> None:
    """``uvicorn.run`` for a prepared ``config``: one server, or workers sharing one socket
    (``serve_workers`` spreads them over one socket each), supervised alike."""
    if config.workers > 1:
        sock = config.bind_socket()
        try:
            _supervise(config, [sock] * config.workers, start_timeout)
        finally:
            sock.close()
        return
    server = Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises SIGINT once it is down
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
