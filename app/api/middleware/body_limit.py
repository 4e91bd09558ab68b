"""Request bodies over the limit are refused with 413 ``payload_too_large``.

Checked on ``Content-Length`` first and then while the body streams in, so a chunked or
lying client cannot push more than the limit into memory. The body is read here (the
endpoints read it whole anyway) and replayed to the app once it is known to fit.

A *streamed* route (``IMPORT_ROUTE``: a session import, CONTRACT.md 11.4) reads its body as
a stream instead: it has its own bound, checked the same way, and its body passes through
unbuffered; past the bound its next read raises ``payload_too_large``.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runtime_store_client import PayloadTooLargeError

from ..problems import problem_response

#: (method, path) of the route that reads its body as a stream (a session import).
IMPORT_ROUTE = ("POST", "/v1/sessions/import")


class BodySizeLimit:
    """Pure ASGI middleware enforcing a maximum request body size."""

    def __init__(
        self, app: ASGIApp, max_bytes: int, streamed: Mapping[tuple[str, str], int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        #: The bound of each streamed route, by (method, path).
        self.streamed = dict(streamed or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bound = self.streamed.get((scope["method"], scope["path"]))
        if bound is not None:
            await self._streamed(scope, receive, send, bound)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _streamed(self, scope: Scope, receive: Receive, send: Send, bound: int) -> None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > bound:
            await self._refuse(scope, send, bound)
            return
        await self.app(scope, _counted(receive, bound), send)

    async def _refuse(self, scope: Scope, send: Send, bound: int | None = None) -> None:
        response = problem_response(
            Request(scope),
            code=PayloadTooLargeError.default_code,
            detail=f"the request body is larger than {bound or self.max_bytes} bytes",
            headers={"Connection": "close"},
        )

        async def nothing() -> Message:
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)


def _counted(receive: Receive, bound: int) -> Receive:
    """``receive`` that raises ``payload_too_large`` once the body passes ``bound``."""
    size = 0

    async def counted() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > bound:
                raise PayloadTooLargeError(f"the request body is larger than {bound} bytes")
        return message

    return counted
