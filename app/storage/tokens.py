"""Token storage: HMAC-SHA256 digests of bearer tokens under the service's token key.

The database keeps only the digest, so a copy of the database alone cannot be used to
authenticate. Every command runs in the unit of work, with its retries and its
``unavailable`` answer when the database does not answer.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.times import from_millis, now_millis
from app.domain.tokens import TOKEN_PREFIX, Role, TokenError, TokenInfo
from runtime_store_client import UnavailableError

from .schema import api_tokens
from .unit_of_work import Tx, UnitOfWork

T = TypeVar("T")

#: Fewest random characters after the prefix of a token the operator chooses.
MIN_SECRET = 32

_BY_NAME = sa.select(api_tokens.c.name).where(api_tokens.c.name == sa.bindparam("name"))


class Tokens:
    """Token administration and authentication over one engine."""

    def __init__(self, engine: Engine, key: str | None) -> None:
        self._uow = UnitOfWork(engine, clock=now_millis)
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
        row = {"name": name, "role": Role(role).value, "digest": self._digest(token)}

        def operation(tx: Tx) -> None:
            # A name taken by a concurrent create is seen here on the unit of work's retry.
            if tx.conn.execute(_BY_NAME, {"name": name}).first() is not None:
                raise TokenError(f"a token named {name!r} already exists")
            tx.conn.execute(api_tokens.insert().values(created_at_ms=tx.now_ms, **row))

        self._uow.write(operation)
        return token

    def list(self) -> list[TokenInfo]:
        rows = self._uow.read(
            lambda tx: tx.conn.execute(sa.select(api_tokens).order_by(api_tokens.c.name)).all()
        )
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
        """Revoke an active token; an unknown or already revoked name is a ``TokenError``."""

        def operation(tx: Tx) -> None:
            row = tx.conn.execute(
                sa.select(api_tokens.c.revoked_at_ms).where(api_tokens.c.name == name)
            ).first()
            if row is None:
                raise TokenError(f"no token named {name!r}")
            if row.revoked_at_ms is not None:
                raise TokenError(f"token {name!r} was already revoked")
            tx.conn.execute(
                api_tokens.update().where(api_tokens.c.name == name).values(revoked_at_ms=tx.now_ms)
            )

        self._uow.write(operation)

    def active_count(self) -> int:
        """How many tokens are active (not revoked).

        ``unavailable`` when the database cannot answer, whatever the reason (down, or no
        schema yet).
        """
        return int(
            self._answered(
                lambda tx: tx.conn.execute(
                    sa.select(sa.func.count()).where(api_tokens.c.revoked_at_ms.is_(None))
                ).scalar_one()
            )
        )

    def ensure(self, name: str, role: Role, token: str) -> str:
        """Store ``token`` (chosen by the operator) under ``name`` unless that name exists:
        what a container's first start does with the token given in its environment, and
        every later start repeats harmlessly. Returns ``"created"``, ``"present"`` (this very
        token), ``"revoked"`` (this token, revoked: it stays so) or ``"other"`` (the name
        holds another token, or the token another name: both are left alone)."""
        if not token.startswith(TOKEN_PREFIX) or len(token) < len(TOKEN_PREFIX) + MIN_SECRET:
            raise TokenError(
                f"a token must be {TOKEN_PREFIX!r} followed by at least {MIN_SECRET} random "
                f"characters, e.g. python -c \"import secrets; print('{TOKEN_PREFIX}' + "
                'secrets.token_urlsafe(32))"'
            )
        digest = self._digest(token)

        def operation(tx: Tx) -> str:
            # The token may also exist under another name (its digest is unique).
            row = tx.conn.execute(
                sa.select(api_tokens.c.name, api_tokens.c.digest, api_tokens.c.revoked_at_ms)
                .where(sa.or_(api_tokens.c.name == name, api_tokens.c.digest == digest))
                .order_by(api_tokens.c.name != name)
            ).first()
            if row is not None:
                if row.name != name or not hmac.compare_digest(row.digest, digest):
                    return "other"
                return "present" if row.revoked_at_ms is None else "revoked"
            tx.conn.execute(
                api_tokens.insert().values(
                    name=name, role=Role(role).value, digest=digest, created_at_ms=tx.now_ms
                )
            )
            return "created"

        return self._uow.write(operation)

    def authenticate(self, token: str) -> tuple[str, Role] | None:
        """The name and role of an active token, or ``None``."""
        if not token.startswith(TOKEN_PREFIX) or self._key is None:
            return None
        digest = self._digest(token)
        row = self._answered(
            lambda tx: tx.conn.execute(
                sa.select(api_tokens.c.name, api_tokens.c.role, api_tokens.c.digest).where(
                    api_tokens.c.digest == digest, api_tokens.c.revoked_at_ms.is_(None)
                )
            ).first()
        )
        if row is None or not hmac.compare_digest(row.digest, digest):
            return None
        return row.name, Role(row.role)

    def _answered(self, operation: Callable[[Tx], T]) -> T:
        try:
            return self._uow.read(operation)
        except sa.exc.SQLAlchemyError as exc:
            raise UnavailableError("cannot check credentials: the database is unavailable") from exc
