"""Several uvicorn workers that share the load: one ``SO_REUSEPORT`` socket per worker.

uvicorn's own multi-worker mode binds one socket and hands it to every worker; whichever
worker wakes first accepts every pending connection, so a client that opens its keep-alive
pool in one burst lands on one worker (16 of 16 connections in the benchmark) while the
others idle. Here the parent binds one listening socket per worker on the same address
with ``SO_REUSEPORT``, and the kernel spreads new connections over them. Each worker
serves its own socket; a replacement for a dead worker takes over the same socket, so
connections that queued on it meanwhile are served, not lost. The supervision (health
checks, restarts, signals) is uvicorn's ``Multiprocess``.
"""

from __future__ import annotations

import logging
import socket

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess, Process

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
                if not self.should_exit.is_set():
                    log.error(f"worker [{new.pid}] was not ready in time; restart aborted")
                return
            old.terminate()
            old.join()
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
