"""Service settings, read from ``RUNTIME_STORE_*`` environment variables."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from app.database_url import canonical_database_url
from app.domain.durations import format_duration, parse_duration
from app.domain.limits import Limits, MiB
from app.domain.retention import RetentionPolicy

DEFAULT_DATABASE_URL = "sqlite:///./runtime-store.db"
#: Every setting is read from its field's name in capitals after this prefix.
ENV_PREFIX: Final = "RUNTIME_STORE_"

# The groups of docs/configuration.md (app/cli/config_reference.py): every setting names its
# own in ``json_schema_extra``, and the reference lists the groups in this order.
DATABASE: Final = "database"
REPLICAS: Final = "replicas"
HTTP: Final = "http"
AUTH: Final = "auth"
LIMITS: Final = "limits"
TAIL: Final = "tail"
WEBHOOKS: Final = "webhooks"
RETENTION: Final = "retention"
SEEDS: Final = "seeds"
OBSERVABILITY: Final = "observability"
OPERATOR: Final = "operator"
GROUPS: Final = (
    DATABASE,
    REPLICAS,
    HTTP,
    AUTH,
    LIMITS,
    TAIL,
    WEBHOOKS,
    RETENTION,
    SEEDS,
    OBSERVABILITY,
    OPERATOR,
)


class Settings(BaseSettings):
    """Everything the service can be told; tests pass an instance instead of the environment."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        description="The database: `sqlite:///PATH` (a SQLite file) or "
        "`postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (PostgreSQL through "
        "psycopg 3; `postgres://` means the same; several hosts as "
        "`h1:5432,h2:5432`, tried in order). The default is the file "
        "runtime-store.db in the working directory. The commands that open the "
        "database themselves (`db`, `tokens`, `retention`) read it too, or their "
        "`--database-url` option.",
        json_schema_extra={"group": DATABASE},
    )
    sqlite_synchronous: Literal["full", "normal"] = Field(
        default="full",
        description="SQLite: when an acknowledged write is on disk. `full`: every commit is "
        "synced to disk before it is answered, so an acknowledged write survives an OS crash "
        "or a power loss. `normal`: the write-ahead log is synced only at checkpoints (about "
        "every 1,000 pages): a crash of the service loses nothing, an OS crash or a power loss "
        "may lose the writes acknowledged since the last checkpoint; in exchange appends cost "
        "less (docs/administration.md). PostgreSQL ignores it (its own `synchronous_commit`).",
        json_schema_extra={"group": DATABASE},
    )
    db_pool_size: int = Field(
        default=10,
        gt=0,
        description="Store calls one worker runs at once, and its database connections for them"
        " (plus 4 of overflow): on PostgreSQL asynchronous connections its event "
        "loop awaits, on SQLite one database thread each.",
        json_schema_extra={"group": DATABASE},
    )
    read_database_urls: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="PostgreSQL streaming replicas (hot standbys) of the database that may "
        "serve reads, as comma-separated postgresql:// URLs, beside a PostgreSQL "
        "RUNTIME_STORE_DATABASE_URL. Reads keep read-your-writes through the "
        "Runtime-Store-Position header (docs/scaling.md). `serve` names each "
        "replica and its state at start; one that cannot serve is skipped. Unset: "
        "the database serves every read.",
        json_schema_extra={"group": REPLICAS},
    )
    replica_max_lag_seconds: float = Field(
        default=1.0,
        gt=0,
        description="A read that carries no position may be served by a replica that has "
        "replayed everything the primary had this many seconds ago.",
        json_schema_extra={"group": REPLICAS},
    )
    pg_fast_path: bool = Field(
        default=True,
        description="PostgreSQL: on, the common appends, starts and terminal writes are one SQL"
        " function call each (anything unusual goes to the Python path); off, every"
        " write goes through the Python path (same answers, more round trips; "
        "docs/architecture.md).",
        json_schema_extra={"group": DATABASE},
    )
    group_commit: bool = Field(
        default=True,
        description="PostgreSQL fast path: on, single appends that arrive while a worker's "
        "previous append is being committed are sent together as one statement and "
        "one commit, each keeping its own answer and error; off, every append "
        "commits alone.",
        json_schema_extra={"group": DATABASE},
    )
    require_seeds: bool = Field(
        default=False,
        description="On: every start must attach a published run seed (seed_end_id), as the "
        "agent runtime's newest store requires, and a start without one is refused "
        "seed_not_found. Off: starts without a seed work, except that a run ID "
        "prepared for a seeded start cannot be started without it.",
        json_schema_extra={"group": SEEDS},
    )
    page_max: int = Field(
        default=1000,
        gt=0,
        description="Most items one page of a list returns, whatever `limit` asks.",
        json_schema_extra={"group": LIMITS},
    )
    page_byte_budget: int = Field(
        default=4 * 1024 * 1024,
        gt=0,
        description="Payload bytes after which a page of records stops (it holds at least one "
        "record).",
        json_schema_extra={"group": LIMITS},
    )
    read_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Seconds one read may run in the database: past them the statement is "
        "stopped and the request answered 503 unavailable at once, not retried. "
        "Writes are not bounded by it; a client that disconnects stops its reads "
        "too.",
        json_schema_extra={"group": DATABASE},
    )

    # Observability (docs/operations.md).
    metrics: bool = Field(
        default=True,
        description="Serve GET /metrics (Prometheus text; a reader token when tokens are on) "
        "and keep the request metrics.",
        json_schema_extra={"group": OBSERVABILITY},
    )
    access_log: bool = Field(
        default=True,
        description="Log one line per request: request ID, operation, status, duration, token "
        "name.",
        json_schema_extra={"group": OBSERVABILITY},
    )
    metrics_open_to_loopback: bool = Field(
        default=False,
        description="Let scrapers on a loopback address read /metrics without a token when "
        "tokens are on.",
        json_schema_extra={"group": OBSERVABILITY},
    )

    token_key: SecretStr | None = Field(
        default=None,
        description="The key under which bearer tokens are stored (as keyed hashes). Set: every"
        " request needs an active token, made with `runtime-store tokens create`. "
        "Unset: the service runs open, on loopback only unless `serve --insecure`. "
        "A key other than the one the active tokens were made under is refused at "
        "start.",
        json_schema_extra={"group": AUTH},
    )
    bootstrap_admin_token: SecretStr | None = Field(
        default=None,
        description="An admin token (rst_ and 32 or more random characters) that `serve` stores"
        " at start under the name bootstrap-admin, unless that name exists; needs "
        "RUNTIME_STORE_TOKEN_KEY.",
        json_schema_extra={"group": AUTH},
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Open mode only (no token key): comma-separated host names or addresses "
        "(store.internal,10.0.0.7) that a request's Host header may name besides "
        "loopback; any other Host is refused 403 (DNS rebinding). Ignored when "
        "tokens are on.",
        json_schema_extra={"group": AUTH},
    )

    webhook_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated webhook URL hosts (hooks.internal,127.0.0.1) that may "
        "resolve to loopback, private, link-local or unspecified addresses; every "
        "other webhook host must resolve to public addresses only, when subscribed "
        "and at each delivery.",
        json_schema_extra={"group": WEBHOOKS},
    )
    webhook_retry_hours: float = Field(
        default=24.0,
        gt=0,
        description="Hours a webhook delivery that gets no 2xx is retried (exponential backoff "
        "with jitter) before it is marked failed; fractions allowed (0.25).",
        json_schema_extra={"group": WEBHOOKS},
    )
    webhook_dispatch: bool = Field(
        default=True,
        description="Run the webhook dispatcher in each worker of `serve` (off: deliveries wait"
        " for a service that runs it).",
        json_schema_extra={"group": WEBHOOKS},
    )
    webhook_delivery_retention: timedelta = Field(
        default=timedelta(days=3),
        gt=timedelta(0),
        description="Delete webhook deliveries delivered or failed longer ago than this (3d, "
        "12h…), and their events with the last of them; pending ones are never "
        "deleted.",
        json_schema_extra={"group": WEBHOOKS},
    )

    @field_validator("webhook_delivery_retention", mode="before")
    @classmethod
    def _delivery_retention(cls, value: object) -> object:
        return parse_duration(value) if isinstance(value, str) else value

    @field_validator("allowed_hosts", "webhook_allowed_hosts", "read_database_urls", mode="before")
    @classmethod
    def _host_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [host.strip() for host in value.split(",") if host.strip()]
        return value

    max_body_bytes: int = Field(
        default=8 * MiB,
        gt=0,
        description="Largest request body, in bytes (413 payload_too_large beyond); session "
        "imports have their own bound, RUNTIME_STORE_MAX_IMPORT_BYTES.",
        json_schema_extra={"group": LIMITS},
    )
    max_id_bytes: int = Field(
        default=256,
        gt=0,
        description="Longest identifier, in bytes (422 invalid_argument beyond).",
        json_schema_extra={"group": LIMITS},
    )
    max_labels: int = Field(
        default=64,
        ge=0,
        description="Most labels on a run or event (422 invalid_argument beyond).",
        json_schema_extra={"group": LIMITS},
    )
    max_label_bytes: int = Field(
        default=1024,
        gt=0,
        description="Longest label key or value, in bytes (422 invalid_argument beyond).",
        json_schema_extra={"group": LIMITS},
    )
    max_payload_bytes: int = Field(
        default=4 * MiB,
        gt=0,
        description="Largest record payload or memory data, in bytes (413 payload_too_large "
        "beyond).",
        json_schema_extra={"group": LIMITS},
    )
    max_checkpoint_bytes: int = Field(
        default=16 * MiB,
        gt=0,
        description="Largest checkpoint of a suspended run, in bytes (413 payload_too_large "
        "beyond).",
        json_schema_extra={"group": LIMITS},
    )
    max_transcript_records: int = Field(
        default=10_000,
        gt=0,
        description="Records one transcript validation (GET …/transcript?validate=) may read; a"
        " longer run answers 413.",
        json_schema_extra={"group": LIMITS},
    )
    max_transcript_bytes: int = Field(
        default=64 * MiB,
        gt=0,
        description="Payload bytes one transcript validation may read; more answers 413.",
        json_schema_extra={"group": LIMITS},
    )

    def retention_policy(self) -> RetentionPolicy:
        return RetentionPolicy(
            ended_sessions=self.retention_ended_sessions,
            sessionless_runs=self.retention_sessionless_runs,
            archive_dir=self.retention_archive_dir,
            orphan_memory=self.retention_orphan_memory,
        )

    def limits(self) -> Limits:
        return Limits(
            max_id_bytes=self.max_id_bytes,
            max_labels=self.max_labels,
            max_label_bytes=self.max_label_bytes,
            max_payload_bytes=self.max_payload_bytes,
            max_checkpoint_bytes=self.max_checkpoint_bytes,
        )

    @field_validator("database_url")
    @classmethod
    def _normalize(cls, value: str) -> str:
        problem = database_url_problem(value)
        if problem is not None:
            raise ValueError(database_url_advice(value, problem))
        return canonical_database_url(value)

    @field_validator("read_database_urls")
    @classmethod
    def _replicas_of_postgres(cls, urls: list[str], info: ValidationInfo) -> list[str]:
        """Each a PostgreSQL URL, and only beside a PostgreSQL primary (CONTRACT.md 14)."""
        for url in urls:
            problem = database_url_problem(url)
            if problem is not None or not is_postgres_url(url):
                raise ValueError(
                    f"{mask_secrets(url)}: {problem or 'it is not PostgreSQL'}: read replicas "
                    "are PostgreSQL streaming replicas (hot standbys); name each as "
                    "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
                )
        primary = info.data.get("database_url")
        if urls and primary is not None and not is_postgres_url(primary):
            raise ValueError(
                "read replicas are streaming replicas of a PostgreSQL primary, and "
                f"{ENV_PREFIX}DATABASE_URL is {mask_secrets(primary)}: unset "
                f"{ENV_PREFIX}READ_DATABASE_URLS, or point {ENV_PREFIX}DATABASE_URL at "
                "their PostgreSQL primary"
            )
        return [canonical_database_url(url) for url in urls]

    # The live tail (CONTRACT.md 11.3).
    max_streams: int = Field(
        default=500,
        gt=0,
        description="Live record streams (GET …/records/stream) one worker serves at once; "
        "beyond, 503 unavailable.",
        json_schema_extra={"group": TAIL},
    )
    tail_heartbeat_seconds: float = Field(
        default=15.0,
        gt=0,
        le=15,
        description="Seconds between a live stream's heartbeat comments (at most 15).",
        json_schema_extra={"group": TAIL},
    )
    tail_safety_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Seconds after which an idle live stream reads again even without a wake-up.",
        json_schema_extra={"group": TAIL},
    )
    tail_poll_seconds: float = Field(
        default=0.1,
        gt=0,
        description="SQLite: seconds between a live stream's checks for commits of other "
        "processes.",
        json_schema_extra={"group": TAIL},
    )

    # Connection bounds of each `runtime-store serve` worker (docs/reliability.md).
    header_timeout_seconds: int = Field(
        default=10,
        gt=0,
        description="Seconds a connection has to send a request's headers, from its accept (or "
        "the request's first byte); then it is closed. Idle new connections too.",
        json_schema_extra={"group": HTTP},
    )
    body_timeout_seconds: int = Field(
        default=30,
        gt=0,
        description="Seconds a request body has to arrive whole, from the end of its headers; "
        "then 408 request_timeout and the connection is closed.",
        json_schema_extra={"group": HTTP},
    )
    keep_alive_seconds: int = Field(
        default=5,
        gt=0,
        description="Seconds an idle connection is kept between requests.",
        json_schema_extra={"group": HTTP},
    )
    max_connections: int = Field(
        default=1000,
        gt=0,
        description="Connections one worker holds; a connection beyond them is answered 503 "
        "unavailable with Retry-After. Fewer if the open-file limit is lower "
        "(`serve` says so).",
        json_schema_extra={"group": HTTP},
    )
    worker_start_timeout_seconds: int = Field(
        default=90,
        gt=0,
        description="Seconds a new `serve` worker may take to start serving (imports, app, "
        "lifespan) before it is replaced; health checks do not kill it meanwhile, "
        "and 5 failed starts in a row stop `serve`.",
        json_schema_extra={"group": HTTP},
    )

    # Export, import and retention (CONTRACT.md 11.4).
    max_import_bytes: int = Field(
        default=2048 * MiB,
        gt=0,
        description="Largest session file POST /v1/sessions/import takes (413 beyond; exempt "
        "from RUNTIME_STORE_MAX_BODY_BYTES); its body must keep arriving, at most "
        "RUNTIME_STORE_BODY_TIMEOUT_SECONDS between two chunks.",
        json_schema_extra={"group": LIMITS},
    )
    retention_ended_sessions: timedelta | None = Field(
        default=None,
        description="Purge ended sessions whose ended_at is older than this (30d, 12h…), as "
        "`sessions purge` does. Unset: keep them forever.",
        json_schema_extra={"group": RETENTION},
    )
    retention_sessionless_runs: timedelta | None = Field(
        default=None,
        description="Delete terminal sessionless runs last changed longer ago than this (their "
        "IDs stay reserved). Unset: keep them forever.",
        json_schema_extra={"group": RETENTION},
    )
    retention_orphan_memory: timedelta | None = Field(
        default=None,
        description="Delete the memory appended for a run that does not exist once all of it is"
        " older than this. Unset: keep it forever.",
        json_schema_extra={"group": RETENTION},
    )
    retention_archive_dir: Path | None = Field(
        default=None,
        description="Export each session here (one NDJSON file) before retention purges it.",
        json_schema_extra={"group": RETENTION},
    )
    retention_interval: timedelta | None = Field(
        default=None,
        description="How often `serve` sweeps retention (one replica at a time), with the ages "
        "above. Unset: never; `runtime-store retention run` sweeps by hand.",
        json_schema_extra={"group": RETENTION},
    )

    @field_validator(
        "retention_ended_sessions",
        "retention_sessionless_runs",
        "retention_orphan_memory",
        "retention_interval",
        mode="before",
    )
    @classmethod
    def _duration(cls, value: object) -> object:
        if isinstance(value, str):
            return parse_duration(value) if value.strip() else None
        return value


