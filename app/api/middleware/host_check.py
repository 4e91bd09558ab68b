"""An open service answers only loopback hosts (CONTRACT.md section 8, "Browsers and open
mode").

Without a token key nothing authenticates a request, and ``serve`` listens on loopback only
(unless ``--insecure``). A browser on the same machine still reaches it through *DNS
rebinding*: a page of ``evil.example`` has that name re-resolve to ``127.0.0.1`` and then
reads and writes the service as its own origin. Such a request names ``evil.example`` in its
``Host`` header, which a page cannot change. So an open service answers only requests whose
``Host`` is a loopback name or address (``localhost``, ``127.0.0.0/8``, ``[::1]``; any port)
or one of ``RUNTIME_STORE_ALLOWED_HOSTS``; any other is ``403 permission_denied``. With a
token key the middleware is not installed: tokens protect the service.

A request made in process (httpx's ``ASGITransport``, as the console calls the API, or
Starlette's ``TestClient``) never reached a socket, so no browser made it: its transport
names the URL's host as the ASGI ``server``, where a network server names the IP address of
its listening socket, which no request can change. Those requests are answered whatever
their ``Host``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Final

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from runtime_store_client import PermissionDeniedError

from ..problems import problem_response

ALLOWED_HOSTS_SETTING: Final = "RUNTIME_STORE_ALLOWED_HOSTS"
_LOOPBACK_NAMES: Final = frozenset({"localhost"})
#: Distinct ``Host`` values (and listening addresses) whose decision is remembered.
_KNOWN_HOSTS: Final = 256


def host_name(host: str) -> str | None:
    """The name or address of a ``Host`` value (``name``, ``name:port``, ``[v6]:port``),
    lower case, without a trailing dot; ``None`` when it is not one."""
    host = host.strip().lower()
    if host.startswith("["):
        address, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and _is_port(rest[1:]))):
            return None
        return address if _is_ip(address) else None
    if host.count(":") > 1:  # a bare IPv6 address (an allowed-hosts entry may be one)
        return host if _is_ip(host) else None
    name, colon, port = host.partition(":")
    if colon and not _is_port(port):
        return None
    name = name.removesuffix(".")
    if not name or not all(char.isascii() and (char.isalnum() or char in "-._") for char in name):
        return None
    return name


def _is_port(text: str) -> bool:
    return text == "" or (text.isascii() and text.isdigit())


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_loopback(name: str) -> bool:
    """Whether a host name (``host_name``) always means this machine."""
    if name in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _in_process(scope: Scope) -> bool:
    """Whether the request came from an in-process transport, not a socket (module doc)."""
    server = scope.get("server")
    if not server:
        return False
    host = server[0]
    return isinstance(host, str) and not _is_ip(host)


def allowed_names(entries: Iterable[str]) -> frozenset[str]:
    """The names of ``RUNTIME_STORE_ALLOWED_HOSTS`` entries (a port in one is ignored);
    ``ValueError`` for an entry that is no host name or address."""
    names = set()
    for entry in entries:
        name = host_name(entry)
        if name is None:
            raise ValueError(f"{ALLOWED_HOSTS_SETTING}: {entry!r} is not a host name or address")
        names.add(name)
    return frozenset(names)


class HostCheck:
    """Pure ASGI middleware refusing, in open mode, any ``Host`` but loopback and the
    ``allowed`` names (``allowed_names``)."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.allowed = allowed
        #: Decisions by ``Host`` value and by listening address: a client sends the same
        #: few on every request, and parsing them (``ipaddress``) costs more than the rest
        #: of this middleware. Bounded: emptied when full, so no request can grow it.
        self._admitted: dict[str, bool] = {}
        self._in_process: dict[object, bool] = {}

    def admits(self, host: str) -> bool:
        known = self._admitted.get(host)
        if known is None:
            name = host_name(host)
            known = name is not None and (is_loopback(name) or name in self.allowed)
            if len(self._admitted) >= _KNOWN_HOSTS:
                self._admitted.clear()
            self._admitted[host] = known
        return known

    def _from_process(self, scope: Scope) -> bool:
        server = scope.get("server")
        key = server[0] if server else None
        known = self._in_process.get(key)
        if known is None:
            known = _in_process(scope)
            if len(self._in_process) >= _KNOWN_HOSTS:
                self._in_process.clear()
            self._in_process[key] = known
        return known

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._from_process(scope):
            await self.app(scope, receive, send)
            return
        hosts = [value.decode("latin-1") for name, value in scope["headers"] if name == b"host"]
        if hosts and all(self.admits(host) for host in hosts):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # refused before the handshake: HTTP 403
            await send({"type": "websocket.close", "code": 1008})
            return
        named = f"Host {hosts[0]!r}" if hosts else "a request without a Host"
        response = problem_response(
            Request(scope),
            code=PermissionDeniedError.default_code,
            detail=f"{named} is not served: without a token key the service answers only "
            f"loopback hosts (localhost, 127.0.0.1, [::1]) and those in {ALLOWED_HOSTS_SETTING}",
        )
        await response(scope, receive, send)
