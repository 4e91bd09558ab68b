"""Offline docs: the pages may load only what the service itself serves.

Swagger UI and ReDoc come from fastapi-offline's packaged copies under /docs-assets. The
ReDoc bundle still names a logo on a CDN; a Content-Security-Policy on the docs pages
keeps the browser from fetching anything that is not served here.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

DOCS_PATHS = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        # The pages bootstrap the bundles with an inline script; ReDoc runs a blob: worker.
        "script-src 'self' 'unsafe-inline' blob:",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
    )
)


class DocsSecurityHeaders:
    """Pure ASGI middleware adding the docs pages' Content-Security-Policy."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in DOCS_PATHS:
            await self.app(scope, receive, send)
            return

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_policy)
