"""A second, empty database of each kind: the target of every import.

The ``engine`` fixture (tests/conftest.py) is the source; ``target`` gives a wiped second
database of the kind asked for, so all four pairs (SQLite and PostgreSQL, both ways) run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from app.storage import create_engine, upgrade_schema
from tests.conftest import _admin_engine, wipe


@pytest.fixture(scope="session")
def sqlite_target_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path: Path = tmp_path_factory.mktemp("target") / "target.db"
    url = f"sqlite:///{path}"
    upgrade_schema(url)
    engine = create_engine(url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgres_target_engine(postgres_url: str) -> Iterator[Engine]:
    """A second PostgreSQL database beside the session's ``postgres_url``."""
    admin = _admin_engine()
    name = f"rs_target_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    engine = None
    try:
        upgrade_schema(url)
        engine = create_engine(url)
        yield engine
    finally:
        if engine is not None:
            engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def target_of(request: pytest.FixtureRequest, kind: str) -> Engine:
    """The wiped second database of ``kind`` (``sqlite`` or ``postgres``)."""
    engine: Engine = request.getfixturevalue(f"{kind}_target_engine")
    wipe(engine)
    return engine
