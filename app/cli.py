"""The ``runtime-store`` command: serve, database administration, OpenAPI export."""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from app.domain.durations import format_duration, parse_duration
from app.domain.tokens import Role, TokenError
from app.observability.logs import LogFormat, LogLevel, default_format, log_config
from app.operator_cli import progress_bar, runs_cli, sessions_cli

if TYPE_CHECKING:
    from app.settings import Settings
    from app.storage.tokens import Tokens

# Building the command tree (and ``--help``) imports only the above: the settings, the
# storage layer (SQLAlchemy, Alembic), the app (FastAPI) and the client package are
# imported by the commands that use them (tests/test_cli_imports.py).

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
retention_cli = typer.Typer(
    help="Retention: purge old ended sessions, delete old sessionless runs "
    "(ages from RUNTIME_STORE_RETENTION_*)."
)
cli.add_typer(retention_cli, name="retention")


def _database_url(url: str | None) -> str:
    from app.settings import Settings

    return url or Settings().database_url


def _missing_sqlite_file(url: str) -> str | None:
    """The path of a SQLite URL's file when it does not exist (connecting would create it)."""
    from app.storage.engine import normalize_url

    parsed = normalize_url(url)
    file = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if file in (None, "", ":memory:") or Path(str(file)).is_file():
        return None
    return str(file)


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


DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Database URL (default: RUNTIME_STORE_DATABASE_URL or the SQLite file).",
        show_default=False,
    ),
]


