"""Service settings, read from ``RUNTIME_STORE_*`` environment variables."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.database_url import canonical_database_url
from app.domain.limits import Limits, MiB

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
    page_max: int = Field(default=1000, gt=0, description="Largest page a list returns.")
    page_byte_budget: int = Field(
        default=4 * 1024 * 1024, gt=0, description="Payload bytes after which a page stops."
    )

    token_key: SecretStr | None = Field(
        default=None,
        description="Key of the HMAC under which bearer tokens are stored; required once "
        "tokens are used.",
    )
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
