"""Service settings, read from ``RUNTIME_STORE_*`` environment variables."""

from __future__ import annotations

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.storage.engine import normalize_url

DEFAULT_DATABASE_URL = "sqlite:///./runtime-store.db"


class Settings(BaseSettings):
    """Everything the service can be told; tests pass an instance instead of the environment."""

    model_config = SettingsConfigDict(env_prefix="RUNTIME_STORE_", extra="ignore")

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL; postgres:// and postgresql:// mean psycopg 3. "
        "Defaults to a SQLite file in the working directory.",
    )
    page_max: int = Field(default=1000, gt=0, description="Largest page a list returns.")
    page_byte_budget: int = Field(
        default=4 * 1024 * 1024, gt=0, description="Payload bytes after which a page stops."
    )

    @field_validator("database_url")
    @classmethod
    def _normalize(cls, value: str) -> str:
        return normalize_url(value).render_as_string(hide_password=False)
