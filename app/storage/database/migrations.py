"""Schema migrations: the one Alembic tree, applied and checked from code and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine

if TYPE_CHECKING:
    from alembic.config import Config

from app.storage.database.dialects import dialect_of
from app.storage.database.engines import create_engine, normalize_url
from app.storage.database.read_deadlines import bounded_statements
from runtime_store_client import UnavailableError

#: The ``app`` package (this file is app/storage/database/migrations.py).
_PACKAGE_DIR = Path(__file__).resolve().parents[2]


def script_location() -> Path:
    """The Alembic tree: ``alembic/`` of the checkout, or the copy packaged in the wheel."""
    for candidate in (_PACKAGE_DIR.parent / "alembic", _PACKAGE_DIR / "_alembic"):
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("the Alembic migration tree is missing from this installation")


def alembic_config(url: str | URL) -> Config:
    # Alembic is imported when a migration is read or run, not with the service.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(script_location()))
    config.set_main_option(
        "sqlalchemy.url",
        normalize_url(url).render_as_string(hide_password=False).replace("%", "%%"),
    )
    return config


def upgrade_schema(url: str | URL) -> None:
    """Apply every migration up to head."""
    from alembic import command

    command.upgrade(alembic_config(url), "head")


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        from alembic.runtime.migration import MigrationContext

        return MigrationContext.configure(conn).get_current_revision()


def schema_is_current(url: str | URL) -> tuple[bool, str | None, str | None]:
    """Whether the database is at head, with the current and head revisions."""
    engine = create_engine(url)
    try:
        current = current_revision(engine)
    finally:
        engine.dispose()
    head = head_revision()
    return current == head, current, head


def readiness(engine: Engine) -> tuple[bool, str]:
    """Whether the database answers, takes writes and its schema is at head, with a short
    reason; within the engine's read deadline (a frozen primary: CONTRACT.md 16)."""
    from alembic.runtime.migration import MigrationContext

    try:
        with engine.connect() as conn, bounded_statements(conn, engine):
            current = MigrationContext.configure(conn).get_current_revision()
            if conn.dialect.name == "postgresql" and _read_only(conn):
                return False, "the database takes no writes (a standby: a failover?)"
    except sa.exc.SQLAlchemyError as exc:
        return False, f"database unreachable ({type(exc).__name__})"
    except UnavailableError:
        return False, "database unreachable (it stopped answering)"
    head = head_revision()
    if current != head:
        return False, f"schema at {current or 'nothing'}, head is {head}"
    return True, f"schema at head ({head})"


def _read_only(conn: Connection) -> bool:
    return conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"


#: Key of the PostgreSQL advisory lock that serialises migrations of several replicas.
MIGRATION_LOCK_KEY = 0x72756E74696D65  # "runtime"


def upgrade_schema_exclusively(url: str | URL) -> None:
    """Apply migrations one process at a time (PostgreSQL: an advisory lock), so replicas
    do not race."""
    engine = create_engine(url, pool_size=1)
    try:
        with dialect_of(engine).one_at_a_time(engine, MIGRATION_LOCK_KEY):
            upgrade_schema(url)
    finally:
        engine.dispose()
