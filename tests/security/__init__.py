"""Security tests: API fuzzing, decoder properties, and no secrets in errors or logs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from app.storage import create_engine, upgrade_schema


def fresh_sqlite_url(directory: Path) -> str:
    """A new SQLite file, migrated to head, that no other test touches."""
    url = f"sqlite:///{directory / f'security-{uuid.uuid4().hex[:8]}.db'}"
    upgrade_schema(url)
    return url


@contextmanager
def fresh_postgres_url(server_database_url: str) -> Iterator[str]:
    """A new PostgreSQL database next to ``server_database_url``, migrated, dropped after.

    Tests that create tokens use their own database: a database with active tokens keeps
    ``serve`` without a token key from starting, which must not leak into the shared one.
    """
    admin = create_engine(
        make_url(server_database_url).set(database="postgres"),
        isolation_level="AUTOCOMMIT",
        pool_size=1,
    )
    name = f"rs_security_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = make_url(server_database_url).set(database=name).render_as_string(hide_password=False)
        try:
            upgrade_schema(url)
            yield url
        finally:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
