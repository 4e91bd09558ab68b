"""Is a PostgreSQL server still answering? (CONTRACT.md 16: a frozen server is found and
its connections cut, so a multi-host URL's next host is tried.)

A frozen machine's kernel still takes the bytes of a statement, so TCP never notices;
a probe on a connection of its own does: an ``SSLRequest``, which any live postmaster
answers with one byte at once, before authentication. The watchdog
(``statement_watchdog``) probes before it cancels; one that gets no answer cuts the
statement's connection (``sever_connection``).
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import time
from typing import Any, Final

log = logging.getLogger("runtime_store.interrupts")

#: Longest a probe waits for a server's answer; one that takes longer is not answering.
PROBE_TIMEOUT_SECONDS: Final = 1.0
#: How long a probe's answer stands for every statement on the same server: a frozen
#: server with twenty statements waiting costs one probe, not twenty.
_PROBE_MEMORY_SECONDS: Final = 1.0
#: PostgreSQL's ``SSLRequest`` packet: length 8, code 80877103.
_SSL_REQUEST: Final = struct.pack("!ii", 8, 80877103)

_probed: dict[tuple[str, int], tuple[float, bool]] = {}


def answers(dbapi: Any) -> bool:
    """Whether the server of a psycopg connection answers a probe within
    ``PROBE_TIMEOUT_SECONDS`` (its answer stands ``_PROBE_MEMORY_SECONDS``). Called on
    the watchdog thread only."""
    try:
        info = dbapi.info
        host = info.host
        address = host if host.startswith("/") else (info.hostaddr or host)
        port = int(info.port)
    except Exception:  # a connection already closed: nothing to wait for
        return False
    now = time.monotonic()
    known = _probed.get((address, port))
    if known is not None and now - known[0] < _PROBE_MEMORY_SECONDS:
        return known[1]
    answered = probe(address, port)
    if not answered:
        log.warning("database server %s:%s does not answer; cutting its connections", host, port)
    _probed[(address, port)] = (time.monotonic(), answered)
    return answered


def probe(address: str, port: int) -> bool:
    """An SSL request to a PostgreSQL server: any live postmaster answers one byte at
    once, before authentication; a frozen or unreachable one does not."""
    try:
        if address.startswith("/"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(PROBE_TIMEOUT_SECONDS)
            sock.connect(f"{address}/.s.PGSQL.{port}")
        else:
            sock = socket.create_connection((address, port), timeout=PROBE_TIMEOUT_SECONDS)
        with sock:
            sock.settimeout(PROBE_TIMEOUT_SECONDS)
            sock.sendall(_SSL_REQUEST)
            return sock.recv(1) != b""
    except OSError:
        return False


def sever_connection(dbapi: Any) -> None:
    """Shut a psycopg connection's socket down: whatever waits on it (on any thread, or
    the event loop) fails at once with a lost connection, which SQLAlchemy takes for a
    disconnect (the pool's connections are dropped)."""
    try:
        fd = dbapi.pgconn.socket
    except Exception:  # closed already
        return
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
