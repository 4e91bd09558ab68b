"""Authentication and authorization: who a request's token is (``Authenticate``, before the
body; ``Identities``, the process's known tokens) and what each route needs (``READ``,
``WRITE``, ``ADMIN``)."""

from .identities import REVALIDATE_SECONDS, REVOCATION_BOUND_SECONDS, Identities
from .middleware import Authenticate
from .permissions import (
    ADMIN,
    READ,
    WRITE,
    AuthMode,
    bearer,
    check,
    identity_of,
    still_authorized,
    tokens_without_key,
)

__all__ = [
    "ADMIN",
    "READ",
    "REVALIDATE_SECONDS",
    "REVOCATION_BOUND_SECONDS",
    "WRITE",
    "Authenticate",
    "AuthMode",
    "Identities",
    "bearer",
    "check",
    "identity_of",
    "still_authorized",
    "tokens_without_key",
]
