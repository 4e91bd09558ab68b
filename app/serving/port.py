"""Whether ``serve`` can listen where it was told to, asked before it says it serves there."""

from __future__ import annotations

import errno
import socket


def listen_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, as one line of advice; ``None`` if it can.

    Binds a probe socket as uvicorn will (``SO_REUSEADDR``, without ``SO_REUSEPORT``: a
    running service's ``SO_REUSEPORT`` sockets then count as taken, so a second service is
    not silently added to the first one's group) and closes it at once.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        return _advice(host, port, exc)
    return None


def _advice(host: str, port: int, exc: OSError) -> str:
    where = f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} is in use on {host} (another runtime-store?): pass --port with a "
            f"free one, e.g. --port {port + 1} (or set RUNTIME_STORE_PORT)"
        )
    if exc.errno == errno.EACCES:
        return f"not allowed to listen on {where}: pass --port above 1023"
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return f"cannot listen on {where}: {host} is not an address of this machine (--host)"
    return f"cannot listen on {where}: {exc.strerror or exc}"