# --- database URLs, as configuration reads them (no storage import) ------------------------

#: The URL forms runtime-store speaks, in every message about a wrong one.
DATABASE_URL_FORMS: Final = (
    "use sqlite:///PATH or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
)
_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
#: The hosts of a URL's authority, after ``scheme://`` (SQLAlchemy's reading of it).
_HOSTS: Final = re.compile(r"(?:[^:/]*(?::[^@]*)?@)?(?P<hosts>[^/?#]*)")
_SQLITE_SCHEMES: Final = ("sqlite", "sqlite+pysqlite")
_POSTGRES_SCHEMES: Final = ("postgres", "postgresql", "postgresql+psycopg")
#: A URL's password (``user:password@``: up to the first ``@``, as SQLAlchemy reads it, so
#: also one holding an unescaped ``/`` or ``?``), and a ``password=`` parameter of its query.
_URL_PASSWORD: Final = re.compile(r"(://[^/?#@:\s\[]*):[^@\s]*@")
#: The same without the ``scheme://`` (a URL written without it).
_BARE_PASSWORD: Final = re.compile(r"((?:^|[\s,=])[^/?#@:\s\[]+):(?!//)[^@\s]*@")
_QUERY_PASSWORD: Final = re.compile(r"(?i)\b(password=)[^&\s,]*")
_HIDDEN: Final = "***"


