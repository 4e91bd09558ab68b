"""CONTRACT.md section 8, "Browsers and open mode", against a live ``runtime-store serve``.

* Every operation that takes a body requires its declared media type (``application/json``;
  ``application/x-ndjson`` for an import): a body without one, or as ``text/plain``, a form
  or anything else is ``415 unsupported_media_type`` and writes nothing, so no page on
  another origin can write through a "simple" cross-site request.
* A service running open (no token key) answers only requests whose ``Host`` is loopback
  (``localhost``, ``127.0.0.0/8``, ``[::1]``, any port) or listed in
  ``RUNTIME_STORE_ALLOWED_HOSTS``; any other ``Host`` is ``403 permission_denied`` (DNS
  rebinding). With a token key the ``Host`` is not checked.
* Every response carries ``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import Engine

from app.domain.tokens import Role
from app.storage import SqlStore, create_engine
from app.storage.access.tokens import Tokens
from tests.api.wire_builders import (
    T0_WIRE,
    assert_problem,
    create_session,
    finish,
    start_root,
)
from tests.conftest import LiveServer, start_server, stop_server, wipe
from tests.lifecycle.world import build_world, exported
from tests.security import fresh_sqlite_url

KEY = "browser-rules-test-key-0123456789abcdef"
NDJSON = "application/x-ndjson"
#: What a page on another origin may send without a preflight, and what else is not JSON.
NOT_JSON = [
    None,
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=b",
    "application/xml",
    "application/octet-stream",
]
NOT_LOOPBACK = [
    "evil.example",
    "evil.example:8000",
    "127.0.0.1.evil.example",
    "localhost.evil.example",
    "testserver",
    "runtime-store.console",
    "192.168.1.10",
    "10.0.0.1:8000",
    "[::2]:8000",
    "[fe80::1]",
    "",
]
LOOPBACK = [
    "localhost",
    "localhost:1",
    "LOCALHOST:8000",
    "localhost.",
    "127.0.0.1",
    "127.0.0.1:65535",
    "127.9.8.7:80",
    "[::1]",
    "[::1]:8000",
    "[::ffff:127.0.0.1]",
]


@dataclass
class Served:
    server: LiveServer
    engine: Engine

    @property
    def url(self) -> str:
        return self.server.base_url


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest) -> Served:
    """A live server on each backend and its database (wiped for this test)."""
    server: LiveServer = request.getfixturevalue(f"{request.param}_server")
    engine: Engine = request.getfixturevalue(f"{request.param}_engine")
    wipe(engine)
    return Served(server, engine)


def _headers(content_type: str | None) -> dict[str, str]:
    return {} if content_type is None else {"content-type": content_type}


def _operations_with_a_body(http: httpx.Client) -> Iterator[tuple[str, str, str]]:
    """(method, path with "x" for every parameter, declared media type) of each operation."""
    document = http.get("/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if "requestBody" in operation:
                (media_type,) = operation["requestBody"]["content"]
                yield method.upper(), re.sub(r"\{[^}]+\}", "x", path), media_type


# --- media types -----------------------------------------------------------------------


def test_8_every_operation_with_a_body_refuses_a_body_of_another_media_type(
    served: Served,
) -> None:
    body = json.dumps({"session_id": "m-415", "created_at": T0_WIRE}).encode()
    with httpx.Client(base_url=served.url) as http:
        operations = list(_operations_with_a_body(http))
        assert len(operations) >= 15
        assert ("POST", "/v1/sessions/import", NDJSON) in operations
        for method, path, declared in operations:
            others = [*NOT_JSON, NDJSON if declared == "application/json" else "application/json"]
            for content_type in others:
                response = http.request(method, path, content=body, headers=_headers(content_type))
                problem = assert_problem(response, 415, "unsupported_media_type")
                assert declared in problem["detail"], (path, content_type)
        assert_problem(http.get("/v1/sessions/m-415"), 404, "session_not_found", session_id="m-415")


def test_8_json_operations_take_application_json_with_parameters(served: Served) -> None:
    with httpx.Client(base_url=served.url) as http:
        for index, content_type in enumerate(
            ["application/json", "Application/JSON; charset=utf-8"]
        ):
            body = json.dumps({"session_id": f"j-{index}", "created_at": T0_WIRE})
            response = http.post("/v1/sessions", content=body, headers=_headers(content_type))
            assert response.status_code == 200, response.text


def test_8_an_import_without_its_media_type_is_refused_and_writes_nothing(served: Served) -> None:
    store = SqlStore(served.engine)
    world = build_world(store, notes=1)
    data = exported(store, world.session_id)
    wipe(served.engine)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for content_type in [*NOT_JSON, "application/json", "application/ndjson"]:
            response = http.post(
                "/v1/sessions/import", content=data, headers=_headers(content_type)
            )
            problem = assert_problem(response, 415, "unsupported_media_type")
            assert NDJSON in problem["detail"]
            assert_problem(
                http.get(f"/v1/sessions/{world.session_id}"),
                404,
                "session_not_found",
                session_id=world.session_id,
            )
        imported = http.post(
            "/v1/sessions/import",
            content=data,
            headers={"content-type": f"{NDJSON}; charset=utf-8"},
        )
        assert imported.status_code == 200, imported.text
        assert imported.json()["id"] == world.session_id


# --- the Host of an open service ---------------------------------------------------------


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_8_an_open_service_refuses_a_host_that_is_not_loopback(served: Served, host: str) -> None:
    with httpx.Client(base_url=served.url, headers={"host": host}) as http:
        for response in (
            http.get("/v1/sessions"),
            http.post("/v1/sessions", json={"session_id": "rebound", "created_at": T0_WIRE}),
            http.get("/console"),
            http.get("/docs"),
        ):
            problem = assert_problem(response, 403, "permission_denied")
            assert repr(host) in problem["detail"]
            assert "RUNTIME_STORE_ALLOWED_HOSTS" in problem["detail"]
    with httpx.Client(base_url=served.url) as http:
        assert_problem(
            http.get("/v1/sessions/rebound"), 404, "session_not_found", session_id="rebound"
        )


def test_8_an_open_service_answers_loopback_hosts_on_any_port(served: Served) -> None:
    with httpx.Client(base_url=served.url) as http:
        create_session(http, "s-loopback")
    for host in LOOPBACK:
        with httpx.Client(base_url=served.url, headers={"host": host}) as http:
            response = http.get("/v1/sessions/s-loopback")
            assert response.status_code == 200, (host, response.text)
            # The console's in-process calls to the API are answered too.
            page = http.get("/console/fragments/session", params={"session_id": "s-loopback"})
            assert page.status_code == 200, (host, page.text)
            assert "s-loopback" in page.text
            assert 'data-problem="' not in page.text


def _raw_answer(server: LiveServer, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Status line, headers and body of what the server answers ``request`` on a socket."""
    host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)
    }
    return status, headers, body


