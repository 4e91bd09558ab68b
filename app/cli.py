"""The ``runtime-store`` command: serve, database administration, OpenAPI export."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import yaml

from app.settings import Settings
from app.storage.migrate import schema_is_current, upgrade_schema, upgrade_schema_exclusively

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


@cli.command("openapi")
def openapi(
    output: Annotated[Path, typer.Option(help="Where to write the document.")] = Path(
        "openapi.yaml"
    ),
) -> None:
    """Export the app's OpenAPI document as YAML (the committed openapi.yaml)."""
    output.write_text(openapi_yaml())
    typer.echo(f"wrote {output}")


def openapi_yaml() -> str:
    """The OpenAPI document of the app, as the YAML text committed at the repository root."""
    from app.main import create_app

    document = create_app(Settings(database_url="sqlite://")).openapi()
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


@cli.command("serve")
def serve(
    host: str = typer.Option(
        "127.0.0.1", envvar="RUNTIME_STORE_HOST", help="Address to listen on."
    ),
    port: int = typer.Option(8000, envvar="RUNTIME_STORE_PORT", help="Port to listen on."),
    workers: int = typer.Option(
        0,
        envvar="RUNTIME_STORE_WORKERS",
        help="Worker processes (0: one per core on PostgreSQL; always 1 on SQLite).",
    ),
    no_migrate: bool = typer.Option(
        False,
        "--no-migrate",
        envvar="RUNTIME_STORE_NO_MIGRATE",
        help="Do not apply migrations at start.",
    ),
) -> None:
    """Apply migrations (unless --no-migrate), then serve the HTTP API with uvicorn."""
    import os

    import uvicorn

    settings = Settings()
    if not no_migrate:
        upgrade_schema_exclusively(settings.database_url)
        _, current, _ = schema_is_current(settings.database_url)
        typer.echo(f"database schema at {current}")
    if settings.database_url.startswith("sqlite"):
        if workers > 1:
            typer.echo("SQLite allows one writer process: serving with 1 worker.", err=True)
        workers = 1
    elif workers <= 0:
        workers = os.cpu_count() or 1
    typer.echo(f"runtime-store on http://{host}:{port} (docs at /docs), {workers} worker(s)")
    uvicorn.run(
        "app.main:create_app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
    )


def main() -> None:
    cli()
