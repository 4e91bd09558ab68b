"""Bearer tokens and roles: what each role may do, and what may be shown of a token.

A token is ``rst_`` followed by 43 URL-safe characters (256 random bits): recognisable in a
leaked log or a secret scanner, and impossible to guess. Storage keeps only its keyed hash
(app/storage/access/tokens.py).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

TOKEN_PREFIX: Final = "rst_"


class Role(enum.StrEnum):
    ADMIN = "admin"
    WORKER = "worker"
    READER = "reader"


class Permission(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


PERMISSIONS: Final[dict[Role, frozenset[Permission]]] = {
    Role.ADMIN: frozenset(Permission),
    Role.WORKER: frozenset({Permission.READ, Permission.WRITE}),
    Role.READER: frozenset({Permission.READ}),
}


class TokenError(ValueError):
    """A token command that cannot be carried out (name taken, unknown name, no key)."""


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown of a token: never the secret."""

    name: str
    role: Role
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a request's token is: its name and role (what the access line shows and the
    permission checks read) and the keyed hash it is stored under (never the token)."""

    name: str
    role: Role
    digest: str = field(repr=False)

    def may(self, permission: Permission) -> bool:
        return permission in PERMISSIONS[self.role]
