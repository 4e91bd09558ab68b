"""Authorization off the database's path: a request's token is settled once, before its
body, from the process's known identities; a revoked token is refused by every service
process within the documented bound (``REVOCATION_BOUND_SECONDS``)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine

from app.api.auth import REVALIDATE_SECONDS, REVOCATION_BOUND_SECONDS, AuthMode
from app.domain.tokens import TOKEN_PREFIX, Role
from app.main import create_app
from app.settings import Settings
from app.storage.access.tokens import Tokens
from tests.api.wire_builders import assert_problem, create_session, start_root
from tests.conftest import LiveServer, forget_tokens, start_server, stop_server
from tests.contract.builders import uid

KEY = "test-token-key-identities"
CREATED_AT = "2026-11-30T01:02:03.456Z"


class TokenReads:
    """The statements an engine runs against ``api_tokens``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.statements: list[str] = []

    def _seen(self, *args: object) -> None:
        sql = str(args[2])
        if "api_tokens" in sql:
            self.statements.append(sql)

    def __enter__(self) -> TokenReads:
        sa.event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *_exc: object) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)


@pytest.fixture
def secured(engine: Engine) -> Iterator[tuple[TestClient, dict[Role, str], Engine]]:
    registry = Tokens(engine, KEY)
    tokens = {role: registry.create(f"{role.value}-{uid('t')}", role) for role in Role}
    url = engine.url.render_as_string(hide_password=False)
    app = create_app(Settings(database_url=url, token_key=SecretStr(KEY)))
    try:
        with TestClient(app, raise_server_exceptions=False) as http:
            yield http, tokens, app.state.engine
    finally:
        forget_tokens(engine)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_known_token_costs_no_store_call(
    secured: tuple[TestClient, dict[Role, str], Engine],
) -> None:
    http, tokens, engine = secured
    reader = _bearer(tokens[Role.READER])
    assert http.get("/v1/whoami", headers=reader).status_code == 200  # looked up once
    with TokenReads(engine) as reads:
        for _ in range(50):
            assert http.get("/v1/whoami", headers=reader).json()["role"] == "reader"
    # Only the periodic revalidation (one read for every known token) may run meanwhile.
    per_token = [sql for sql in reads.statements if " IN " not in sql.upper()]
    assert per_token == []
    assert len(reads.statements) <= 50 // 10


def test_unknown_tokens_are_refused_and_never_fill_the_cache(
    secured: tuple[TestClient, dict[Role, str], Engine],
) -> None:
    http, _, _ = secured
    auth: AuthMode = http.app.state.auth  # type: ignore[attr-defined]
    known_before = len(auth.identities)
    for index in range(30):
        token = f"{TOKEN_PREFIX}{'x' * 40}{index}"
        assert_problem(http.get("/v1/whoami", headers=_bearer(token)), 401, "unauthenticated")
    assert_problem(http.get("/v1/whoami", headers=_bearer("x" * 100_000)), 401, "unauthenticated")
    assert len(auth.identities) == known_before


def test_a_body_that_fails_to_parse_is_refused_by_role_without_a_store_call(
    secured: tuple[TestClient, dict[Role, str], Engine],
) -> None:
    http, tokens, engine = secured
    for role in Role:
        assert http.get("/v1/whoami", headers=_bearer(tokens[role])).status_code == 200
    broken = {"content-type": "application/json"}
    with TokenReads(engine) as reads:
        anonymous = http.post("/v1/sessions", content=b"{not json", headers=broken)
        assert_problem(anonymous, 401, "unauthenticated")
        worker = {**broken, **_bearer(tokens[Role.WORKER])}
        denied = http.post("/v1/sessions", content=b"{not json", headers=worker)
        assert_problem(denied, 403, "permission_denied")
        admin = {**broken, **_bearer(tokens[Role.ADMIN])}
        invalid = http.post("/v1/sessions", content=b"{", headers=admin)
        assert (invalid.status_code, invalid.json()["code"]) == (422, "invalid_argument")
    assert [sql for sql in reads.statements if " IN " not in sql.upper()] == []


def test_a_refusal_names_the_role_the_operation_needs(
    secured: tuple[TestClient, dict[Role, str], Engine],
) -> None:
    http, tokens, _ = secured
    body = {"session_id": uid("s"), "created_at": CREATED_AT}
    denied = http.post("/v1/sessions", json=body, headers=_bearer(tokens[Role.WORKER]))
    assert_problem(denied, 403, "permission_denied")
    detail = denied.json()["detail"]
    assert "needs a token of the admin role" in detail
    assert "has the worker role" in detail


def test_two_authorization_headers_are_refused(
    secured: tuple[TestClient, dict[Role, str], Engine],
) -> None:
    http, tokens, _ = secured
    headers = [
        ("authorization", f"Bearer {tokens[Role.ADMIN]}"),
        ("authorization", f"Bearer {tokens[Role.READER]}"),
    ]
    response = http.get("/v1/whoami", headers=httpx.Headers(headers))
    assert_problem(response, 401, "unauthenticated")
    assert "more than one Authorization header" in response.json()["detail"]


def _raw_request_head(server: LiveServer, head: bytes) -> bytes:
    """Send only a request's head (its body announced, never sent) and read the answer."""
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


