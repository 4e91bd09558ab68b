"""The ``runtime-store`` command: database administration (and, later, serve)."""

from __future__ import annotations

import typer

from app.settings import Settings
from app.storage.migrate import schema_is_current, upgrade_schema

cli = typer.Typer(help="runtime-store: the durable runtime-state owner for agent runtimes.")
db = typer.Typer(help="Database schema administration.")
cli.add_typer(db, name="db")


def _database_url(url: str | None) -> str:
    return url or Settings().database_url


@db.command("upgrade")
def db_upgrade(
    database_url: str | None = typer.Option(
        None, help="Database URL (default: RUNTIME_STORE_DATABASE_URL or the SQLite file)."
    ),
) -> None:
    """Apply every migration up to head."""
    url = _database_url(database_url)
    upgrade_schema(url)
    ok, current, _ = schema_is_current(url)
    typer.echo(f"schema at {current}" if ok else "schema upgrade did not reach head", err=not ok)
    if not ok:
        raise typer.Exit(1)


@db.command("check")
def db_check(
    database_url: str | None = typer.Option(
        None, help="Database URL (default: RUNTIME_STORE_DATABASE_URL or the SQLite file)."
    ),
) -> None:
    """Exit non-zero when the schema is not at head."""
    ok, current, head = schema_is_current(_database_url(database_url))
    if ok:
        typer.echo(f"schema at head ({head})")
        return
    typer.echo(
        f"schema at {current or 'nothing'}, head is {head}: run `runtime-store db upgrade`",
        err=True,
    )
    raise typer.Exit(1)


def main() -> None:
    cli()
