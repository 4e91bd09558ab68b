"""Several uvicorn workers that share the load: one ``SO_REUSEPORT`` socket per worker,
supervised with a start-up timeout (the package docstring says why)."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import socket
import sys
import time
from typing import TYPE_CHECKING, Final

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.server import Server
from uvicorn.supervisors.multiprocess import Multiprocess, Process

if TYPE_CHECKING:
    pass


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
