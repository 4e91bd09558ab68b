"""``X-Content-Type-Options: nosniff`` on every response (CONTRACT.md section 8).

A browser then takes every response as the type it declares: a problem, a JSON body that
quotes a caller's text or an NDJSON export is never run as a script or shown as a page.
Responses that already say so (the console's) keep their one header. The problems the
connection writes itself (``app/serving.py``: 400, 408, 503), which never pass through a
middleware, carry it from ``problem_response``.
"""

from __future__ import annotations

from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF_NAME: Final = "X-Content-Type-Options"
NOSNIFF_VALUE: Final = "nosniff"
_NAME: Final = NOSNIFF_NAME.lower().encode()
_HEADER: Final = (_NAME, NOSNIFF_VALUE.encode())


class NoSniff:
    """Pure ASGI middleware adding ``X-Content-Type-Options: nosniff`` where it is missing."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == _NAME for name, _ in headers):
                    headers.append(_HEADER)
                    message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_nosniff)