def mask_secrets(text: str) -> str:
    """``text`` with the password of every URL in it shown as ``***`` (also of a URL
    that lacks its ``scheme://``)."""
    text = _URL_PASSWORD.sub(rf"\1:{_HIDDEN}@", text)
    text = _BARE_PASSWORD.sub(rf"\1:{_HIDDEN}@", text)
    return _QUERY_PASSWORD.sub(rf"\1{_HIDDEN}", text)


def is_postgres_url(url: str) -> bool:
    match = _SCHEME.match(url)
    return match is not None and match.group(1).lower() in _POSTGRES_SCHEMES


def sqlite_url_of_path(text: str) -> str | None:
    """``sqlite:///PATH`` for a database "URL" that is a plain file path (``./rs.db``,
    ``/var/lib/rs.db``), as people write it; ``None`` for anything else."""
    text = text.strip()
    if not text or _SCHEME.match(text) or "@" in text or ":" in text or "?" in text:
        return None
    if "/" not in text and "." not in text:
        return None
    return f"sqlite:///{text}"


def database_url_advice(url: str, problem: str) -> str:
    """What is wrong with a database URL and the form to write instead: the very URL for
    a plain file path (``sqlite:///./runtime-store.db``), the forms otherwise."""
    as_sqlite = sqlite_url_of_path(url)
    if as_sqlite is not None:
        return f"{problem}: for the SQLite file {url.strip()}, write {as_sqlite}"
    return f"{problem}: {DATABASE_URL_FORMS}"


