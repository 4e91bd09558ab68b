"""``runtime-store serve`` (the workers, auth settled before they start) and
``runtime-store openapi``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.domain.durations import format_duration, parse_duration
from app.domain.tokens import Role, TokenError
from app.observability.logs import LogFormat, LogLevel, default_format, log_config

if TYPE_CHECKING:
    from app.settings import Settings
    from app.storage.access.tokens import Tokens
from . import opening
from .common import _is_loopback, _refuse, cli, note_database


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


def _check_settings(settings: Settings) -> None:
    """Refuse settings that are each valid but wrong together, before anything is done."""
    if settings.bootstrap_admin_token is not None and settings.token_key is None:
        _refuse(
            "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN is set but RUNTIME_STORE_TOKEN_KEY is not: "
            "set the key too"
        )


def _settle_auth(settings: Settings, host: str, insecure: bool) -> None:
    """Check the auth setup before serving: tokens are required exactly when the token key
    is set (app/api/auth/); refuse a setup that would serve open by mistake, and store
    the bootstrap admin token."""
    from app.api.auth import tokens_without_key
    from app.storage.access.tokens import Tokens
    from app.storage.database.engines import create_engine

    key = settings.token_key.get_secret_value() if settings.token_key else None
    engine = create_engine(settings.database_url, pool_size=1)
    tokens = Tokens(engine, key)
    try:
        if key is None:
            if not _is_loopback(host) and not insecure:
                _refuse(
                    f"{host} is not a loopback address and RUNTIME_STORE_TOKEN_KEY is not "
                    "set: set it (tokens are then required; see docs/administration.md, Run it "
                    "securely), or pass --insecure to serve without authentication"
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
        _check_key(tokens, proof_coming=settings.bootstrap_admin_token is not None)
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


def _check_key(tokens: Tokens, *, proof_coming: bool) -> None:
    """Refuse a token key that is not the one the active tokens were made under: every
    request would be 401 with nothing to say why (app/storage/access/tokens.py)."""
    from app.storage.access.tokens import WRONG_KEY
    from runtime_store_client import UnavailableError

    try:
        found = tokens.check_key()
        if found == "mismatch":
            _refuse(WRONG_KEY.format(count=tokens.active_count()))
    except UnavailableError:
        typer.echo("the database does not answer: cannot check RUNTIME_STORE_TOKEN_KEY", err=True)
        return
    if found == "unproven" and not proof_coming:
        typer.echo(
            "the active tokens predate the check value of RUNTIME_STORE_TOKEN_KEY: it is "
            "recorded when one of them first authenticates, and a wrong key refused from then on",
            err=True,
        )


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
        "127.0.0.1",
        envvar="RUNTIME_STORE_HOST",
        help="Address to listen on; one that is not loopback needs RUNTIME_STORE_TOKEN_KEY "
        "or --insecure.",
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
        help="Do not apply migrations at start (`runtime-store db upgrade` applies them).",
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

    _warn_unknown_variables()

    from app.observability.metrics import worker_metrics_directory
    from app.serving import (
        BoundedConfig,
        ConnectionBounds,
        connection_cap,
        limit_malloc_arenas,
        listen_problem,
        open_file_limit,
        reuse_port_available,
        serve_one_socket,
        serve_workers,
    )
    from app.settings import Settings
    from app.storage.database.inspection import display_url
    from app.storage.database.migrations import schema_is_current, upgrade_schema_exclusively

    if retention_interval:
        try:
            parse_duration(retention_interval)
        except ValueError as exc:
            typer.echo(
                f"error: --retention-interval (RUNTIME_STORE_RETENTION_INTERVAL) is not valid: "
                f"{exc}; correct it, or unset it (no sweeps)",
                err=True,
            )
            raise typer.Exit(2) from None
        # The workers read it from the environment, like every setting.
        os.environ["RUNTIME_STORE_RETENTION_INTERVAL"] = retention_interval
    # Before anything is said or migrated: a port in use is one line, not a banner and
    # then a bind error.
    cannot_listen = listen_problem(host, port)
    if cannot_listen:
        _refuse(cannot_listen)
    # A setting given wrongly stops here, before anything is migrated: one line naming
    # it (app/cli/common.py, ``main``).
    settings = Settings()
    _check_settings(settings)
    _announce_retention(settings)
    database, _ = display_url(settings.database_url)
    note_database(database)
    opening.refuse_a_newer_schema(settings.database_url)
    if not no_migrate:
        upgrade_schema_exclusively(settings.database_url)
        _, current, _ = schema_is_current(settings.database_url)
        typer.echo(f"database {database}: schema at {current}")
    _settle_auth(settings, host, insecure)
    _announce_replicas(settings)
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
        # writes its own access line (app/observability/requests.py).
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


def _warn_unknown_variables() -> None:
    """A misspelt ``RUNTIME_STORE_*`` variable would be ignored without a word: one line on
    stderr each, naming the closest setting, and serve on."""
    import os

    from .config_reference import unknown_variable_warnings

    for line in unknown_variable_warnings(os.environ):
        typer.echo(line, err=True)


#: How the banner says each state of a read replica (app/storage/database/replicas.py).
_REPLICA_STATES = {
    "ok": "ok (a hot standby)",
    "unreachable": "unreachable",
    "not_in_recovery": "not in recovery (is a primary, not a standby)",
    "failing": "failing",
}


def _announce_replicas(settings: Settings) -> None:
    """One line per read replica: where it is (no password) and what it is now. A replica
    that cannot serve does not stop the service (the primary serves its reads; /readyz
    and the metrics name its state) but is said on stderr, with what to do."""
    from app.storage.database.replicas import NOT_IN_RECOVERY, OK, database_of_url, probe

    count = len(settings.read_database_urls)
    if not count:
        return
    primary = database_of_url(settings.database_url)
    for number, url in enumerate(settings.read_database_urls, 1):
        found = probe(url)
        said = _REPLICA_STATES.get(found.state, found.state)
        line = f"read replica replica-{number} of {count} ({found.database}): {said}"
        if found.state == OK:
            typer.echo(line)
        elif found.state == NOT_IN_RECOVERY:
            if found.database == primary:
                line = line.replace("is a primary", "is the primary itself")
            typer.echo(
                f"{line}: the primary serves its reads; name only hot standbys in "
                "RUNTIME_STORE_READ_DATABASE_URLS",
                err=True,
            )
        else:
            typer.echo(
                f"{line} ({found.detail}): the primary serves its reads until it answers",
                err=True,
            )


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
