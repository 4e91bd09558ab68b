"""Offline docs: the pages may load only what the service itself serves.

Swagger UI and ReDoc come from fastapi-offline's packaged copies under /docs-assets. The
ReDoc bundle names a logo on a CDN (beside "API docs by Redocly" in its menu); the copy
served here names none, so the logo is left out (ReDoc drops an image that fails). A
Content-Security-Policy on the docs pages keeps the browser from fetching anything that
is not served here.
"""

from __future__ import annotations

import functools
from pathlib import Path

import fastapi_offline
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

DOCS_PATHS = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})
REDOC_BUNDLE = "/docs-assets/redoc.standalone.js"
#: The one address outside this service that the packaged ReDoc bundle loads.
REDOC_CDN_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"


@functools.cache
def offline_redoc_bundle() -> bytes:
    """fastapi-offline's ReDoc bundle without its CDN logo (an empty image source)."""
    bundle = Path(fastapi_offline.__file__).parent / "static" / "redoc.standalone.js"
    return bundle.read_bytes().replace(REDOC_CDN_LOGO, b"")


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


#: The header ``front.Front`` adds to the docs pages' responses.
CSP_HEADER = (b"content-security-policy", CONTENT_SECURITY_POLICY.encode())


class OfflineRedocBundle:
    """Pure ASGI middleware serving the offline ReDoc bundle (``offline_redoc_bundle``) in
    place of fastapi-offline's static copy."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == REDOC_BUNDLE and scope["method"] == "GET":
            response = Response(
                offline_redoc_bundle(),
                media_type="text/javascript",
                headers={"Cache-Control": "public, max-age=3600"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
