"""``Authenticate``: every API request's bearer token, settled once, before its body.

Pure ASGI, just inside ``Front``: with tokens required, the ``Authorization`` header of a
request to the API (``/v1/…``) or ``/metrics`` is looked up in this process's known
identities (``Identities``: a known token costs no store call) and the identity put in the
request's scope, where each route's permission check reads it. An API request without an
active token is refused here with 401 ``unauthenticated``, before a byte of its body is
read, so a caller without a token can make the service neither buffer nor parse anything.
The other paths (health, docs, the console's pages, whose data calls pass through here as
API requests) are not looked at.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runtime_store_client import AuthError, StoreError

from ..problems import store_error_response
from .permissions import SCOPE_KEY, AuthMode, unauthenticated

#: Paths whose requests are authenticated, and of those the ones refused without a token.
_IDENTIFIED: Final = ("/v1/", "/metrics")
_REQUIRED: Final = "/v1/"

_BEARER: Final = b"bearer "


def bearer_token(scope: Scope) -> str | None:
    """The token of the request's ``Authorization: Bearer`` header, if it has one.

    ``AuthError`` for two ``Authorization`` headers: which one counts would be a guess
    (a proxy and the service may each take another)."""
    found = [value for name, value in scope["headers"] if name == b"authorization"]
    if len(found) > 1:
        raise AuthError("the request carries more than one Authorization header")
    if not found or found[0][:7].lower() != _BEARER:
        return None
    token: str = found[0][7:].strip().decode("latin-1")
    return token


class Authenticate:
    """Pure ASGI middleware: the request's identity from its token, or its refusal."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(_IDENTIFIED):
            await self.app(scope, receive, send)
            return
        auth: AuthMode = scope["app"].state.auth
        if not auth.required:
            await self.app(scope, receive, send)
            return
        try:
            token = bearer_token(scope)
            identity = None if token is None else await auth.identities.of(token)
        except StoreError as exc:  # two headers; or the database cannot say (retryable)
            await _refuse(scope, send, exc)
            return
        if identity is not None:
            scope[SCOPE_KEY] = identity
        elif scope["path"].startswith(_REQUIRED):
            await _refuse(scope, send, unauthenticated(Request(scope)))
            return
        await self.app(scope, receive, send)


async def _refuse(scope: Scope, send: Send, error: StoreError) -> None:
    response = store_error_response(Request(scope), error)

    async def nothing() -> Message:  # the body is never read
        return {"type": "http.disconnect"}

    await response(scope, nothing, send)
