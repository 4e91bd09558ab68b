"""Real databases for every test: a SQLite file and a fresh PostgreSQL database.

Both are built once per test session with the real Alembic migrations and wiped between
tests. PostgreSQL tests use the server named by ``RUNTIME_STORE_TEST_POSTGRES_URL`` and
skip when it does not answer, unless ``RUNTIME_STORE_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.schema import metadata
from tests.contract.builders import Backend

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def postgres_server_url() -> str:
    return os.environ.get("RUNTIME_STORE_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)


def _postgres_required() -> bool:
    return os.environ.get("RUNTIME_STORE_REQUIRE_POSTGRES") == "1"


def _admin_engine() -> Engine:
    return create_engine(postgres_server_url(), isolation_level="AUTOCOMMIT", pool_size=1)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a PostgreSQL database created for this test session, migrated to head."""
    admin = _admin_engine()
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        if _postgres_required():
            pytest.fail(f"PostgreSQL is required but does not answer: {exc}")
        pytest.skip("no PostgreSQL server answers; set RUNTIME_STORE_REQUIRE_POSTGRES=1 to fail")
    name = f"rs_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(postgres_server_url()).set(database=name).render_as_string(hide_password=False)
    try:
        upgrade_schema(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a SQLite file created for this test session, migrated to head."""
    path: Path = tmp_path_factory.mktemp("sqlite") / "runtime-store.db"
    url = f"sqlite:///{path}"
    upgrade_schema(url)
    return url


def wipe(engine: Engine) -> None:
    """Delete every row, children first, so each test starts from an empty database."""
    with engine.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())


@pytest.fixture(scope="session")
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    engine = create_engine(sqlite_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgres_engine(postgres_url: str) -> Iterator[Engine]:
    engine = create_engine(postgres_url)
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Engine:
    """A clean engine on each database backend."""
    eng: Engine = request.getfixturevalue(f"{request.param}_engine")
    wipe(eng)
    return eng


@pytest.fixture
def store(engine: Engine) -> Backend:
    """The store under test; the contract suite runs once per backend."""
    return SqlStore(engine)
