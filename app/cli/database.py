"""``runtime-store db upgrade|check|verify``: the schema and the stored invariants."""

from __future__ import annotations

import typer

from .common import _database_url, _missing_sqlite_file, db


@db.command("upgrade")
def db_upgrade(
    database_url: str | None = typer.Option(
        None, help="Database URL (default: RUNTIME_STORE_DATABASE_URL or the SQLite file)."
    ),
) -> None:
    """Apply every migration up to head."""
    from app.storage.migrate import schema_is_current, upgrade_schema

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
    """Exit non-zero when the schema is not at head (a missing SQLite file is not created)."""
    from app.storage.migrate import schema_is_current

    url = _database_url(database_url)
    missing = _missing_sqlite_file(url)
    if missing:
        typer.echo(f"no SQLite database at {missing}: run `runtime-store db upgrade`", err=True)
        raise typer.Exit(1)
    ok, current, head = schema_is_current(url)
    if ok:
        typer.echo(f"schema at head ({head})")
        return
    typer.echo(
        f"schema at {current or 'nothing'}, head is {head}: run `runtime-store db upgrade`",
        err=True,
    )
    raise typer.Exit(1)


@db.command("verify")
def db_verify(
    database_url: str | None = typer.Option(
        None, help="Database URL (default: RUNTIME_STORE_DATABASE_URL or the SQLite file)."
    ),
) -> None:
    """Check the stored data's invariants without writing; exit 1 on any violation."""
    from app.storage.engine import DatabaseError, create_engine, database_errors, normalize_url
    from app.storage.verify import verify_database

    url = normalize_url(_database_url(database_url))
    # Exit 2 when there is nothing to judge, distinct from 1, "violations found".
    missing = _missing_sqlite_file(str(url.render_as_string(hide_password=False)))
    if missing:
        typer.echo(f"cannot verify: no SQLite database at {missing}", err=True)
        raise typer.Exit(2)
    engine = create_engine(url)
    try:
        with database_errors():
            report = verify_database(engine)
    except DatabaseError as exc:
        typer.echo(f"cannot verify the database: {exc}", err=True)
        raise typer.Exit(2) from None
    finally:
        engine.dispose()
    for violation in report.violations:
        typer.echo(
            f"{violation.invariant}\trun={violation.run_id or '-'}\t"
            f"session={violation.session_id or '-'}\t{violation.detail}"
        )
    typer.echo(report.summary())
    if not report.ok:
        raise typer.Exit(1)
