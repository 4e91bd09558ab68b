"""Bearer-token authentication with roles: admin, worker, reader.

Whether the service requires tokens is decided once, when its database first answers: once
any token was ever created (revoked ones included) every request must carry an active one.
With none, the service runs open; ``serve`` allows that only on a loopback address unless
told ``--insecure``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.api.offload import Offload
from app.domain.tokens import PERMISSIONS, Permission
from app.storage.tokens import Tokens
from runtime_store_client import AuthError, StoreError, UnavailableError

log = logging.getLogger("runtime_store.auth")

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="A runtime-store token (`rst_…`) made by `runtime-store tokens create`.",
)


class AuthState:
    """Whether tokens are required, decided once the database has answered."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens
        self._required: bool | None = None

    def decided_open(self) -> bool:
        """Decided, and no token exists: nothing to check (and no database to ask)."""
        return self._required is False

    def required(self) -> bool:
        """Tokens are required once any exists; until the database answers, nobody gets in."""
        if self._required is None:
            required = self.tokens.any_configured()  # UnavailableError while it cannot
            if not required:
                log.warning("no API tokens exist: the service runs OPEN, without authentication")
            self._required = required
        return self._required


def decide_auth(tokens: Tokens) -> AuthState:
    """The auth state of an app; decided at start when the database answers, else later."""
    state = AuthState(tokens)
    try:
        state.required()
    except UnavailableError:
        log.warning("the database does not answer yet; authentication is decided later")
    return state


def _check(request: Request, token: str | None, permission: Permission) -> None:
    auth: AuthState = request.app.state.auth
    if not auth.required():
        return
    if token is None:
        raise AuthError("a bearer token is required")
    found = auth.tokens.authenticate(token)
    if found is None:
        raise AuthError("the bearer token is unknown or revoked")
    name, role = found
    request.state.token_name = name
    if permission not in PERMISSIONS[role]:
        raise AuthError(
            f"the {role.value} role may not {permission.value}",
            code="permission_denied",
            status=403,
        )


def refuse_unauthorized(request: Request) -> StoreError | None:
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
    try:
        _check(request, token.strip() if scheme.lower() == "bearer" and token else None, permission)
    except StoreError as exc:  # AuthError, or UnavailableError while the database is down
        return exc
    return None


def _authorize(permission: Permission) -> Any:
    async def check(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    ) -> None:
        # async, so that open mode costs no thread hand-off; a token lookup (a database
        # read) runs on the database threads.
        auth: AuthState = request.app.state.auth
        if auth.decided_open():
            return
        token = None if credentials is None else credentials.credentials
        offload: Offload = request.app.state.offload
        await offload(_check, request, token, permission)

    check.permission = permission  # type: ignore[attr-defined]
    return Depends(check)


#: Route dependencies, by what the operation does.
READ = _authorize(Permission.READ)
WRITE = _authorize(Permission.WRITE)
ADMIN = _authorize(Permission.ADMIN)
