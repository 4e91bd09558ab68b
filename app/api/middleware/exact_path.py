"""Every identifier is reachable: a path segment names exactly one ID (CONTRACT.md 2.9).

An ID may hold ``/``; over HTTP it travels percent-encoded in its segment (``%2F``). The
server decodes the whole path before routing, so ``GET /v1/sessions/a%2Fstatus`` would reach
the status of session ``a``. ``ExactPath`` routes on the raw path instead: it splits
``raw_path`` on ``/``, decodes each segment and gives the router a path in which a decoded
segment keeps its ``/`` and ``%`` escaped (``%2F``, ``%25``); a path parameter is unescaped
by its type (``exact_segment``, in the parameter types of ``app/api/deps.py``), so the route
gets exactly the ID. A path with no ``%`` has nothing to escape and is routed as it came.

Text is text (2.6): a path or query whose percent-decoded bytes are not UTF-8
(``/v1/sessions/%ED%A0%80``, ``?cursor=%ff``), which the server would silently decode to
U+FFFD, is ``422 invalid_argument``.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote, unquote_to_bytes

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runtime_store_client import InvalidArgumentError

from ..problems import problem_response

_SLASH: Final = b"/"


def exact_segment(value: str) -> str:
    """The ID a routed path segment names: ``ExactPath``'s escapes undone."""
    return unquote(value) if "%" in value else value


def _escaped(segment: bytes) -> str:
    """A raw segment decoded (UTF-8, strictly) with its ``%`` and ``/`` escaped again."""
    text = unquote_to_bytes(segment).decode("utf-8")
    return text.replace("%", "%25").replace("/", "%2F")


def _routed_path(raw_path: bytes) -> str | None:
    """The path to route on for ``raw_path``; ``None`` when a segment is not UTF-8."""
    try:
        return "/".join(_escaped(segment) for segment in raw_path.split(_SLASH))
    except UnicodeDecodeError:
        return None


def _query_is_text(query: bytes) -> bool:
    """Whether every name and value of a query string decodes to UTF-8 text."""
    if query.isascii() and b"%" not in query:
        return True
    if not query.isascii():  # raw bytes beyond ASCII: not a URI; the server reads Latin-1
        return False
    try:
        for pair in query.split(b"&"):
            for part in pair.split(b"=", 1):
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class ExactPath:
    """Pure ASGI middleware: routing on the raw path, and path and query text checked."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw_path = scope.get("raw_path")
        if raw_path is not None:
            raw_path = raw_path.partition(b"?")[0]
            if b"%" in raw_path or not raw_path.isascii():
                routed = _routed_path(raw_path)
                if routed is None:
                    await self._refuse(scope, send, "the request path")
                    return
                scope["path"] = routed
        if not _query_is_text(scope.get("query_string", b"")):
            await self._refuse(scope, send, "the query string")
            return
        await self.app(scope, receive, send)

    async def _refuse(self, scope: Scope, send: Send, what: str) -> None:
        response = problem_response(
            Request(scope),
            code=InvalidArgumentError.default_code,
            detail=f"{what} is not valid UTF-8 once percent-decoded",
        )

        async def nothing() -> Message:
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)
