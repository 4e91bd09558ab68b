"""Opening the database for the commands that use it directly (``db``, ``tokens``,
``retention``): each names the database it opened (password hidden), never creates a SQLite
file by accident, and says in one line what to do when the database is not one it can use.

The default URL is a file relative to the working directory, so a command run from the
wrong directory would otherwise open (and SQLite create) an empty database there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

import typer

from . import common

if TYPE_CHECKING:
    from app.storage.database.inspection import Found

ENV: Final = "RUNTIME_STORE_DATABASE_URL"

#: How to name the right database, in every piece of advice.
POINT: Final = f"point {ENV} or --database-url at the service's database"


@dataclass(frozen=True)
class Target:
    """The database a command was told to use, and where that came from."""

    url: str  # as given (password included): what the command connects with
    shown: str  # password hidden, a SQLite path made absolute: what it prints
    source: str  # "--database-url", the variable, or the default
    sqlite_file: Path | None  # a SQLite URL's file, if it names one


def target(option: str | None) -> Target:
    """The database of ``--database-url``, else of the variable, else the default file; a
    URL that cannot be one is one line naming where it came from (password hidden)."""
    from app.settings import (
        DEFAULT_DATABASE_URL,
        database_url_advice,
        database_url_problem,
        mask_secrets,
    )
    from app.storage.database.inspection import display_url

    if option:
        url, source = option, "--database-url"
    elif os.environ.get(ENV):
        url, source = os.environ[ENV], ENV
    else:
        url, source = DEFAULT_DATABASE_URL, f"the default: {ENV} is not set"
    problem = database_url_problem(url)
    if problem is not None:
        advice = mask_secrets(database_url_advice(url, problem))
        refuse(f"{source}={mask_secrets(url)} is not valid: {advice}")
    shown, file = display_url(url)
    common.note_database(shown)
    return Target(url=url, shown=shown, source=source, sqlite_file=file)


def inspect(where: Target) -> Found:
    """What the database holds, without creating or changing anything."""
    from app.storage.database.inspection import inspect_database

    return inspect_database(where.url)


def advice(where: Target, found: Found) -> str:
    """One line: what is wrong with the database, and what to do."""
    name = where.shown
    from app.storage.database.inspection import State

    match found.state:
        case State.MISSING:
            return (
                f"no SQLite database at {where.sqlite_file} ({where.source}); nothing was "
                f"created: {POINT}, or create it there with `runtime-store db upgrade`"
            )
        case State.NOT_SQLITE:
            return f"{where.sqlite_file} is not a SQLite database file: {POINT}"
        case State.EMPTY:
            return (
                f"{name} is empty (no runtime-store schema): {POINT}, or create the "
                "schema with `runtime-store db upgrade`"
            )
        case State.FOREIGN:
            listed = ", ".join(found.tables[:5]) + (", …" if len(found.tables) > 5 else "")
            return f"{name} is not a runtime-store database (its tables: {listed}): {POINT}"
        case State.NEWER:
            return (
                f"{name} has schema {found.current}, newer than this runtime-store knows "
                f"(its newest is {found.head}): use the runtime-store version that wrote it"
            )
        case State.BEHIND:
            return (
                f"{name} has schema {found.current or 'nothing'}, this runtime-store needs "
                f"{found.head}: run `runtime-store db upgrade` (serve does it at start)"
            )
        case State.READY:
            return f"{name} is at schema {found.head}"


def refuse_a_newer_schema(url: str) -> None:
    """One line and exit 2 for a database a later runtime-store wrote (what ``serve``
    says before it migrates or serves anything); anything else wrong is said later."""
    from app.storage.database.inspection import State

    where = target(url)
    try:
        found = inspect(where)
    except Exception:  # unreachable and the like: the migration step says it in one line
        return
    if found.state is State.NEWER:
        refuse(advice(where, found))


def refuse(line: str, code: int = common.EXIT_DATABASE) -> NoReturn:
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def announce(where: Target) -> None:
    """The line that names the database a command is using (on stderr: never data)."""
    typer.echo(f"database: {where.shown}", err=True)


def open_ready(option: str | None) -> Target:
    """The database of a command that needs the current schema: named on stderr, or one
    line of advice and exit 2."""
    where = target(option)
    found = inspect(where)
    if not found.ready:
        refuse(advice(where, found))
    announce(where)
    return where