def database_url_problem(url: str) -> str | None:
    """What is wrong with a database URL before anything connects (its form, its scheme,
    its ports), without repeating the URL; ``None`` for a URL runtime-store can try."""
    match = _SCHEME.match(url)
    if match is None:
        return "it is not a database URL (no scheme://)"
    scheme = match.group(1).lower()
    if scheme in _SQLITE_SCHEMES:
        return None
    if scheme not in _POSTGRES_SCHEMES:
        return f"runtime-store speaks SQLite and PostgreSQL, not {scheme}://"
    hosts = _HOSTS.match(url, match.end())
    for host in hosts.group("hosts").split(",") if hosts else ():
        port = host.rpartition("]")[2] if host.startswith("[") else host
        _, colon, digits = port.rpartition(":") if ":" in port else ("", "", "")
        if colon and not (digits.isdigit() and 0 < int(digits) < 65536):
            return f"its port {digits!r} is not a number from 1 to 65535"
    return None


# --- a configuration mistake as one line ----------------------------------------------------


def env_name(field: str) -> str:
    """The environment variable of a setting."""
    return f"{ENV_PREFIX}{field.upper()}"


def setting_group(field: str) -> str:
    """The group of docs/configuration.md a setting belongs to."""
    extra = Settings.model_fields[field].json_schema_extra
    group = extra.get("group") if isinstance(extra, dict) else None
    if not isinstance(group, str) or group not in GROUPS:
        raise LookupError(f"the setting {field} names no group of {GROUPS}")
    return group