def _tokens(database_url: str | None) -> Tokens:
    from app.settings import Settings
    from app.storage.engine import create_engine
    from app.storage.tokens import Tokens

    settings = Settings()
    key = settings.token_key.get_secret_value() if settings.token_key else None
    return Tokens(create_engine(_database_url(database_url)), key)


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
def tokens_list(database_url: DatabaseUrl = None) -> None:
    """Name, role, creation and revocation of every token (never the secret); times as
    the API writes them (RFC 3339, UTC, milliseconds)."""
    from runtime_store_client.times import format_rfc3339

    for info in _tokens(database_url).list():
        revoked = f"revoked {format_rfc3339(info.revoked_at)}" if info.revoked_at else "active"
        typer.echo(
            f"{info.name}\t{info.role.value}\tcreated {format_rfc3339(info.created_at)}\t{revoked}"
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


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


@retention_cli.command("run")
def retention_run(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only say what would be purged and deleted.")
    ] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """One sweep: print what it will purge, then purge it in batches with progress.

    Ended sessions whose ended_at is older than RUNTIME_STORE_RETENTION_ENDED_SESSIONS (and
    that have no running run) are purged as `sessions purge` does, each exported to
    RUNTIME_STORE_RETENTION_ARCHIVE_DIR first if set; terminal sessionless runs last
    changed longer ago than RUNTIME_STORE_RETENTION_SESSIONLESS_RUNS are deleted, their
    IDs kept reserved; memory appended for runs that do not exist is deleted once all of
    it is older than RUNTIME_STORE_RETENTION_ORPHAN_MEMORY."""
    from app.settings import Settings
    from app.storage import SqlStore, create_engine

    settings = Settings()
    policy = settings.retention_policy()
    if policy.keeps_everything:
        typer.echo(
            "nothing to sweep: set RUNTIME_STORE_RETENTION_ENDED_SESSIONS, "
            "RUNTIME_STORE_RETENTION_SESSIONLESS_RUNS and/or "
            "RUNTIME_STORE_RETENTION_ORPHAN_MEMORY (e.g. 30d, 7d)",
            err=True,
        )
        raise typer.Exit(2)
    engine = create_engine(_database_url(database_url))
    try:
        store = SqlStore(engine, limits=settings.limits(), fast_path=settings.pg_fast_path)
        typer.echo(f"retention: {policy.describe()}")
        plan = store.retention_sweep(policy, dry_run=True)
        typer.echo(plan.summary())
        if dry_run or not plan.items:
            return
        with store.retention_exclusive() as mine:
            if not mine:
                typer.echo("another sweep is running (a replica's --retention-interval?)", err=True)
                raise typer.Exit(1)
            total = plan.items
            with progress_bar("sweeping", total, items=True) as advance:
                done = store.retention_sweep(
                    policy, progress=lambda _kind, items, _records: advance(items)
                )
        typer.echo(done.summary())
    finally:
        engine.dispose()


@cli.command("openapi")
def openapi(
    output: Annotated[Path, typer.Option(help="Where to write the document.")] = Path(
        "openapi.yaml"
    ),
) -> None:
    """Export the app's OpenAPI document as YAML (the committed openapi.yaml); ``-`` writes
    it to standard output."""
    if str(output) == "-":
        sys.stdout.write(openapi_yaml())
        return
    output.write_text(openapi_yaml())
    typer.echo(f"wrote {output}")


def openapi_yaml() -> str:
    """The OpenAPI document of the app, as the YAML text committed at the repository root."""
    import yaml

    from app.main import create_app
    from app.settings import Settings

    document = create_app(Settings(database_url="sqlite://")).openapi()
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


#: Name of the admin token ``serve`` stores from RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN.
BOOTSTRAP_TOKEN_NAME = "bootstrap-admin"


def _refuse(message: str) -> NoReturn:
    typer.echo(f"refusing to serve: {message}", err=True)
    raise typer.Exit(2)


def _settle_auth(settings: Settings, host: str, insecure: bool) -> None:
    """Check the auth setup before serving: tokens are required exactly when the token key
    is set (app/api/auth.py); refuse a setup that would serve open by mistake, and store
    the bootstrap admin token."""
    from app.api.auth import tokens_without_key
    from app.storage.engine import create_engine
    from app.storage.tokens import Tokens

    key = settings.token_key.get_secret_value() if settings.token_key else None
    engine = create_engine(settings.database_url, pool_size=1)
    tokens = Tokens(engine, key)
    try:
        if key is None:
            if settings.bootstrap_admin_token is not None:
                _refuse(
                    "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN is set but RUNTIME_STORE_TOKEN_KEY "
                    "is not: set the key too"
                )
            if not _is_loopback(host) and not insecure:
                _refuse(
                    f"{host} is not a loopback address and RUNTIME_STORE_TOKEN_KEY is not "
                    "set: set it (tokens are then required; see README, Run it securely), "
                    "or pass --insecure to serve without authentication"
                )
            active = _active_or_none(tokens)
            if active is None:
                typer.echo(
                    "the database does not answer: cannot check it for tokens now (/readyz "
                    "answers 503 while active tokens exist without RUNTIME_STORE_TOKEN_KEY)",
                    err=True,
                )
                return
            if active:
                _refuse(tokens_without_key(active))
            typer.echo("RUNTIME_STORE_TOKEN_KEY is not set: serving without authentication")
            return
        if settings.bootstrap_admin_token is not None:
            try:
                secret = settings.bootstrap_admin_token.get_secret_value()
                outcome = tokens.ensure(BOOTSTRAP_TOKEN_NAME, Role.ADMIN, secret)
            except TokenError as exc:
                _refuse(f"RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN: {exc}")
            typer.echo(_BOOTSTRAP_OUTCOMES[outcome], err=outcome in ("revoked", "other"))
        elif _active_or_none(tokens) == 0:
            typer.echo(
                "tokens are required and none is active: create one with `runtime-store "
                "tokens create --role admin --name NAME`",
                err=True,
            )
    finally:
        engine.dispose()


def _active_or_none(tokens: Tokens) -> int | None:
    """How many tokens are active; ``None`` while the database does not answer."""
    from runtime_store_client import UnavailableError

    try:
        return tokens.active_count()
    except UnavailableError:
        return None


_BOOTSTRAP = "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN"
_BOOTSTRAP_OUTCOMES = {
    "created": f"stored {_BOOTSTRAP} as the admin token {BOOTSTRAP_TOKEN_NAME!r}",
    "present": f"the admin token {BOOTSTRAP_TOKEN_NAME!r} is {_BOOTSTRAP}",
    "revoked": f"{_BOOTSTRAP} was revoked and stays so ({BOOTSTRAP_TOKEN_NAME!r})",
    "other": f"{_BOOTSTRAP} is ignored: another token holds the name "
    f"{BOOTSTRAP_TOKEN_NAME!r}, or the token another name",
}


@cli.command("serve")
def serve(  # noqa: PLR0913, PLR0917 - one option per setting
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
    insecure: bool = typer.Option(
        False,
        "--insecure",
        envvar="RUNTIME_STORE_INSECURE",
        help="Serve without authentication (no RUNTIME_STORE_TOKEN_KEY) on a non-loopback address.",
    ),
    access_log: bool = typer.Option(
        True,
        "--access-log/--no-access-log",
        envvar="RUNTIME_STORE_ACCESS_LOG",
        help="One log line per request: request ID, operation, status, duration, token name.",
    ),
    log_format: Annotated[
        LogFormat | None,
        typer.Option(
            envvar="RUNTIME_STORE_LOG_FORMAT",
            help="json or text (default: text on a terminal, else json).",
            show_default=False,
        ),
    ] = None,
    log_level: Annotated[
        LogLevel,
        typer.Option(envvar="RUNTIME_STORE_LOG_LEVEL", help="The least severe level logged."),
    ] = LogLevel.INFO,
    retention_interval: Annotated[
        str | None,
        typer.Option(
            "--retention-interval",
            envvar="RUNTIME_STORE_RETENTION_INTERVAL",
            help="Sweep retention this often (30m, 1h, 1d), one replica at a time; the ages "
            "come from RUNTIME_STORE_RETENTION_*.",
            show_default=False,
        ),
    ] = None,
    worker_start_timeout: Annotated[
        int | None,
        typer.Option(
            "--worker-start-timeout",
            envvar="RUNTIME_STORE_WORKER_START_TIMEOUT_SECONDS",
            min=1,
            help="Seconds a new worker may take to start serving before it is replaced "
            "(default 90); health checks do not kill a worker that is starting.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Apply migrations (unless --no-migrate), then serve the HTTP API with uvicorn."""
    import os

    from app.observability.metrics import worker_metrics_directory
    from app.serving import (
        BoundedConfig,
        ConnectionBounds,
        connection_cap,
        limit_malloc_arenas,
        open_file_limit,
        reuse_port_available,
        serve_one_socket,
        serve_workers,
    )
    from app.settings import Settings
    from app.storage.migrate import schema_is_current, upgrade_schema_exclusively

    if retention_interval:
        try:
            parse_duration(retention_interval)
        except ValueError as exc:
            typer.echo(f"--retention-interval: {exc}", err=True)
            raise typer.Exit(2) from None
        # The workers read it from the environment, like every setting.
        os.environ["RUNTIME_STORE_RETENTION_INTERVAL"] = retention_interval
    settings = Settings()
    _announce_retention(settings)
    if not no_migrate:
        upgrade_schema_exclusively(settings.database_url)
        _, current, _ = schema_is_current(settings.database_url)
        typer.echo(f"database schema at {current}")
    _settle_auth(settings, host, insecure)
    if settings.database_url.startswith("sqlite"):
        if workers > 1:
            typer.echo("SQLite allows one writer process: serving with 1 worker.", err=True)
        workers = 1
    elif workers <= 0:
        workers = os.cpu_count() or 1
    typer.echo(f"runtime-store on http://{host}:{port} (docs at /docs), {workers} worker(s)")
    file_limit = open_file_limit()
    max_connections = connection_cap(settings.max_connections, settings.db_pool_size, file_limit)
    if max_connections < settings.max_connections:
        typer.echo(
            f"the open-file limit ({file_limit}) allows {max_connections} connections per "
            f"worker, not RUNTIME_STORE_MAX_CONNECTIONS={settings.max_connections}: raise "
            "`ulimit -n` to hold more",
            err=True,
        )
    bounds = ConnectionBounds(
        header_timeout_seconds=settings.header_timeout_seconds,
        body_timeout_seconds=settings.body_timeout_seconds,
        keep_alive_seconds=settings.keep_alive_seconds,
        max_connections=max_connections,
    )
    typer.echo(
        f"per worker: at most {max_connections} connections; headers within "
        f"{bounds.header_timeout_seconds} s, bodies within {bounds.body_timeout_seconds} s, "
        f"idle connections kept {bounds.keep_alive_seconds} s"
    )
    # The workers read the access-log switch from the environment, like every setting.
    os.environ["RUNTIME_STORE_ACCESS_LOG"] = "true" if access_log else "false"
    options: dict[str, Any] = {
        "factory": True,
        "host": host,
        "port": port,
        "workers": workers,
        # Every logger through one formatter; uvicorn's access log stays off: the service
        # writes its own access line (app/observability/middleware.py).
        "log_config": log_config(log_format or default_format(), log_level),
        "log_level": log_level.value,
        "access_log": False,
    }
    limit_malloc_arenas()
    config = BoundedConfig("app.main:create_app_from_environment", bounds, **options)
    # Several workers keep their metrics in files of one directory (made and removed here).
    # A starting worker is waited for this long (its imports may take seconds on a loaded
    # machine); then replaced. Failed starts in a row stop serve (app/serving.py).
    start_timeout = worker_start_timeout or settings.worker_start_timeout_seconds
    with worker_metrics_directory(workers):
        if workers > 1 and reuse_port_available():
            # One socket per worker: the kernel spreads connections evenly (app/serving.py).
            serve_workers(config, start_timeout)
        else:
            serve_one_socket(config, start_timeout)


def _announce_retention(settings: Settings) -> None:
    interval = settings.retention_interval
    if interval is None:
        return
    policy = settings.retention_policy()
    if policy.keeps_everything:
        typer.echo(
            "--retention-interval is set but no RUNTIME_STORE_RETENTION_* age is: no sweeps",
            err=True,
        )
        return
    typer.echo(f"retention every {format_duration(interval)}: {policy.describe()}")


#: Exit status of a command that could not reach or use its database.
EXIT_DATABASE = 2


@contextmanager
def _database_errors() -> Iterator[None]:
    """The storage layer's ``database_errors`` (SQLAlchemy's errors as a ``DatabaseError``),
    imported only when a command that used the database fails."""
    try:
        yield
    except Exception:
        if "sqlalchemy" not in sys.modules:
            raise
        from app.storage.engine import database_errors

        with database_errors():
            raise


def _one_line(exc: Exception) -> str | None:
    """The line that says why a command could not use its database, if that is why."""
    if "app.storage.engine" in sys.modules:
        from app.storage.engine import DatabaseError

        if isinstance(exc, DatabaseError):
            return f"error: the database cannot be used: {exc}"
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


def main() -> None:
    """The ``runtime-store`` command: every failure to use the database is one line on
    stderr and exit 2, never a traceback (the operator commands have their own codes)."""
    try:
        with _database_errors():
            cli()
    except Exception as exc:
        line = _one_line(exc)
        if line is None:
            raise
        typer.echo(line, err=True)
        raise SystemExit(EXIT_DATABASE) from None
