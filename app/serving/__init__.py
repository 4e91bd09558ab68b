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

from .bounds import (
    FD_HEADROOM,
    BoundedConfig,
    BoundedHttpToolsProtocol,
    ConnectionBounds,
    connection_cap,
    open_file_limit,
)
from .memory import MALLOC_ARENAS, freeze_startup_heap, limit_malloc_arenas
from .port import listen_problem
from .workers import (
    CRASH_LOOP_STARTS,
    DEFAULT_START_TIMEOUT_SECONDS,
    TEST_START_DELAY_ENV,
    TEST_START_EXIT_ENV,
    SpreadWorkers,
    Worker,
    bind_worker_sockets,
    reuse_port_available,
    serve_one_socket,
    serve_workers,
)

__all__ = [
    "CRASH_LOOP_STARTS",
    "DEFAULT_START_TIMEOUT_SECONDS",
    "FD_HEADROOM",
    "MALLOC_ARENAS",
    "TEST_START_DELAY_ENV",
    "TEST_START_EXIT_ENV",
    "BoundedConfig",
    "BoundedHttpToolsProtocol",
    "ConnectionBounds",
    "SpreadWorkers",
    "Worker",
    "bind_worker_sockets",
    "connection_cap",
    "freeze_startup_heap",
    "limit_malloc_arenas",
    "listen_problem",
    "open_file_limit",
    "reuse_port_available",
    "serve_one_socket",
    "serve_workers",
]
