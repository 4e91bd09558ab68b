"""The ``api`` fixture: the app in process, over a wiped database of each backend."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine

from app.main import create_app
from app.settings import Settings

# The shared assertions of the API tests report their operands like test code does.
pytest.register_assert_rewrite("tests.api.wire_builders")

with warnings.catch_warnings():
    # Starlette warns once, at import, that it prefers httpx2; the pyproject filter names
    # DeprecationWarning, but the warning is a UserWarning subclass.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient


def client_for(database_url: str) -> TestClient:
    """A client of a fresh app; unexpected exceptions become responses, as in production."""
    return TestClient(
        create_app(Settings(database_url=database_url)), raise_server_exceptions=False
    )


@pytest.fixture(scope="session")
def shared_apps() -> Iterator[dict[str, TestClient]]:
    """One app per database for the whole session, its lifespan entered once: a fresh app
    per test would pay for new connections and its first requests' warm-up every time."""
    clients: dict[str, TestClient] = {}
    try:
        yield clients
    finally:
        for client in clients.values():
            client.__exit__(None, None, None)


@pytest.fixture
def api(engine: Engine, shared_apps: dict[str, TestClient]) -> TestClient:
    """The app (lifespan entered) over the ``engine`` fixture's wiped database."""
    url = engine.url.render_as_string(hide_password=False)
    if url not in shared_apps:
        shared_apps[url] = client_for(url).__enter__()
    return shared_apps[url]
