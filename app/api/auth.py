"""Bearer-token authentication with roles: admin, worker, reader.

Whether the service requires tokens is configuration, the same for every worker and
replica: tokens are required exactly when ``RUNTIME_STORE_TOKEN_KEY`` is set, and nothing
is guessed from the database. Without a key the service runs open; ``serve`` refuses that
when active tokens exist in the database (they would silently stop counting), and on any
address but loopback unless told ``--insecure``; ``/readyz`` answers 503 while active tokens
exist without a key (e.g. one created while the service ran open).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from app.api.store_calls import StoreCalls
from app.domain.tokens import PERMISSIONS, Permission
from app.storage import Tokens
from runtime_store_client import AuthError, StoreError

log = logging.getLogger("runtime_store.auth")

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="A runtime-store token (`rst_…`) made by `runtime-store tokens create`.",
)


def tokens_without_key(count: int) -> str:
    """What ``serve`` and ``/readyz`` say when active tokens exist but no key is set."""
    return (
        f"{count} active token(s) exist in the database but RUNTIME_STORE_TOKEN_KEY is not "
        "set: set it to the key they were made with (tokens are then required), or revoke them"
    )


class AuthMode:
    """The service's authentication, fixed when it starts: tokens are required exactly when
    a token key is configured."""

    def __init__(self, tokens: Tokens, *, required: bool) -> None:
        self.tokens = tokens
        self.required = required
        if not required:
            log.warning(
                "RUNTIME_STORE_TOKEN_KEY is not set: the service runs OPEN, without authentication"
            )

    def misconfiguration(self) -> str | None:
        """Why the auth setup is broken, or ``None``: an open service over a database that
        holds active tokens. Reads the database (``UnavailableError`` when it cannot)."""
        if self.required:
            return None
        count = self.tokens.active_count()
        return tokens_without_key(count) if count else None


def check_permission(request: HTTPConnection, token: str | None, permission: Permission) -> None:
    auth: AuthMode = request.app.state.auth
    if not auth.required:
        return
    if token is None:
        raise AuthError("a bearer token is required")
    found = auth.tokens.authenticate(token)
    if found is None:
        raise AuthError("the bearer token is unknown or revoked")
    name, role = found
    request.state.token_name = name
    request.state.token_role = role.value  # for the access line: never the token itself
    if permission not in PERMISSIONS[role]:
        raise AuthError(
            f"the {role.value} role may not {permission.value}",
            code="permission_denied",
            status=403,
        )


async def refuse_unauthorized(request: Request) -> StoreError | None:
    """The auth error of a request whose body could not even be parsed, if any.

    FastAPI parses the body before it runs dependencies; a request that would be refused
    must be refused as such, not answered with a validation error that reveals the API.
    """
    route = request.scope.get("route")
    permission = next(
        (
            getattr(dependency.dependency, "permission", None)
            for dependency in getattr(route, "dependencies", ())
            if getattr(dependency.dependency, "permission", None) is not None
        ),
        Permission.ADMIN if route is None else None,
    )
    if permission is None:
        return None
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    calls: StoreCalls = request.app.state.calls
    try:
        await calls(
            check_permission,
            request,
            token.strip() if scheme.lower() == "bearer" and token else None,
            permission,
        )
    except StoreError as exc:  # AuthError, or UnavailableError while the database is down
        return exc
    return None


class _Authorize(HTTPBearer):
    """A route's bearer scheme and permission check as one dependency.

    It is the ``token`` security scheme of the OpenAPI document (an ``HTTPBearer``, so
    the document is unchanged) and checks the permission itself: one dependency to
    resolve per request instead of a check and the scheme beneath it (FastAPI's
    resolution costs per dependency; docs/performance.md, "The HTTP path").
    """

    def __init__(self, permission: Permission) -> None:
        super().__init__(
            auto_error=False, scheme_name=bearer.scheme_name, description=bearer.model.description
        )
        self.permission = permission

    async def __call__(self, request: HTTPConnection) -> None:
        # async, so that open mode costs no thread hand-off; a token lookup (a database
        # read) runs on the database threads.
        auth: AuthMode = request.app.state.auth
        if not auth.required:
            return
        await self.authorize(request, await super().__call__(request))

    async def authorize(
        self, request: HTTPConnection, credentials: HTTPAuthorizationCredentials | None
    ) -> None:
        """The check of a required token, given the bearer credentials (if any)."""
        auth: AuthMode = request.app.state.auth
        if not auth.required:
            return
        token = None if credentials is None else credentials.credentials
        calls: StoreCalls = request.app.state.calls
        await calls(check_permission, request, token, self.permission)


def _authorize(permission: Permission) -> Any:
    return Security(_Authorize(permission))


#: Route dependencies, by what the operation does.
READ = _authorize(Permission.READ)
WRITE = _authorize(Permission.WRITE)
ADMIN = _authorize(Permission.ADMIN)