@pytest.fixture
def secured_server(
    postgres_url: str, postgres_engine: Engine, tmp_path: Path
) -> Iterator[LiveServer]:
    Tokens(postgres_engine, KEY).create(uid("admin"), Role.ADMIN)
    server = start_server(
        postgres_url, tmp_path / "server.log", env={"RUNTIME_STORE_TOKEN_KEY": KEY}
    )
    try:
        yield server
    finally:
        stop_server(server)
        forget_tokens(postgres_engine)


@pytest.mark.postgres
def test_a_request_without_a_token_is_refused_before_its_body_is_read(
    secured_server: LiveServer,
) -> None:
    head = (
        b"POST /v1/runs/r-1/records HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n"
    )
    answer = _raw_request_head(secured_server, head)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]


def _status(server: LiveServer, token: str) -> int:
    return httpx.get(f"{server.base_url}/v1/whoami", headers=_bearer(token), timeout=10).status_code


@pytest.mark.postgres
@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_a_revoked_token_is_refused_by_every_process_within_the_bound(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two service processes over one database know a token; it is revoked (as
    ``runtime-store tokens revoke`` does, from a third process's connection): every request
    either process begins ``REVOCATION_BOUND_SECONDS`` after the revoke committed is
    refused."""
    url: str = request.getfixturevalue(f"{database}_url")
    engine: Engine = request.getfixturevalue(f"{database}_engine")
    registry = Tokens(engine, KEY)
    name = uid("worker")
    token = registry.create(name, Role.WORKER)
    env = {"RUNTIME_STORE_TOKEN_KEY": KEY}
    servers = [start_server(url, tmp_path / f"server-{i}.log", env=env) for i in range(2)]
    try:
        for server in servers:  # each process now holds the token's identity
            assert [_status(server, token) for _ in range(3)] == [200, 200, 200]
        registry.revoke(name)
        revoked_at = time.monotonic()
        time.sleep(REVOCATION_BOUND_SECONDS)
        assert time.monotonic() - revoked_at >= REVOCATION_BOUND_SECONDS
        for server in servers:
            assert _status(server, token) == 401, server.log()
    finally:
        for server in servers:
            stop_server(server)
        forget_tokens(engine)


#: A stream or wait notices a revoke at its next check after the revocation bound: the
#: bound plus one revalidation period (docs/administration.md says 2 s).
STREAM_BOUND_SECONDS = REVOCATION_BOUND_SECONDS + REVALIDATE_SECONDS


@pytest.mark.postgres
def test_a_revoked_tokens_live_tail_and_wait_end_within_the_bound_in_every_process(
    postgres_url: str, postgres_engine: Engine, tmp_path: Path
) -> None:
    """A live tail open on one service process and a wait open on another, both with a
    worker token: once the token is revoked the tail closes (its reconnect is refused
    401) and the wait is refused 401, each within ``STREAM_BOUND_SECONDS``."""
    registry = Tokens(postgres_engine, KEY)
    admin = registry.create(uid("admin"), Role.ADMIN)
    name = uid("worker")
    worker = registry.create(name, Role.WORKER)
    env = {"RUNTIME_STORE_TOKEN_KEY": KEY}
    servers = [start_server(postgres_url, tmp_path / f"server-{i}.log", env=env) for i in range(2)]
    ended: dict[str, float] = {}
    outcome: dict[str, Any] = {}
    try:
        with httpx.Client(base_url=servers[0].base_url, headers=_bearer(admin)) as http:
            run = start_root(http, create_session(http))

        def tail() -> None:
            with httpx.stream(
                "GET",
                f"{servers[0].base_url}/v1/runs/{run.run_id}/records/stream",
                headers=_bearer(worker),
                timeout=30,
            ) as stream:
                outcome["tail_status"] = stream.status_code
                outcome["tail_events"] = [line for line in stream.iter_lines() if line]
            ended["tail"] = time.monotonic()

        def wait() -> None:
            answer = httpx.get(
                f"{servers[1].base_url}/v1/runs/{run.run_id}/wait?timeout=30",
                headers=_bearer(worker),
                timeout=40,
            )
            outcome["wait"] = (answer.status_code, answer.json().get("code"))
            ended["wait"] = time.monotonic()

        threads = [threading.Thread(target=tail), threading.Thread(target=wait)]
        for thread in threads:
            thread.start()
        time.sleep(1.5)  # both are open and idle (the run stays running)
        assert not ended
        registry.revoke(name)
        revoked_at = time.monotonic()
        for thread in threads:
            thread.join(timeout=30)
        assert outcome["tail_status"] == 200
        assert "event: end" not in outcome["tail_events"], outcome["tail_events"]
        assert outcome["wait"] == (401, "unauthenticated")
        # The client's own scheduling on a busy machine: half a second of room.
        assert ended["tail"] - revoked_at < STREAM_BOUND_SECONDS + 0.5, ended
        assert ended["wait"] - revoked_at < STREAM_BOUND_SECONDS + 0.5, ended
        reconnect = httpx.get(
            f"{servers[0].base_url}/v1/runs/{run.run_id}/records/stream", headers=_bearer(worker)
        )
        assert_problem(reconnect, 401, "unauthenticated")
    finally:
        for server in servers:
            stop_server(server)
        forget_tokens(postgres_engine)
