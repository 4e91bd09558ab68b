"""Export and import over HTTP (CONTRACT.md 11.4): a live server and both real clients,
and the routes' bounds and refusals in process."""

from __future__ import annotations

import asyncio
import io

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine

from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage import SqlStore
from app.storage.access.tokens import Tokens
from runtime_store_client import (
    AsyncHttpStore,
    HttpStore,
    ImportConflictError,
    InvalidArgumentError,
    SessionNotFoundError,
    SessionTransfer,
)
from tests.conftest import LiveServer, wipe
from tests.lifecycle.world import build_world, exported

NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture
def served(live_server: LiveServer, request: pytest.FixtureRequest) -> tuple[LiveServer, Engine]:
    """A live server and its (wiped) database."""
    kind = "postgres" if "postgresql" in live_server.database_url else "sqlite"
    engine: Engine = request.getfixturevalue(f"{kind}_engine")
    return live_server, engine


def test_both_clients_export_and_import_the_same_bytes(served: tuple[LiveServer, Engine]) -> None:
    server, engine = served
    store = SqlStore(engine)
    world = build_world(store)
    original = exported(store, world.session_id)

    with HttpStore(server.base_url) as http:
        assert isinstance(http, SessionTransfer)
        assert exported(http, world.session_id) == original
        wipe(engine)
        assert http.import_session(io.BytesIO(original)).id == world.session_id
        assert exported(http, world.session_id) == original
        with pytest.raises(ImportConflictError) as conflict:
            http.import_session(io.BytesIO(original))
    assert (conflict.value.status, conflict.value.session_id) == (409, world.session_id)

    async def through_async() -> bytes:
        async with AsyncHttpStore(server.base_url) as client:
            buffer = io.BytesIO()
            await client.export_session(world.session_id, buffer)
            wipe(engine)
            await client.import_session(io.BytesIO(buffer.getvalue()))
            again = io.BytesIO()
            await client.export_session(world.session_id, again)
            return again.getvalue()

    assert asyncio.run(through_async()) == original


def test_a_broken_line_reaches_the_client_with_its_number(
    served: tuple[LiveServer, Engine],
) -> None:
    server, engine = served
    store = SqlStore(engine)
    world = build_world(store, notes=1)
    lines = exported(store, world.session_id).splitlines(keepends=True)
    wipe(engine)

    with HttpStore(server.base_url) as http:
        with pytest.raises(InvalidArgumentError) as broken:
            http.import_session(io.BytesIO(b"".join(lines[:-1])))
        with pytest.raises(SessionNotFoundError):
            http.export_session("no-such-session", io.BytesIO())
        with pytest.raises(SessionNotFoundError):
            http.load_session(world.session_id)
    assert broken.value.line == len(lines)
    response = httpx.post(
        f"{server.base_url}/v1/sessions/import", content=b"".join(lines[:3]), headers=NDJSON
    )
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["line"] == 4


# --- in process --------------------------------------------------------------------------


def _app(engine: Engine, **settings: object) -> TestClient:
    url = engine.url.render_as_string(hide_password=False)
    return TestClient(
        create_app(Settings(database_url=url, **settings)),  # type: ignore[arg-type]
        raise_server_exceptions=False,
    )


@pytest.fixture
def session_file(engine: Engine) -> tuple[str, bytes]:
    store = SqlStore(engine)
    world = build_world(store, notes=1)
    data = exported(store, world.session_id)
    wipe(engine)
    return world.session_id, data


def test_an_import_body_has_its_own_bound_and_media_type(
    engine: Engine, session_file: tuple[str, bytes]
) -> None:
    _, data = session_file
    with _app(engine, max_body_bytes=100, max_import_bytes=len(data)) as client:
        assert client.post("/v1/sessions/import", content=data, headers=NDJSON).status_code == 200
    wipe(engine)
    with _app(engine, max_import_bytes=len(data) - 1) as client:
        declared = client.post("/v1/sessions/import", content=data, headers=NDJSON)
        streamed = client.post("/v1/sessions/import", content=iter([data]), headers=NDJSON)
        typed = client.post(
            "/v1/sessions/import", content=data[:100], headers={"content-type": "text/csv"}
        )
    assert (declared.status_code, declared.json()["code"]) == (413, "payload_too_large")
    assert (streamed.status_code, streamed.json()["code"]) == (413, "payload_too_large")
    assert (typed.status_code, typed.json()["code"]) == (415, "unsupported_media_type")


def test_export_and_import_are_for_admins(engine: Engine, session_file: tuple[str, bytes]) -> None:
    session_id, data = session_file
    key = "lifecycle-test-key"
    tokens = {role: Tokens(engine, key).create(f"{role.value}-lifecycle", role) for role in Role}
    with _app(engine, token_key=SecretStr(key)) as client:
        for role in (Role.WORKER, Role.READER):
            bearer = {"Authorization": f"Bearer {tokens[role]}"}
            export = client.get(f"/v1/sessions/{session_id}/export", headers=bearer)
            imported = client.post(
                "/v1/sessions/import", content=data, headers={**NDJSON, **bearer}
            )
            assert (export.status_code, imported.status_code) == (403, 403)
        admin = {"Authorization": f"Bearer {tokens[Role.ADMIN]}", **NDJSON}
        assert client.post("/v1/sessions/import", content=data, headers=admin).status_code == 200
        export = client.get(f"/v1/sessions/{session_id}/export", headers=admin)
    assert export.status_code == 200
    assert export.headers["content-type"] == "application/x-ndjson"
    assert export.content == data