def _secret(field: str) -> bool:
    info = Settings.model_fields.get(field)
    return info is not None and "SecretStr" in str(info.annotation)


def _shown_default(field: str) -> str | None:
    """The default a setting takes when its variable is unset, as a value to write."""
    info = Settings.model_fields.get(field)
    if info is None or _secret(field):
        return None
    value: Any = info.get_default(call_default_factory=True)
    if value is None or value == []:
        return None
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, float):
        return f"{value:g}"
    return mask_secrets(str(value))


def _shown_value(field: str, value: object) -> str:
    """``=value`` for a line about a setting: never a secret's, a URL's password hidden."""
    if _secret(field):
        return " (its value not shown)"
    if isinstance(value, list | tuple):
        value = ",".join(str(item) for item in value)
    if not isinstance(value, str | int | float):
        return ""
    text = mask_secrets(str(value))
    return "=" + (text if len(text) <= 100 else text[:99] + "…")


_FIX_BY_TYPE: Final = {
    "int_parsing": "set a whole number",
    "float_parsing": "set a number",
    "bool_parsing": "set on or off (true/false, yes/no, 1/0)",
    "greater_than": "set a larger number",
    "greater_than_equal": "set a larger number",
    "less_than": "set a smaller number",
    "less_than_equal": "set a smaller number",
}


