"""Request IDs: taken from a sane ``X-Request-ID`` header or made up, echoed on responses."""

from __future__ import annotations

import re
import secrets

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.context import REQUEST_ID

HEADER = "x-request-id"
_HEADER_BYTES = HEADER.encode()
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def request_id_of(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


class RequestIdMiddleware:
    """Pure ASGI middleware: no body buffering, one header added."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = ""
        for name, value in scope["headers"]:
            if name == _HEADER_BYTES:
                incoming = value.decode("latin-1")  # the last one, as a dict of them kept
        # 32 random hex digits, as ``uuid4().hex`` but without building a UUID per request.
        request_id = incoming if _SANE.fullmatch(incoming) else secrets.token_hex(16)
        scope.setdefault("state", {})["request_id"] = request_id
        # Every log line written while this request is served carries its ID (the request
        # runs in a task of its own, so the value ends with it).
        REQUEST_ID.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((_HEADER_BYTES, request_id.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_id)
