"""``runtime-store tokens create|list|revoke``: bearer tokens (shown once at creation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from app.domain.tokens import Role, TokenError, TokenInfo

if TYPE_CHECKING:
    from app.storage.access.tokens import Tokens
from . import opening
from .common import DatabaseUrl, tokens_cli


def _tokens(database_url: str | None) -> Tokens:
    from app.settings import Settings
    from app.storage.access.tokens import Tokens
    from app.storage.database.engines import create_engine

    where = opening.open_ready(database_url)
    settings = Settings()
    key = settings.token_key.get_secret_value() if settings.token_key else None
    return Tokens(create_engine(where.url), key)


@tokens_cli.command("create")
def tokens_create(
    name: Annotated[str, typer.Option(help="A unique name for the token's holder.")],
    role: Annotated[Role, typer.Option(help="admin, worker or reader.")] = Role.WORKER,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a token and print it: this is the only time it is shown."""
    try:
        token = _tokens(database_url).create(name, role)
    except TokenError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    typer.echo(token)


@tokens_cli.command("list")
def tokens_list(
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table.")] = False,
) -> None:
    """Name, role, state, creation and revocation of every token (never the secret), in a
    table or as JSON lines; times as the API writes them (RFC 3339, UTC, milliseconds)."""
    from app.operator_cli import print_table
    from runtime_store_client.times import format_rfc3339

    def document(info: TokenInfo) -> dict[str, str | None]:
        return {
            "name": info.name,
            "role": info.role.value,
            "state": "revoked" if info.revoked_at else "active",
            "created_at": format_rfc3339(info.created_at),
            "revoked_at": format_rfc3339(info.revoked_at) if info.revoked_at else None,
        }

    print_table(
        iter([_tokens(database_url).list()]),
        as_json,
        document,
        ["NAME", "ROLE", "STATE", "CREATED", "REVOKED"],
        lambda info: [str(value or "") for value in document(info).values()],
        nothing="no tokens: create one with `runtime-store tokens create --name NAME`",
    )


@tokens_cli.command("revoke")
def tokens_revoke(
    name: Annotated[str, typer.Argument(help="The token's name.")],
    database_url: DatabaseUrl = None,
) -> None:
    """Revoke a token: it stops working at once."""
    try:
        _tokens(database_url).revoke(name)
    except TokenError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    typer.echo(f"revoked {name}")
