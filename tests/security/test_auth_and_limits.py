"""Roles, tokens and input bounds over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from app.cli import cli
from app.domain.tokens import TOKEN_PREFIX, Role
from app.main import create_app
from app.settings import Settings
from app.storage import create_engine, upgrade_schema
from app.storage.access.tokens import Tokens
from runtime_store_client import (
    AuthError,
    Checkpoint,
    HttpStore,
    PayloadTooLargeError,
    SessionNotFoundError,
)
from tests.api.wire_builders import (
    append_body,
    assert_problem,
    create_session,
    note,
    root_start_body,
    start_root,
    suspension_body,
    unchanged,
)
from tests.conftest import LiveServer, free_port, start_server, stop_server
from tests.contract.builders import run_start, uid

KEY = "test-token-key"


@dataclass
class Secured:
    http: TestClient
    tokens: dict[Role, str]
    registry: Tokens

    def as_role(self, role: Role) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}


@pytest.fixture
def secured(engine: Engine) -> Iterator[Secured]:
    """The app with one token per role, so every request must authenticate."""
    registry = Tokens(engine, KEY)
    tokens = {role: registry.create(f"{role.value}-{uid('t')}", role) for role in Role}
    url = engine.url.render_as_string(hide_password=False)
    app = create_app(Settings(database_url=url, token_key=SecretStr(KEY)))
    try:
        with TestClient(app, raise_server_exceptions=False) as http:
            yield Secured(http, tokens, registry)
    finally:
        # A shared database with active tokens would keep key-less servers from starting.
        _drop_tokens(engine)


def _drop_tokens(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM api_tokens")


def test_tokens_are_random_prefixed_and_stored_only_as_keyed_hashes(engine: Engine) -> None:
    registry = Tokens(engine, KEY)
    first, second = registry.create("a", Role.WORKER), registry.create("b", Role.WORKER)
    assert first.startswith(TOKEN_PREFIX)
    assert second.startswith(TOKEN_PREFIX)
    assert first != second
    assert len(first) >= len(TOKEN_PREFIX) + 40
    with engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT name, role, digest FROM api_tokens").all()
    assert all(first not in str(row) and second not in str(row) for row in stored)
    assert Tokens(engine, "another-key").authenticate(first) is None
    assert registry.authenticate(first) == ("a", Role.WORKER)
    _drop_tokens(engine)


def test_a_request_without_a_token_is_unauthenticated_with_www_authenticate(
    secured: Secured,
) -> None:
    response = secured.http.get("/v1/sessions/s-1")
    assert_problem(response, 401, "unauthenticated")
    assert response.headers["www-authenticate"] == "Bearer"


def test_an_unknown_token_is_unauthenticated(secured: Secured) -> None:
    response = secured.http.get(
        "/v1/sessions/s-1", headers={"Authorization": f"Bearer {TOKEN_PREFIX}not-a-real-one"}
    )
    assert_problem(response, 401, "unauthenticated")


def test_a_revoked_token_is_unauthenticated_at_once(secured: Secured) -> None:
    name = secured.registry.list()[0].name
    token = next(t for r, t in secured.tokens.items() if name.startswith(r.value))
    secured.registry.revoke(name)
    response = secured.http.get("/v1/sessions/s-1", headers={"Authorization": f"Bearer {token}"})
    assert_problem(response, 401, "unauthenticated")


def test_reader_reads_but_may_not_write(secured: Secured) -> None:
    admin = secured.as_role(Role.ADMIN)
    session_id = uid("s")
    secured.http.post(
        "/v1/sessions",
        json={"session_id": session_id, "created_at": "2026-11-30T01:02:03.456Z"},
        headers=admin,
    ).raise_for_status()
    reader = secured.as_role(Role.READER)
    assert secured.http.get(f"/v1/sessions/{session_id}", headers=reader).status_code == 200
    run = run_start(session_id=session_id)
    response = secured.http.post("/v1/runs/root-starts", json=root_start_body(run), headers=reader)
    assert_problem(response, 403, "permission_denied")
    assert secured.http.get(f"/v1/runs/{run.run_id}", headers=admin).status_code == 404


def test_worker_writes_runs_but_may_not_administer_sessions(secured: Secured) -> None:
    admin, worker = secured.as_role(Role.ADMIN), secured.as_role(Role.WORKER)
    session_id = uid("s")
    response = secured.http.post(
        "/v1/sessions",
        json={"session_id": session_id, "created_at": "2026-11-30T01:02:03.456Z"},
        headers=worker,
    )
    assert_problem(response, 403, "permission_denied")
    secured.http.post(
        "/v1/sessions",
        json={"session_id": session_id, "created_at": "2026-11-30T01:02:03.456Z"},
        headers=admin,
    ).raise_for_status()
    run = run_start(session_id=session_id)
    started = secured.http.post("/v1/runs/root-starts", json=root_start_body(run), headers=worker)
    assert started.status_code == 200
    for path in (f"/v1/sessions/{session_id}/end", f"/v1/sessions/{session_id}"):
        method = "POST" if path.endswith("/end") else "DELETE"
        body = {"ended_at": "2026-11-30T01:02:05.000Z"} if method == "POST" else None
        denied = secured.http.request(method, path, json=body, headers=worker)
        assert_problem(denied, 403, "permission_denied")


def test_an_open_service_needs_no_token(api: TestClient) -> None:
    session_id = create_session(api)
    assert api.get(f"/v1/sessions/{session_id}").status_code == 200


def test_the_openapi_document_declares_the_bearer_scheme(api: TestClient) -> None:
    document = api.get("/openapi.json").json()
    assert document["components"]["securitySchemes"]["token"] == {
        "type": "http",
        "scheme": "bearer",
        "description": document["components"]["securitySchemes"]["token"]["description"],
    }
    for item in document["paths"].values():
        for operation in item.values():
            assert operation["security"] == [{"token": []}]
            assert {"401", "403"} <= set(operation["responses"])


def test_http_store_sends_its_token_and_maps_401_to_auth_error(
    postgres_url: str, tmp_path: Path
) -> None:
    engine = create_engine(postgres_url)
    registry = Tokens(engine, KEY)
    worker = registry.create(uid("worker"), Role.WORKER)
    server: LiveServer | None = None
    try:
        env_key = {"RUNTIME_STORE_TOKEN_KEY": KEY}
        server = start_server(postgres_url, tmp_path / "server.log", env=env_key)
        # Authenticated: the read ran and found nothing.
        with (
            HttpStore(server.base_url, token=worker) as store,
            pytest.raises(SessionNotFoundError),
        ):
            store.load_session_status(uid("s"))
        with HttpStore(server.base_url) as anonymous, pytest.raises(AuthError) as info:
            anonymous.load_session_status("s-1")
        assert (info.value.code, info.value.status) == ("unauthenticated", 401)
    finally:
        if server is not None:
            stop_server(server)
        with engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM api_tokens")
        engine.dispose()


def test_serve_refuses_a_public_address_without_a_token_key_unless_insecure(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'open.db'}"
    upgrade_schema(url)
    result = CliRunner().invoke(
        cli,
        # A free port: the check must not depend on 8000 (the README's server) being free.
        ["serve", "--host", "0.0.0.0", "--port", str(free_port()), "--no-migrate"],
        env={"RUNTIME_STORE_DATABASE_URL": url, "RUNTIME_STORE_TOKEN_KEY": None},
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "refusing to serve: 0.0.0.0 is not a loopback address and RUNTIME_STORE_TOKEN_KEY is "
        "not set: set it (tokens are then required; see docs/administration.md, Run it "
        "securely), or pass --insecure to serve without authentication"
    ]


# --- bounds ------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_payload_too_large_and_writes_nothing(engine: Engine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    with TestClient(
        create_app(Settings(database_url=url, max_body_bytes=2048)), raise_server_exceptions=False
    ) as http:
        session_id = create_session(http)
        run = start_root(http, session_id)
        big = note(run, "big", payload=b'{"text":"' + b"x" * 4096 + b'"}')
        with unchanged(http, [run.run_id], session_id):
            response = http.post(f"/v1/runs/{run.run_id}/records", json=append_body(big))
            assert_problem(response, 413, "payload_too_large")

            def chunks() -> Iterator[bytes]:
                body = httpx.Request("POST", "/", json=append_body(big)).content
                for start in range(0, len(body), 512):
                    yield body[start : start + 512]

            streamed = http.post(
                f"/v1/runs/{run.run_id}/records",
                content=chunks(),
                headers={"content-type": "application/json"},
            )
            assert_problem(streamed, 413, "payload_too_large")


def test_an_identifier_over_256_bytes_is_invalid(api: TestClient) -> None:
    response = api.post(
        "/v1/sessions", json={"session_id": "é" * 129, "created_at": "2026-11-30T01:02:03.456Z"}
    )
    assert_problem(response, 422, "invalid_argument")
    assert "256 bytes" in response.json()["detail"]


def test_too_many_labels_are_invalid(api: TestClient) -> None:
    session_id = create_session(api)
    run = run_start(session_id=session_id, labels={f"k{n}": "v" for n in range(65)})
    with unchanged(api, [run.run_id], session_id):
        response = api.post("/v1/runs/root-starts", json=root_start_body(run))
        assert_problem(response, 422, "invalid_argument")


def test_a_record_payload_over_the_limit_is_payload_too_large(engine: Engine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    with TestClient(
        create_app(Settings(database_url=url, max_payload_bytes=1000)),
        raise_server_exceptions=False,
    ) as http:
        session_id = create_session(http)
        run = start_root(http, session_id)
        big = note(run, "big", payload=b'{"text":"' + b"x" * 1000 + b'"}')
        with unchanged(http, [run.run_id], session_id):
            response = http.post(f"/v1/runs/{run.run_id}/records", json=append_body(big))
            assert_problem(response, 413, "payload_too_large", run_id=run.run_id, event_key="big")


def test_a_checkpoint_over_the_limit_is_payload_too_large(engine: Engine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    with TestClient(
        create_app(Settings(database_url=url, max_checkpoint_bytes=100)),
        raise_server_exceptions=False,
    ) as http:
        session_id = create_session(http)
        run = start_root(http, session_id)
        big = Checkpoint(id="cp-1", data=bytes(101))
        with unchanged(http, [run.run_id], session_id):
            response = http.post(
                f"/v1/runs/{run.run_id}/suspension", json=suspension_body(run, big)
            )
            assert_problem(response, 413, "payload_too_large")


def test_the_client_maps_413_to_payload_too_large_error(sqlite_server: LiveServer) -> None:
    with HttpStore(sqlite_server.base_url) as store:
        run = run_start(session_id="s-none")
        with pytest.raises(PayloadTooLargeError) as info:
            store.append_run_record(
                note(run, "huge", payload=b'"' + b"x" * (9 * 1024 * 1024) + b'"')
            )
    assert info.value.status == 413
