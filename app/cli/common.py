"""The ``runtime-store`` command tree, and what its commands share: the database URL, and
failures to use the database and configuration mistakes as one line and exit 2."""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, NoReturn

import typer

from app.operator_cli import runs_cli, sessions_cli, webhooks_cli, whoami

# Plain help: typer's rich help shows every flag with a value type (``--json <bool>``).
cli = typer.Typer(
    help="runtime-store: the durable runtime-state owner for agent runtimes.",
    rich_markup_mode=None,
)


db = typer.Typer(help="Database schema administration.")
cli.add_typer(db, name="db")


tokens_cli = typer.Typer(help="Bearer tokens: create (shown once), list, revoke.")
cli.add_typer(tokens_cli, name="tokens")


cli.add_typer(sessions_cli, name="sessions")
cli.add_typer(runs_cli, name="runs")
cli.add_typer(webhooks_cli, name="webhooks")
cli.command("whoami")(whoami)


retention_cli = typer.Typer(
    help="Retention: purge old ended sessions, delete old sessionless runs "
    "(ages from RUNTIME_STORE_RETENTION_*)."
)


cli.add_typer(retention_cli, name="retention")


DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Database URL (default: RUNTIME_STORE_DATABASE_URL or the SQLite file).",
        show_default=False,
    ),
]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refuse(message: str) -> NoReturn:
    typer.echo(f"refusing to serve: {message}", err=True)
    raise typer.Exit(2)


#: Exit status of a command that could not reach or use its database, or was configured
#: wrongly (as a command line click cannot parse).
EXIT_DATABASE = 2
EXIT_CONFIGURATION = 2


@contextmanager
def _database_errors() -> Iterator[None]:
    """The storage layer's ``database_errors`` (SQLAlchemy's errors as a ``DatabaseError``),
    imported only when a command that used the database fails."""
    try:
        yield
    except Exception:
        if "sqlalchemy" not in sys.modules:
            raise
        from app.storage.database.engines import database_errors

        with database_errors():
            raise


#: The database the running command opened, password hidden (``note_database``).
_opened: list[str] = []


def note_database(shown: str) -> None:
    """Remember the database a command opens, so that a failure to use it names it."""
    _opened[:] = [shown]


def _one_line(exc: Exception) -> str | None:
    """The line that says why a command could not use its database, or which setting is
    wrong, if that is why."""
    if "app.settings" in sys.modules:  # imported by the commands that read the settings
        from app.settings import invalid_settings

        wrong = invalid_settings(exc)
        if wrong is not None:
            return f"error: {wrong}"
    if "app.storage.database.engines" in sys.modules:
        from app.storage.database.engines import DatabaseError

        if isinstance(exc, DatabaseError):
            which = f" {_opened[0]}" if _opened else ""
            return f"error: the database{which} cannot be used: {exc}"
    if "runtime_store_client" in sys.modules:
        from runtime_store_client import StoreError

        if isinstance(exc, StoreError):  # e.g. ``unavailable`` from the token store's retries
            return f"error: {exc.code}: {exc.message}"
    if isinstance(exc, ModuleNotFoundError):
        return (
            f"error: the database URL needs the driver {exc.name!r}, which is not installed "
            "(runtime-store speaks sqlite:/// and postgresql://)"
        )
    return None


def _from_environment(exc: typer.BadParameter) -> str | None:
    """One line for an option's value that came from its environment variable (click
    would print a usage text the operator did not type), the value's secrets hidden."""
    param, ctx = exc.param, exc.ctx
    if param is None or ctx is None or param.name is None:
        return None
    source = ctx.get_parameter_source(param.name)
    if source is None or source.name != "ENVIRONMENT":
        return None
    names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
    name = next((name for name in names if name in os.environ), names[0] if names else "")
    from app.settings import mask_secrets, plain_problem

    value = mask_secrets(os.environ.get(name, ""))
    option = param.opts[0] if param.opts else param.name
    default = param.default if param.default not in (None, False, "") else None
    unset = f"unset it for the default ({default})" if default is not None else "unset it"
    problem = plain_problem(exc.message or "not valid")
    return (
        f"error: {name}={value} is not valid ({ctx.command_path} {option}): {problem}; "
        f"correct it, or {unset}"
    )


def main() -> None:
    """The ``runtime-store`` command: every failure to use the database, and every setting
    given wrongly (``RUNTIME_STORE_*``), is one line on stderr and exit 2, never a
    traceback (the operator commands have their own codes)."""
    try:
        with _database_errors():
            # Not standalone: a wrong value from the environment is one line, not a usage.
            code = cli(standalone_mode=False)
    except typer.BadParameter as exc:
        line = _from_environment(exc)
        if line is None:
            exc.show()
            raise SystemExit(exc.exit_code) from None
        typer.echo(line, err=True)
        raise SystemExit(EXIT_CONFIGURATION) from None
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        raise SystemExit(1) from None
    except typer.TyperException as exc:  # a usage error: what standalone mode does
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        raise SystemExit(getattr(exc, "exit_code", 1)) from None
    except Exception as exc:
        line = _one_line(exc)
        if line is None:
            raise
        typer.echo(line, err=True)
        raise SystemExit(EXIT_DATABASE) from None
    # ``typer.Exit`` (and ``--help``) come back as their exit status; commands return None.
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)
