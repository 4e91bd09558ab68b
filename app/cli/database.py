"""``runtime-store db upgrade|check|verify``: the schema and the stored invariants."""

from __future__ import annotations

import typer

from . import opening
from .common import DatabaseUrl, db
from .opening import POINT


@db.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Apply every migration up to head; a missing SQLite file is created (and said so)."""
    from app.storage.database.inspection import State
    from app.storage.database.migrations import schema_is_current, upgrade_schema

    where = opening.target(database_url)
    found = opening.inspect(where)
    # A SQLite file of something else is a wrong path, not a place to add tables to.
    refused = {State.NOT_SQLITE, State.NEWER} | ({State.FOREIGN} if where.sqlite_file else set())
    if found.state in refused:
        opening.refuse(opening.advice(where, found))
    folder = where.sqlite_file.parent if where.sqlite_file else None
    if found.state is State.MISSING and folder is not None and not folder.is_dir():
        opening.refuse(f"no directory {folder} for the SQLite file ({where.source}): {POINT}")
    upgrade_schema(where.url)
    if found.state is State.MISSING:
        typer.echo(f"created a new SQLite database at {where.sqlite_file}", err=True)
    opening.announce(where)
    ok, current, _ = schema_is_current(where.url)
    typer.echo(f"schema at {current}" if ok else "schema upgrade did not reach head", err=not ok)
    if not ok:
        raise typer.Exit(1)


@db.command("check")
def db_check(database_url: DatabaseUrl = None) -> None:
    """Exit non-zero when the schema is not at head (a missing SQLite file is not created)."""
    where = opening.target(database_url)
    found = opening.inspect(where)
    if not found.ready:
        opening.refuse(opening.advice(where, found), code=1)
    opening.announce(where)
    typer.echo(f"schema at head ({found.head})")


@db.command("verify")
def db_verify(database_url: DatabaseUrl = None) -> None:
    """Check the stored data's invariants without writing; exit 1 on any violation."""
    from app.storage.database.engines import DatabaseError, create_engine, database_errors
    from app.storage.verify import verify_database

    # Exit 2 when there is nothing to judge, distinct from 1, "violations found".
    where = opening.open_ready(database_url)
    engine = create_engine(where.url)
    try:
        with database_errors():
            report = verify_database(engine)
    except DatabaseError as exc:
        typer.echo(f"cannot verify {where.shown}: {exc}", err=True)
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
