"""Error bodies never carry SQL, tracebacks, connection strings or tokens; logs never carry
tokens or payload contents.

Every error is provoked for real: a database trigger that fails a write, a database that
cannot be reached, bad, revoked and under-privileged tokens, and a live uvicorn server
whose every logger (the app's, uvicorn's, SQLAlchemy's) is captured at DEBUG.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx
import pytest
import sqlalchemy as sa
import uvicorn
from fastapi import FastAPI
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.domain.tokens import TOKEN_PREFIX, Role
from app.main import create_app
from app.observability.logs import JsonFormatter
from app.settings import Settings
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from runtime_store_client import Checkpoint
from tests.api.wire_builders import (
    append_body,
    create_session,
    note,
    ok,
    start_root,
    suspension_body,
    wire_record,
)
from tests.conftest import free_port
from tests.security import fresh_postgres_url, fresh_sqlite_url

TOKEN_KEY: Final = "no-leaks-token-key-0123456789abcdef"
PASSWORD: Final = "s3cret-pw"
UNREACHABLE: Final = f"postgresql://leaky-user:{PASSWORD}@127.0.0.1:9/private_db"

#: Text that only a leak of internals could put in an error body (case-sensitive: SQL).
BODY_MARKERS: Final = (
    "SELECT",
    "INSERT",
    "UPDATE ",
    "DELETE FROM",
    "run_records",
    "api_tokens",
    "disk on fire",
    'File "',
    ".py",
)
#: The same, compared case-insensitively.
BODY_MARKERS_ANY_CASE: Final = (
    "traceback",
    "sqlalchemy",
    "psycopg",
    "sqlite3",
    "postgresql://",
    "postgresql+psycopg",
    "sqlite:///",
    "exception",
)


def secret_parts(secret: str) -> list[str]:
    """The secret and, for a token, its random part and a slice of it (a partial echo)."""
    parts = [secret]
    if secret.startswith(TOKEN_PREFIX):
        random_part = secret.removeprefix(TOKEN_PREFIX)
        parts += [random_part, random_part[5:17]]
    return parts


def assert_clean_response(response: httpx.Response, secrets: Iterable[str]) -> None:
    """No internals in the body; no secret in the body or any header."""
    body = response.text
    for marker in BODY_MARKERS:
        assert marker not in body, f"error body carries {marker!r}: {body}"
    for marker in BODY_MARKERS_ANY_CASE:
        assert marker not in body.lower(), f"error body carries {marker!r}: {body}"
    exposed = body + "\n" + "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    for secret in secrets:
        for part in secret_parts(secret):
            assert part not in exposed, f"the response carries the secret {part!r}: {exposed}"


def assert_clean_logs(log_text: str, secrets: Iterable[str], what: str) -> None:
    for secret in secrets:
        for part in secret_parts(secret):
            found = log_text.find(part)
            context = log_text[max(0, found - 300) : found + 100]
            assert found < 0, f"the logs carry {what} {part!r}:\n...{context}..."


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every logger at DEBUG, including SQLAlchemy's (which defaults itself to WARNING)."""
    caplog.set_level(logging.DEBUG)
    for name in ("sqlalchemy", "sqlalchemy.engine", "sqlalchemy.pool", "uvicorn", "runtime_store"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


#: The test's own HTTP client logs too; only the server's logs are under test.
CLIENT_LOGGERS: Final = ("httpx", "httpcore")


def logged_text(caplog: pytest.LogCaptureFixture) -> str:
    """The server's captured records, messages, arguments and tracebacks included, and
    the same records as ``serve`` writes them (JSON lines, every field; each must parse)."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    records = [r for r in caplog.records if r.name.split(".")[0] not in CLIENT_LOGGERS]
    json_lines = [JsonFormatter().format(record) for record in records]
    for line in json_lines:
        json.loads(line)
    return "\n".join([formatter.format(record) for record in records] + json_lines)


# --- databases with tokens -------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    """A fresh database with an admin, a reader, a revoked token and a never-issued one."""

    database_url: str
    admin: str
    reader: str
    revoked: str
    unknown: str

    def settings(self) -> Settings:
        return Settings(database_url=self.database_url, token_key=SecretStr(TOKEN_KEY))

    def all_tokens(self) -> list[str]:
        return [self.admin, self.reader, self.revoked, self.unknown]


def _credentials(database_url: str) -> Credentials:
    engine = create_engine(database_url)
    try:
        tokens = Tokens(engine, TOKEN_KEY)
        admin = tokens.create("admin", Role.ADMIN)
        reader = tokens.create("reader", Role.READER)
        revoked = tokens.create("revoked", Role.ADMIN)
        tokens.revoke("revoked")
    finally:
        engine.dispose()
    unknown = TOKEN_PREFIX + uuid.uuid4().hex + uuid.uuid4().hex[:11]
    return Credentials(database_url, admin, reader, revoked, unknown)


@pytest.fixture(params=["sqlite", "postgres"])
def credentials(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Credentials]:
    if request.param == "sqlite":
        yield _credentials(fresh_sqlite_url(tmp_path))
        return
    server_url: str = request.getfixturevalue("postgres_url")  # skips without PostgreSQL
    with fresh_postgres_url(server_url) as url:
        yield _credentials(url)


def _explode_on(database_url: str, event_key: str) -> None:
    """A trigger that fails every insert of a record with ``event_key``."""
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql(
                    f"CREATE TRIGGER explode BEFORE INSERT ON run_records "
                    f"WHEN NEW.event_key = '{event_key}' "
                    f"BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
                )
                return
            conn.execute(
                sa.text(
                    f"""
                    CREATE FUNCTION explode() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                      IF NEW.event_key = '{event_key}' THEN RAISE EXCEPTION 'disk on fire'; END IF;
                      RETURN NEW;
                    END $$;
                    CREATE TRIGGER explode BEFORE INSERT ON run_records
                      FOR EACH ROW EXECUTE FUNCTION explode();
                    """
                )
            )
    finally:
        engine.dispose()


def client(app: FastAPI, token: str | None = None) -> TestClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return TestClient(app, raise_server_exceptions=False, headers=headers)


# --- 500: a write the database refuses -------------------------------------------------


def test_a_failing_write_answers_a_500_that_names_only_the_request_id(
    credentials: Credentials, all_logs: pytest.LogCaptureFixture
) -> None:
    _explode_on(credentials.database_url, "explode")
    marker = f"PAYLOAD-{uuid.uuid4().hex}"
    with client(create_app(credentials.settings()), credentials.admin) as http:
        run = start_root(http, create_session(http))
        record = note(run, "explode", payload=f'{{"secret":"{marker}"}}'.encode())
        response = http.post(f"/v1/runs/{run.run_id}/records", json=append_body(record))

    assert response.status_code == 500, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "internal"
    assert problem["request_id"] == response.headers["x-request-id"]
    assert set(problem) == {"type", "title", "status", "detail", "code", "request_id"}
    assert_clean_response(response, [*credentials.all_tokens(), marker])
    # The failure is logged once, under the request ID the client was given ...
    errors = [r for r in all_logs.records if r.levelno >= logging.ERROR]
    assert [getattr(r, "request_id", None) for r in errors] == [problem["request_id"]]
    # ... without the payload or any token.
    assert_clean_logs(logged_text(all_logs), [marker], "the payload")
    assert_clean_logs(logged_text(all_logs), credentials.all_tokens(), "a token")


# --- 503: a database that cannot be reached --------------------------------------------


@pytest.mark.parametrize("token_key", [None, TOKEN_KEY], ids=["open", "with-token-key"])
def test_an_unreachable_database_answers_503_without_its_password_or_address(
    token_key: str | None, all_logs: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        database_url=UNREACHABLE, token_key=SecretStr(token_key) if token_key else None
    )
    requests = [
        ("GET", "/v1/sessions/s1", None),
        ("POST", "/v1/sessions", {"session_id": "s1", "created_at": "2026-11-30T01:02:03.456Z"}),
        ("GET", "/v1/runs/r1/records", None),
        ("GET", "/readyz", None),
    ]
    leaks = [PASSWORD, "leaky-user", "private_db", "127.0.0.1", ":9/", "postgresql"]
    with client(create_app(settings), TOKEN_PREFIX + "x" * 43) as http:
        for method, path, body in requests:
            response = http.request(method, path, json=body)

            assert response.status_code == 503, (path, response.text)
            assert response.headers["retry-after"]
            if path != "/readyz":
                assert response.json()["code"] == "unavailable"
            assert_clean_response(response, leaks)
    assert_clean_logs(logged_text(all_logs), [PASSWORD], "the database password")


# --- 401 / 403: tokens are never echoed ------------------------------------------------


def test_a_bad_revoked_or_underprivileged_token_is_refused_without_echoing_it(
    credentials: Credentials, all_logs: pytest.LogCaptureFixture
) -> None:
    app = create_app(credentials.settings())
    cases = [
        (credentials.unknown, 401, "unauthenticated"),
        (credentials.revoked, 401, "unauthenticated"),
        (credentials.unknown.removeprefix(TOKEN_PREFIX), 401, "unauthenticated"),
        (credentials.admin + "x", 401, "unauthenticated"),
        (credentials.reader, 403, "permission_denied"),
    ]
    body = {"session_id": "s1", "created_at": "2026-11-30T01:02:03.456Z"}
    with client(app) as http:
        for token, status, code in cases:
            for headers in (
                {"Authorization": f"Bearer {token}"},
                {"Authorization": f"bearer   {token}"},
                {"Authorization": token},
                {"Authorization": f"Basic {token}"},
            ):
                response = http.post("/v1/sessions", json=body, headers=headers)

                expected = (
                    (status, code)
                    if headers["Authorization"].lower().startswith("bearer")
                    else (401, "unauthenticated")
                )
                assert (response.status_code, response.json()["code"]) == expected, headers
                assert response.headers["content-type"] == "application/problem+json"
                assert_clean_response(response, [token, *credentials.all_tokens()])
    assert_clean_logs(logged_text(all_logs), credentials.all_tokens(), "a token")


# --- logs of a live server -------------------------------------------------------------


@dataclass
class LiveLogs:
    """What a live uvicorn server logged while it served a scripted session."""

    text: str
    tokens: list[str]
    payloads: list[str]  # and the checkpoint, as bytes and as base64


@pytest.fixture
def live_logs(credentials: Credentials, all_logs: pytest.LogCaptureFixture) -> LiveLogs:
    """Serve the app with uvicorn (in a thread, logging into caplog) and exercise it.

    The session stores, reads back and conflicts distinctive payloads, writes one that the
    database refuses, suspends with a distinctive checkpoint and reads it back, and sends
    bad, revoked and under-privileged tokens.
    """
    _explode_on(credentials.database_url, "explode")
    markers = [f"PAYLOAD-{name}-{uuid.uuid4().hex}" for name in ("kept", "changed", "failed")]
    checkpoint = Checkpoint(id="cp-leak", data=f"CHECKPOINT-{uuid.uuid4().hex}".encode())
    config = uvicorn.Config(
        create_app(credentials.settings()),
        host="127.0.0.1",
        port=free_port(),
        log_config=None,  # keep the loggers as they are, so caplog sees every record
        log_level="debug",
        access_log=True,
        lifespan="on",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped while starting"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    base_url = f"http://127.0.0.1:{config.port}"
    try:
        admin = {"Authorization": f"Bearer {credentials.admin}"}
        with httpx.Client(base_url=base_url, headers=admin, timeout=30) as http:
            run = start_root(http, create_session(http))
            kept = note(run, "kept", payload=f'{{"secret":"{markers[0]}"}}'.encode())
            ok(http.post(f"/v1/runs/{run.run_id}/records", json=append_body(kept)))
            changed = note(run, "kept", payload=f'{{"secret":"{markers[1]}"}}'.encode())
            conflict = http.post(f"/v1/runs/{run.run_id}/records", json=append_body(changed))
            assert conflict.status_code == 409, conflict.text
            failed = note(run, "explode", payload=f'{{"secret":"{markers[2]}"}}'.encode())
            refused = http.post(f"/v1/runs/{run.run_id}/records", json=append_body(failed))
            assert refused.status_code == 500, refused.text
            page = ok(http.get(f"/v1/runs/{run.run_id}/records", params={"limit": 10}))
            assert wire_record(kept, record_id="2") in page["records"]
            bad_json = note(run, "bad", payload=f'{{"secret":"{markers[0]}"'.encode())
            invalid = http.post(f"/v1/runs/{run.run_id}/records", json=append_body(bad_json))
            assert invalid.status_code == 422, invalid.text
            suspension = f"/v1/runs/{run.run_id}/suspension"
            ok(http.post(suspension, json=suspension_body(run, checkpoint)))
            ok(http.get(suspension))
            for token in (credentials.unknown, credentials.revoked, credentials.reader):
                other = {"Authorization": f"Bearer {token}"}
                denied = http.post("/v1/sessions", json={}, headers=other)
                assert denied.status_code in (401, 403), denied.text
    finally:
        server.should_exit = True
        thread.join(timeout=20)
    assert not thread.is_alive(), "uvicorn did not stop"
    logged = logged_text(all_logs)
    assert "uvicorn.access" in logged  # the server's loggers were captured
    assert "runtime_store.access" in logged
    assert "sqlalchemy.engine" in logged
    secrets = [*markers, checkpoint.data.decode(), base64.b64encode(checkpoint.data).decode()]
    return LiveLogs(logged, credentials.all_tokens(), secrets)


def test_a_live_server_never_logs_a_token(live_logs: LiveLogs) -> None:
    assert_clean_logs(live_logs.text, live_logs.tokens, "a token")


def test_a_live_server_never_logs_payload_or_checkpoint_contents(live_logs: LiveLogs) -> None:
    assert_clean_logs(live_logs.text, live_logs.payloads, "a payload or checkpoint")