def test_8_an_open_service_refuses_a_request_without_a_host(sqlite_server: LiveServer) -> None:
    status, headers, body = _raw_answer(sqlite_server, b"GET /v1/sessions HTTP/1.0\r\n\r\n")
    assert status.startswith("HTTP/1.1 403"), status
    assert headers["x-content-type-options"] == "nosniff"
    assert json.loads(body)["code"] == "permission_denied"


@pytest.fixture
def allowing_server(tmp_path: Path) -> Iterator[LiveServer]:
    env = {"RUNTIME_STORE_ALLOWED_HOSTS": "store.internal, 10.1.2.3:9000,[fd00::7]"}
    server = start_server(fresh_sqlite_url(tmp_path), tmp_path / "allowing.log", env=env)
    try:
        yield server
    finally:
        stop_server(server)


def test_8_an_open_service_answers_the_hosts_of_runtime_store_allowed_hosts(
    allowing_server: LiveServer,
) -> None:
    sessions = f"{allowing_server.base_url}/v1/sessions"
    for host in ["store.internal", "Store.Internal:8000", "10.1.2.3", "10.1.2.3:1", "[fd00::7]:80"]:
        assert httpx.get(sessions, headers={"host": host}).status_code == 200, host
    assert httpx.get(sessions, headers={"host": "localhost"}).status_code == 200
    for host in ["internal", "evil.store.internal", "10.1.2.4", "evil.example"]:
        response = httpx.get(sessions, headers={"host": host})
        assert_problem(response, 403, "permission_denied")


def test_8_with_a_token_key_the_host_is_not_checked(tmp_path: Path) -> None:
    url = fresh_sqlite_url(tmp_path)
    engine = create_engine(url)
    try:
        admin = Tokens(engine, KEY).create("admin", Role.ADMIN)
    finally:
        engine.dispose()
    server = start_server(url, tmp_path / "keyed.log", env={"RUNTIME_STORE_TOKEN_KEY": KEY})
    try:
        sessions = f"{server.base_url}/v1/sessions"
        evil = {"host": "evil.example"}
        assert_problem(httpx.get(sessions, headers=evil), 401, "unauthenticated")
        authorized = httpx.get(sessions, headers={**evil, "authorization": f"Bearer {admin}"})
        assert authorized.status_code == 200, authorized.text
    finally:
        stop_server(server)


# --- nosniff ---------------------------------------------------------------------------


def test_8_every_response_carries_nosniff(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as http:
        session_id = create_session(http, "s-nosniff")
        run = start_root(http, session_id)
        finish(http, run)
        responses = [
            http.get("/v1/sessions"),
            http.get(f"/v1/sessions/{session_id}"),
            http.get("/v1/sessions/missing"),
            http.get("/no/such/path"),
            http.delete("/v1/sessions"),
            http.post("/v1/sessions", content=b"{}", headers={"content-type": "text/plain"}),
            http.post("/v1/sessions", content=b"{", headers={"content-type": "application/json"}),
            http.get("/v1/sessions/%ff"),
            http.get("/v1/sessions/x", headers={"host": "evil.example"}),
            http.get(f"/v1/sessions/{session_id}/export"),
            http.get("/docs"),
            http.get("/redoc"),
            http.get("/openapi.json"),
            http.get("/docs-assets/redoc.standalone.js"),
            http.get("/console"),
            http.get("/console/static/console.js"),
            http.get("/console/fragments/sessions"),
            http.get("/healthz"),
            http.get("/readyz"),
            http.get("/metrics"),
        ]
        with http.stream("GET", f"/v1/runs/{run.run_id}/records/stream") as stream:
            responses.append(stream)
    for response in responses:
        assert response.headers.get_list("x-content-type-options") == ["nosniff"], (
            response.request.method,
            response.request.url,
            response.status_code,
        )
    status, headers, _ = _raw_answer(served.server, b"FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert status.startswith("HTTP/1.1 400"), status
    assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "head",
    [
        b"GET /v1/sessions HTTP/1.1\r\n\r\n",
        b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n",
    ],
    ids=["no-host", "two-hosts"],
)
def test_an_http_1_1_request_without_exactly_one_host_is_refused(
    sqlite_server: LiveServer, head: bytes
) -> None:
    status, headers, body = _raw_answer(sqlite_server, head)
    assert status.startswith("HTTP/1.1 400"), status
    assert headers["x-content-type-options"] == "nosniff"
    assert json.loads(body)["code"] == "invalid_argument"
