"""Token storage: HMAC-SHA256 digests of bearer tokens under the service's token key.

The database keeps only the digest, so a copy of the database alone cannot be used to
authenticate. Every command runs in the unit of work, with its retries and its
``unavailable`` answer when the database does not answer.

A wrong key would make every token fail (401) with nothing to say why, so the database also
keeps a check value of the key (an HMAC of a fixed label under it, in ``service_keys``):
``serve`` compares it at start (``check_key``) and refuses a key that does not match while
active tokens exist. A database whose tokens predate the check value has it recorded once
the key is proven: by the bootstrap token, or at the first token that authenticates.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Sequence
from typing import Final, Literal, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.times import from_millis, now_millis
from app.domain.tokens import TOKEN_PREFIX, Role, TokenError, TokenInfo
from app.storage.database.tables import api_tokens, service_keys
from app.storage.unit_of_work.transactions import Tx, UnitOfWork
from runtime_store_client import UnavailableError

T = TypeVar("T")

#: Fewest random characters after the prefix of a token the operator chooses.
MIN_SECRET = 32

#: The ``service_keys`` row that holds the check value of the token key.
KEY_CHECK_NAME: Final = "token-key-check"

_KEY_CHECK_LABEL: Final = b"runtime-store token key check"

#: What ``check_key`` found: the key matches the stored check; no check was stored and it
#: is now (``recorded``); tokens exist without a check and nothing proves the key yet
#: (``unproven``: recorded at the first token that authenticates); or it does not match
#: the key the active tokens were made under.
KeyCheck = Literal["match", "recorded", "unproven", "mismatch"]

_ACTIVE = sa.select(sa.func.count()).where(api_tokens.c.revoked_at_ms.is_(None))

_CHECK = sa.select(service_keys.c.secret).where(service_keys.c.name == KEY_CHECK_NAME)

_ACTIVE_OF = sa.select(api_tokens.c.digest, api_tokens.c.name, api_tokens.c.role).where(
    api_tokens.c.digest.in_(sa.bindparam("digests", expanding=True)),
    api_tokens.c.revoked_at_ms.is_(None),
)

#: Digests asked for in one statement (far below either database's parameter limits).
_DIGESTS_PER_READ: Final = 500

_BY_NAME = sa.select(api_tokens.c.name).where(api_tokens.c.name == sa.bindparam("name"))


#: Why a key is refused: it is not the one the active tokens were made under.
WRONG_KEY: Final = (
    "RUNTIME_STORE_TOKEN_KEY is not the key the {count} active token(s) were created under "
    "(every request would be 401): set the key they were made with, or revoke them all "
    "(`runtime-store tokens revoke NAME`) to start over with this one"
)


class Tokens:
    """Token administration and authentication over one engine."""

    def __init__(self, engine: Engine, key: str | None) -> None:
        self._uow = UnitOfWork(engine, clock=now_millis)
        self._key = key.encode() if key else None
        # Whether this process knows the check value is stored (``authenticate``).
        self._check_stored = False

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
            self._settle_check(tx)
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
        return int(self._answered(lambda tx: tx.conn.execute(_ACTIVE).scalar_one()))

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
                if row.revoked_at_ms is None:  # this key made a live token: proven
                    self._store_check(tx, replace=False)
                return "present" if row.revoked_at_ms is None else "revoked"
            self._settle_check(tx)
            tx.conn.execute(
                api_tokens.insert().values(
                    name=name, role=Role(role).value, digest=digest, created_at_ms=tx.now_ms
                )
            )
            return "created"

        return self._uow.write(operation)

    def digest(self, token: str) -> str | None:
        """The keyed hash a token is stored under; ``None`` for a string that cannot be a
        token (no key configured, or not ``rst_…``): nothing to look up."""
        if self._key is None or not token.startswith(TOKEN_PREFIX):
            return None
        return self._digest(token)

    def authenticate(self, token: str) -> tuple[str, Role] | None:
        """The name and role of an active token, or ``None``."""
        digest = self.digest(token)
        return None if digest is None else self.identity_of(digest)

    def identity_of(self, digest: str) -> tuple[str, Role] | None:
        """The name and role of the active token stored under ``digest``, or ``None``."""
        row = self._answered(
            lambda tx: tx.conn.execute(
                sa.select(api_tokens.c.name, api_tokens.c.role, api_tokens.c.digest).where(
                    api_tokens.c.digest == digest, api_tokens.c.revoked_at_ms.is_(None)
                )
            ).first()
        )
        if row is None or not hmac.compare_digest(row.digest, digest):
            return None
        if not self._check_stored:
            self._prove_key()
        return row.name, Role(row.role)

    def active_of(self, digests: Sequence[str]) -> dict[str, tuple[str, Role]]:
        """Of ``digests``, those of active tokens, with their names and roles: one read
        for a whole cache's revalidation (``app/api/auth/identities.py``)."""

        def operation(tx: Tx) -> dict[str, tuple[str, Role]]:
            found: dict[str, tuple[str, Role]] = {}
            for start in range(0, len(digests), _DIGESTS_PER_READ):
                rows = tx.conn.execute(
                    _ACTIVE_OF, {"digests": list(digests[start : start + _DIGESTS_PER_READ])}
                )
                found.update({row.digest: (row.name, Role(row.role)) for row in rows})
            return found

        return self._answered(operation)

    # --- the check value of the key ------------------------------------------------------

    def check_key(self) -> KeyCheck:
        """Whether the configured key is the one the active tokens were made under
        (``serve`` asks at start); records the check value where nothing contradicts it."""
        check = self._check_value()

        def operation(tx: Tx) -> KeyCheck:
            stored = tx.conn.execute(_CHECK).scalar_one_or_none()
            active = tx.conn.execute(_ACTIVE).scalar_one()
            if stored is not None and hmac.compare_digest(bytes(stored), check):
                return "match"
            if active and stored is not None:
                return "mismatch"
            if active:
                return "unproven"
            self._store_check(tx, replace=True)  # no active token: any key may start over
            return "recorded"

        outcome = self._uow.write(operation)
        self._check_stored = outcome in ("match", "recorded")
        return outcome

    def _check_value(self) -> bytes:
        if self._key is None:
            raise TokenError("RUNTIME_STORE_TOKEN_KEY is not set")
        return hmac.new(self._key, _KEY_CHECK_LABEL, hashlib.sha256).digest()

    def _settle_check(self, tx: Tx) -> None:
        """Before a new token is stored: refuse a key other than the active tokens' (they
        would all stop working); record the check value when no active token contradicts
        it. Tokens made before the check value existed leave it to ``authenticate``."""
        check = self._check_value()
        stored = tx.conn.execute(_CHECK).scalar_one_or_none()
        if stored is not None and hmac.compare_digest(bytes(stored), check):
            return
        active = tx.conn.execute(_ACTIVE).scalar_one()
        if active and stored is not None:
            raise TokenError(WRONG_KEY.format(count=active))
        if not active:
            self._store_check(tx, replace=True)

    def _store_check(self, tx: Tx, *, replace: bool) -> None:
        check = self._check_value()
        if replace:
            tx.conn.execute(service_keys.delete().where(service_keys.c.name == KEY_CHECK_NAME))
        elif tx.conn.execute(_CHECK).first() is not None:
            return
        tx.conn.execute(
            service_keys.insert().values(name=KEY_CHECK_NAME, secret=check, created_at_ms=tx.now_ms)
        )

    def _prove_key(self) -> None:
        """A token authenticated under this key: record its check value if none is yet
        (once per process; a failure only defers it, the request goes on)."""
        try:
            # A read first: the check is almost always there, and a write would queue
            # behind SQLite's one writer.
            if self._uow.read(lambda tx: tx.conn.execute(_CHECK).first()) is None:
                self._uow.write(lambda tx: self._store_check(tx, replace=False))
        except (sa.exc.SQLAlchemyError, UnavailableError):
            return
        self._check_stored = True

    def _answered(self, operation: Callable[[Tx], T]) -> T:
        try:
            return self._uow.read(operation)
        except sa.exc.SQLAlchemyError as exc:
            raise UnavailableError("cannot check credentials: the database is unavailable") from exc
