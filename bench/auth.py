"""How the bench's services authenticate, and the tokens its clients send.

Production serves with tokens required, and so does the bench by default (``--auth
tokens``): every ``runtime-store serve`` it starts gets ``RUNTIME_STORE_TOKEN_KEY`` and a
bootstrap admin token (``RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN``), and once it has migrated
its database ``runtime-store tokens create --role worker`` makes the token the measured
calls send (``servers.start_service``). Admin-only calls (creating, ending and purging
sessions, export and import, webhooks) send the admin token. ``--auth open`` serves
without a key, as the bench did before, for the comparison. The secrets are random for
each sitting and never printed.
"""

from __future__ import annotations

import argparse
import secrets
from dataclasses import dataclass, field
from typing import Any, Final

from app.domain.tokens import TOKEN_PREFIX

#: ``tokens``: every service requires a token; ``open``: none does.
MODES: Final = ("tokens", "open")
#: The operator commands' variable for a token: how a helper process of the bench gets its.
TOKEN_ENV: Final = "RUNTIME_STORE_TOKEN"
KEY_ENV: Final = "RUNTIME_STORE_TOKEN_KEY"
BOOTSTRAP_ENV: Final = "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN"


@dataclass(frozen=True)
class Tokens:
    """What a client of one service sends: the worker token with the measured calls, the
    admin token with admin-only ones; ``None`` each when the service runs open."""

    worker: str | None = field(default=None, repr=False)
    admin: str | None = field(default=None, repr=False)


#: What a client of an open service sends.
NO_TOKENS: Final = Tokens()


def headers(token: str | None) -> dict[str, str]:
    """The ``Authorization`` header of a raw HTTP request (none without a token)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass(frozen=True)
class Auth:
    """A sitting's authentication. Its services share one key and one bootstrap admin
    token: some serve the same database, and ``serve`` refuses a key other than the one
    the database's tokens were made under."""

    mode: str
    key: str = field(default="", repr=False)
    admin_token: str = field(default="", repr=False)

    @staticmethod
    def of(mode: str) -> Auth:
        """New random secrets for ``tokens``; none for ``open``."""
        if mode not in MODES:
            raise ValueError(f"unknown auth mode {mode!r}; known: {', '.join(MODES)}")
        if mode == "open":
            return Auth(mode)
        return Auth(mode, secrets.token_urlsafe(32), TOKEN_PREFIX + secrets.token_urlsafe(32))

    @property
    def required(self) -> bool:
        return self.mode == "tokens"

    def apply(self, env: dict[str, str]) -> None:
        """Set the token settings of a ``serve`` environment, or remove them (open): the
        service runs in this mode whatever the bench's own environment holds."""
        if self.required:
            env[KEY_ENV], env[BOOTSTRAP_ENV] = self.key, self.admin_token
        else:
            env.pop(KEY_ENV, None)
            env.pop(BOOTSTRAP_ENV, None)


def mode_of(meta: dict[str, Any]) -> str:
    """The mode a result file's run served in (files from before ``--auth``: open)."""
    return str(meta.get("config", {}).get("auth", "open"))


def describe(mode: str) -> str:
    """How a table's figures were served, for its heading."""
    if mode == "tokens":
        return "auth tokens (required: a worker token on each call, the admin's on admin-only ones)"
    return "auth open (no token key, no token sent)"


def add_argument(parser: argparse.ArgumentParser, *, both: bool = False) -> None:
    """``--auth``, default ``tokens``; ``both`` among the choices where a run can compare."""
    parser.add_argument(
        "--auth",
        choices=(*MODES, "both") if both else MODES,
        default="tokens",
        help="serve with tokens required (default, as production) or open"
        + ("; both: measure in each, side by side" if both else ""),
    )
