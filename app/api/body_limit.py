"""Request bodies over the limit are refused with 413 ``payload_too_large``.

Checked on ``Content-Length`` first and then while the body streams in, so a chunked or
lying client cannot push more than the limit into memory. The body is read here (the
endpoints read it whole anyway) and replayed to the app once it is known to fit.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runtime_store_client import PayloadTooLargeError

from .problems import problem_response


class BodySizeLimit:
    """Pure ASGI middleware enforcing a maximum request body size."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
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

    async def _refuse(self, scope: Scope, send: Send) -> None:
        response = problem_response(
            Request(scope),
            code=PayloadTooLargeError.default_code,
            detail=f"the request body is larger than {self.max_bytes} bytes",
            headers={"Connection": "close"},
        )

        async def nothing() -> Message:
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)