def plain_problem(message: str) -> str:
    """Pydantic's message about a value, as a line about a setting says it (its first
    line, secrets hidden): ``it should be greater than 0``."""
    message = (message.splitlines() or ["not valid"])[0].removeprefix("Value error, ")
    if message.startswith("Input s"):
        message = "it s" + message[len("Input s") :]
    return mask_secrets(message.rstrip("."))


#: Settings whose validators' messages say what to do themselves.
_SAYS_ITS_FIX: Final = ("database_url", "read_database_urls")


def _one_problem(error: Any) -> str:
    location = error.get("loc") or ()
    message = plain_problem(str(error.get("msg", "not valid")))
    if not location or not isinstance(location[0], str):
        return message
    field = location[0]
    line = f"{env_name(field)}{_shown_value(field, error.get('input'))} is not valid: {message}"
    if field in _SAYS_ITS_FIX and error.get("type") == "value_error":
        return line
    default = _shown_default(field)
    unset = f"unset it for the default ({default})" if default else "unset it"
    return f"{line}; {_FIX_BY_TYPE.get(str(error.get('type')), 'correct it')}, or {unset}"


def invalid_settings(exc: BaseException) -> str | None:
    """One line, without a secret, naming each setting the environment gives wrongly and
    what to do; ``None`` if ``exc`` is no error of reading the settings."""
    if isinstance(exc, ValidationError) and exc.title == Settings.__name__:
        problems = [_one_problem(error) for error in exc.errors(include_url=False)]
        if len(problems) == 1:
            return problems[0]
        return f"{len(problems)} settings are not valid: " + " | ".join(problems)
    if isinstance(exc, SettingsError):
        found = re.search(r'field "(\w+)"', str(exc))
        which = env_name(found.group(1)) if found else "a RUNTIME_STORE_* setting"
        return f"{which} cannot be read: correct it, or unset it"
    return None
