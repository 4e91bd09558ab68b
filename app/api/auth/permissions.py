"""Bearer tokens with roles (admin, worker, reader): the service's mode and each route's
permission check.

Whether the service requires tokens is configuration, the same for every worker and
replica: tokens are required exactly when ``RUNTIME_STORE_TOKEN_KEY`` is set, and nothing
is guessed from the database. Without a key the service runs open; ``serve`` refuses that
when active tokens exist in the database (they would silently stop counting), and on any
address but loopback unless told ``--insecure``; ``/readyz`` answers 503 while active tokens
exist without a key (e.g. one created while the service ran open).

Who the caller is was settled before the body was read (``Authenticate``); a route's check
compares that identity's role with the route's permission, with no store call.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from fastapi import Security
from fastapi.security import HTTPBearer
from starlette.requests import HTTPConnection

from app.api.store_calls import StoreCalls
from app.domain.tokens import PERMISSIONS, Identity, Permission, Role
from app.storage import Tokens
from runtime_store_client import AuthError, StoreError

from .identities import Identities

log = logging.getLogger("runtime_store.auth")

#: The ``token`` security scheme of the OpenAPI document.
bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="A runtime-store token (`rst_…`) made by `runtime-store tokens create`.",
)

#: Where the identity of a request lives: the key Starlette's ``request.user`` reads.
SCOPE_KEY: Final = "user"


def tokens_without_key(count: int) -> str:
    """What ``serve`` and ``/readyz`` say when active tokens exist but no key is set."""
    return (
        f"{count} active token(s) exist in the database but RUNTIME_STORE_TOKEN_KEY is not "
        "set: set it to the key they were made with (tokens are then required), or revoke them"
    )


def _roles_with(permission: Permission) -> str:
    roles = [role.value for role in Role if permission in PERMISSIONS[role]]
    return " or ".join(roles)


def identity_of(connection: HTTPConnection) -> Identity | None:
    """The authenticated identity of a request, if it carried an active token."""
    identity = connection.scope.get(SCOPE_KEY)
    return identity if isinstance(identity, Identity) else None


def unauthenticated(connection: HTTPConnection) -> AuthError:
    """The refusal of a request without an active token."""
    if "authorization" not in connection.headers:
        return AuthError("a bearer token is required")
    return AuthError("the bearer token is unknown or revoked")


def check(connection: HTTPConnection, permission: Permission) -> AuthError | None:
    """Why the request's identity may not do what ``permission`` allows, or ``None``."""
    identity = identity_of(connection)
    if identity is None:
        return unauthenticated(connection)
    if identity.may(permission):
        return None
    return AuthError(
        f"this operation needs a token of the {_roles_with(permission)} role; the token "
        f"{identity.name!r} has the {identity.role.value} role",
        code="permission_denied",
        status=403,
    )


class AuthMode:
    """The service's authentication, fixed when it starts: tokens are required exactly when
    a token key is configured. ``identities`` holds this process's known tokens."""

    def __init__(self, tokens: Tokens, calls: StoreCalls, *, required: bool) -> None:
        self.tokens = tokens
        self.required = required
        self.identities = Identities(tokens, calls)
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

    def refusal(self, connection: HTTPConnection) -> StoreError | None:
        """The auth error of a request by its matched route's permission, if any: what a
        request whose body failed to parse is answered (``app/api/problems.py``)."""
        if not self.required:
            return None
        route = connection.scope.get("route")
        for dependency in getattr(route, "dependencies", ()):
            permission = getattr(dependency.dependency, "permission", None)
            if isinstance(permission, Permission):
                return check(connection, permission)
        return None


async def still_authorized(connection: HTTPConnection) -> bool:
    """Whether a request that was let in may go on: its token not revoked since (open mode:
    always). Streams and waits ask every ``REVALIDATE_SECONDS``, so a revoked token's
    stream ends, and its wait is refused, within the revocation bound. ``UnavailableError``
    when the database cannot say."""
    auth: AuthMode = connection.app.state.auth
    if not auth.required:
        return True
    identity = identity_of(connection)
    return identity is not None and await auth.identities.confirm(identity)


class _Authorize(HTTPBearer):
    """A route's permission check, as its one dependency.

    It is the ``token`` security scheme of the OpenAPI document (an ``HTTPBearer``, so the
    document names the scheme) and checks the permission itself against the identity
    ``Authenticate`` found: one dependency to resolve per request, no header parsed again.
    """

    def __init__(self, permission: Permission) -> None:
        super().__init__(
            auto_error=False, scheme_name=bearer.scheme_name, description=bearer.model.description
        )
        self.permission = permission

    async def __call__(self, request: HTTPConnection) -> None:
        # async, so that no check costs a thread hand-off.
        self.authorize(request)

    def authorize(self, connection: HTTPConnection) -> None:
        """Raise the refusal of a request that may not do what this route does."""
        if not connection.app.state.auth.required:
            return
        refused = check(connection, self.permission)
        if refused is not None:
            raise refused


def _authorize(permission: Permission) -> Any:
    return Security(_Authorize(permission))


#: Route dependencies, by what the operation does.
READ = _authorize(Permission.READ)
WRITE = _authorize(Permission.WRITE)
ADMIN = _authorize(Permission.ADMIN)
