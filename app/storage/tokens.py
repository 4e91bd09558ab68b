"""Bearer tokens with roles, stored only as keyed hashes.

A token is ``rst_`` followed by 43 URL-safe characters (256 random bits): recognisable in a
leaked log or a secret scanner, and impossible to guess. The database keeps the
HMAC-SHA256 of the token under the service's token key, so a copy of the database alone
cannot be used to authenticate.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.times import from_millis, now_millis

from .schema import api_tokens

TOKEN_PREFIX = "rst_"


class Role(enum.StrEnum):
    ADMIN = "admin"
    WORKER = "worker"
    READER = "reader"


class Permission(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


PERMISSIONS: dict[Role, frozenset[Permission]] = {
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


class Tokens:
    """Token administration and authentication over one engine."""

    def __init__(self, engine: Engine, key: str | None) -> None:
        self._engine = engine
        self._key = key.encode() if key else None

    def _digest(self, token: str) -> str:
        if self._key is None:
            raise TokenError(
                "set RUNTIME_STORE_TOKEN_KEY to a long random secret (the key of the token "
                'hashes), e.g. python -c "import secrets; print(secrets.token_urlsafe(32))"'
            )
        return hmac.new(self._key, token.encode(), hashlib.sha256).hexdigest()

    def create(self, name: str, role: Role) -> str:
        """Store a new token and return it: the only time it is ever shown."""
        if not name:
            raise TokenError("a token needs a name")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        try:
            with self._engine.begin() as conn:
                conn.execute(
                    api_tokens.insert().values(
                        name=name,
                        role=Role(role).value,
                        digest=self._digest(token),
                        created_at_ms=now_millis(),
                    )
                )
        except sa.exc.IntegrityError:
            raise TokenError(f"a token named {name!r} already exists") from None
        return token

    def list(self) -> list[TokenInfo]:
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(api_tokens).order_by(api_tokens.c.name)).all()
        return [
            TokenInfo(
                name=row.name,
                role=Role(row.role),
                created_at=from_millis(row.created_at_ms),
                revoked_at=None if row.revoked_at_ms is None else from_millis(row.revoked_at_ms),
            )
            for row in rows
        ]

    def revoke(self, name: str) -> None:
        with self._engine.begin() as conn:
            found = conn.execute(
                api_tokens.update()
                .where(api_tokens.c.name == name)
                .values(revoked_at_ms=sa.func.coalesce(api_tokens.c.revoked_at_ms, now_millis()))
            ).rowcount
        if not found:
            raise TokenError(f"no token named {name!r}")

    def any_configured(self) -> bool:
        """Whether any token was ever created (revoked ones count: auth stays on)."""
        with self._engine.connect() as conn:
            return conn.execute(sa.select(api_tokens.c.name).limit(1)).first() is not None

    def authenticate(self, token: str) -> tuple[str, Role] | None:
        """The name and role of an active token, or ``None``."""
        if not token.startswith(TOKEN_PREFIX) or self._key is None:
            return None
        digest = self._digest(token)
        with self._engine.connect() as conn:
            row = conn.execute(
                sa.select(api_tokens.c.name, api_tokens.c.role, api_tokens.c.digest).where(
                    api_tokens.c.digest == digest, api_tokens.c.revoked_at_ms.is_(None)
                )
            ).first()
        if row is None or not hmac.compare_digest(row.digest, digest):
            return None
        return row.name, Role(row.role)
