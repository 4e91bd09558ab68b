"""Service settings, read from ``RUNTIME_STORE_*`` environment variables."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.database_url import canonical_database_url
from app.domain.durations import parse_duration
from app.domain.limits import Limits, MiB
from app.domain.retention import RetentionPolicy

DEFAULT_DATABASE_URL = "sqlite:///./runtime-store.db"


class Settings(BaseSettings):
    """Everything the service can be told; tests pass an instance instead of the environment."""

    model_config = SettingsConfigDict(env_prefix="RUNTIME_STORE_", extra="ignore")

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL; postgres:// and postgresql:// mean psycopg 3. "
        "Defaults to a SQLite file in the working directory.",
    )
    db_pool_size: int = Field(
        default=10,
        gt=0,
        description="Database connections per worker process, and as many database threads.",
    )
    read_database_urls: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="PostgreSQL streaming replicas of the database, comma-separated URLs, "
        "that may serve reads (read-your-writes through Runtime-Store-Position; "
        "docs/scaling.md). Empty: the database serves everything.",
    )
    replica_max_lag_seconds: float = Field(
        default=1.0,
        gt=0,
        description="A read that carries no position may be served by a replica that has "
        "replayed everything the primary had this many seconds ago.",
    )
    pg_fast_path: bool = Field(
        default=True,
        description="PostgreSQL: answer the common appends, starts and terminal writes with "
        "one SQL function call (on), or send every write through the Python path (off).",
    )
    group_commit: bool = Field(
        default=True,
        description="PostgreSQL fast path: combine concurrent single appends of a worker "
        "into one statement and one commit (on), or commit each alone (off).",
    )
    require_seeds: bool = Field(
        default=False,
        description="Every start must attach a published run seed (seed_end_id), as the "
        "agent runtime's newest store requires; off: starts without a seed work as before.",
    )
    page_max: int = Field(default=1000, gt=0, description="Largest page a list returns.")
    page_byte_budget: int = Field(
        default=4 * 1024 * 1024, gt=0, description="Payload bytes after which a page stops."
    )
    read_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Seconds a read may run in the database; past them it is stopped and "
        "the request answered 503 unavailable, not retried (writes are not bounded).",
    )

    # Observability (docs/operations.md).
    metrics: bool = Field(
        default=True, description="Serve GET /metrics and keep the request metrics."
    )
    access_log: bool = Field(
        default=True, description="Log one line per request (`serve --no-access-log`: off)."
    )
    metrics_open_to_loopback: bool = Field(
        default=False,
        description="Let scrapers on a loopback address read /metrics without a token.",
    )

    token_key: SecretStr | None = Field(
        default=None,
        description="Key of the HMAC under which bearer tokens are stored. Set: every "
        "request needs an active token. Unset: the service runs open.",
    )
    bootstrap_admin_token: SecretStr | None = Field(
        default=None,
        description="An admin token (rst_ and 32+ random characters) that `serve` stores "
        "at start as `bootstrap-admin` unless that name exists; needs the token key.",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Open mode (no token key): host names or addresses, comma-separated, "
        "that a request's Host may name besides loopback (localhost, 127.0.0.0/8, [::1]); "
        "any other Host is refused (DNS rebinding). Ignored when tokens are on.",
    )

    webhook_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Webhook URL hosts (names or addresses, comma-separated) that may "
        "resolve to loopback, private, link-local or unspecified addresses; every other "
        "host must resolve to public addresses only (docs/contract.md 13.1).",
    )
    webhook_retry_hours: float = Field(
        default=24.0,
        gt=0,
        description="Hours a webhook delivery is retried (backoff with jitter) before it "
        "is marked failed; fractions allowed.",
    )
    webhook_dispatch: bool = Field(
        default=True,
        description="Run the webhook dispatcher in each worker of `serve`.",
    )
    webhook_delivery_retention: timedelta = Field(
        default=timedelta(days=3),
        gt=timedelta(0),
        description="Delete webhook deliveries delivered or failed longer ago than this "
        "(3d, 12h…), and their events; pending ones are never deleted.",
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

    max_body_bytes: int = Field(default=8 * MiB, gt=0, description="Largest request body.")
    max_id_bytes: int = Field(default=256, gt=0, description="Longest identifier, in bytes.")
    max_labels: int = Field(default=64, ge=0, description="Most labels on a run or event.")
    max_label_bytes: int = Field(
        default=1024, gt=0, description="Longest label key or value, in bytes."
    )
    max_payload_bytes: int = Field(
        default=4 * MiB, gt=0, description="Largest record payload or memory data."
    )
    max_checkpoint_bytes: int = Field(default=16 * MiB, gt=0, description="Largest checkpoint.")
    max_transcript_records: int = Field(
        default=10_000,
        gt=0,
        description="Records one transcript validation may read; a longer run answers 413.",
    )
    max_transcript_bytes: int = Field(
        default=64 * MiB,
        gt=0,
        description="Payload bytes one transcript validation may read; more answers 413.",
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
        return canonical_database_url(value)

    @model_validator(mode="after")
    def _replicas_of_postgres(self) -> Settings:
        self.read_database_urls = [canonical_database_url(url) for url in self.read_database_urls]
        for url in (self.database_url, *self.read_database_urls):
            if self.read_database_urls and not url.startswith(("postgresql", "postgres")):
                raise ValueError(
                    "RUNTIME_STORE_READ_DATABASE_URLS: read replicas are PostgreSQL "
                    "streaming replicas of a PostgreSQL database"
                )
        return self

    # The live tail (CONTRACT.md 11.3).
    max_streams: int = Field(
        default=500,
        gt=0,
        description="Live record streams one worker serves; beyond, 503 unavailable.",
    )
    tail_heartbeat_seconds: float = Field(
        default=15.0, gt=0, le=15, description="Seconds between a stream's heartbeat comments."
    )
    tail_safety_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Seconds after which an idle stream reads again even without a wake-up.",
    )
    tail_poll_seconds: float = Field(
        default=0.1,
        gt=0,
        description="SQLite: seconds between checks for commits of other processes.",
    )

    # Connection bounds of each `runtime-store serve` worker (docs/reliability.md).
    header_timeout_seconds: int = Field(
        default=10,
        gt=0,
        description="Seconds a connection has to send a request's headers, from its accept "
        "(or the request's first byte); then it is closed. Idle new connections too.",
    )
    body_timeout_seconds: int = Field(
        default=30,
        gt=0,
        description="Seconds a request body has to arrive whole, from the end of its "
        "headers; then 408 request_timeout and the connection is closed.",
    )
    keep_alive_seconds: int = Field(
        default=5, gt=0, description="Seconds an idle connection is kept between requests."
    )
    max_connections: int = Field(
        default=1000,
        gt=0,
        description="Connections one worker holds (fewer if the open-file limit is lower); "
        "a connection beyond them is answered 503 unavailable.",
    )
    worker_start_timeout_seconds: int = Field(
        default=90,
        gt=0,
        description="Seconds a new `serve` worker may take to start serving (imports, app, "
        "lifespan) before it is replaced; health checks do not kill it meanwhile.",
    )

    # Export, import and retention (CONTRACT.md 11.4).
    max_import_bytes: int = Field(
        default=2048 * MiB,
        gt=0,
        description="Largest session file `POST /v1/sessions/import` takes (413 beyond); "
        "its body must keep arriving, at most body_timeout_seconds between two chunks.",
    )
    retention_ended_sessions: timedelta | None = Field(
        default=None,
        description="Purge ended sessions whose ended_at is older than this (30d, 12h…); "
        "unset: keep forever.",
    )
    retention_sessionless_runs: timedelta | None = Field(
        default=None,
        description="Delete terminal sessionless runs last changed longer ago than this; "
        "unset: keep forever.",
    )
    retention_orphan_memory: timedelta | None = Field(
        default=None,
        description="Delete the memory appended for a run that does not exist once all of "
        "it is older than this; unset: keep forever.",
    )
    retention_archive_dir: Path | None = Field(
        default=None,
        description="Export each session here (one NDJSON file) before retention purges it.",
    )
    retention_interval: timedelta | None = Field(
        default=None,
        description="`serve` sweeps this often (one replica at a time); unset: never.",
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
