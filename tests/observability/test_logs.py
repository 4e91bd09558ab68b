"""Structured logs: one JSON access line per request, every line JSON with its request ID,
the 500's traceback under the ID its body names, and never a token, payload or checkpoint,
whatever the calls carry (generated ones included)."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.domain.tokens import TOKEN_PREFIX, Role
from app.main import create_app
from app.observability.logs import LogFormat, LogLevel, TextFormatter, log_config
from app.settings import Settings
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from runtime_store_client import Checkpoint
from tests.api.wire_builders import (
    append_body,
    create_session,
    finish,
    note,
    ok,
    start_root,
    suspension_body,
)
from tests.observability import captured_lines
from tests.security import fresh_sqlite_url
from tests.security.test_no_leaks import _explode_on

#: The fields of every access line.
ACCESS_FIELDS = {
    "time",
    "level",
    "logger",
    "message",
    "request_id",
    "pid",
    "operation",
    "method",
    "path",
    "status",
    "duration_ms",
    "role",
    "token_name",
    "client",
}
TOKEN_KEY = "logs-token-key-0123456789abcdef"


def _access(lines: list[str]) -> list[dict[str, Any]]:
    parsed = [json.loads(line) for line in lines]
    return [entry for entry in parsed if entry["logger"] == "runtime_store.access"]


def test_every_request_logs_one_json_access_line_with_its_request_id(sqlite_url: str) -> None:
    with (
        captured_lines() as lines,
        TestClient(create_app(Settings(database_url=sqlite_url))) as http,
    ):
        session_id = create_session(http)
        run = start_root(http, session_id)
        appended = http.post(
            f"/v1/runs/{run.run_id}/records",
            json=append_body(note(run, "a")),
            headers={"X-Request-ID": "client-chosen-id-1"},
        )
        missing = http.get("/v1/runs/no-such-run")

    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    access = [entry for entry in entries if entry["logger"] == "runtime_store.access"]
    assert [(entry["operation"], entry["status"]) for entry in access] == [
        ("create-session", 200),
        ("start-root-run", 200),
        ("append-run-record", 200),
        ("load-run", 404),
    ]
    for entry in access:
        assert set(entry) >= ACCESS_FIELDS, entry
        assert entry["level"] == "info"
        assert entry["duration_ms"] >= 0
    assert access[2]["request_id"] == "client-chosen-id-1" == appended.headers["x-request-id"]
    assert access[2]["path"] == "/v1/runs/{run_id}/records"  # the template, not the run ID
    assert access[3]["request_id"] == missing.headers["x-request-id"]
    assert access[3]["code"] == "run_not_found"
    assert run.run_id not in "\n".join(lines)


def test_a_forced_500_logs_one_error_line_with_the_request_id_of_its_body(tmp_path: Path) -> None:
    url = fresh_sqlite_url(tmp_path)
    _explode_on(url, "explode")
    with (
        captured_lines() as lines,
        TestClient(create_app(Settings(database_url=url)), raise_server_exceptions=False) as http,
    ):
        run = start_root(http, create_session(http))
        response = http.post(
            f"/v1/runs/{run.run_id}/records", json=append_body(note(run, "explode"))
        )

    assert response.status_code == 500, response.text
    request_id = response.json()["request_id"]
    entries = [json.loads(line) for line in lines]
    errors = [entry for entry in entries if entry["level"] == "error"]
    assert len(errors) == 1, errors
    assert errors[0]["request_id"] == request_id
    assert "Traceback" in errors[0]["exception"]
    assert "disk on fire" in errors[0]["exception"]  # the cause, for the operator
    access = _access(lines)[-1]
    assert (access["request_id"], access["status"], access["code"]) == (request_id, 500, "internal")


def test_the_text_format_names_the_request_on_each_line(sqlite_url: str) -> None:
    with (
        captured_lines(TextFormatter()) as lines,
        TestClient(create_app(Settings(database_url=sqlite_url))) as http,
    ):
        response = http.get("/healthz", headers={"X-Request-ID": "text-format-id"})
    access = [line for line in lines if " runtime_store.access " in line]
    assert len(access) == 1
    assert "[text-format-id]" in access[0]
    assert "GET /healthz 200" in access[0]
    assert response.headers["x-request-id"] == "text-format-id"


def test_no_access_line_when_the_access_log_is_off(sqlite_url: str) -> None:
    settings = Settings(database_url=sqlite_url, access_log=False)
    with captured_lines() as lines, TestClient(create_app(settings)) as http:
        ok(http.get("/healthz"))
    assert _access(lines) == []


def test_the_serve_log_config_sends_every_logger_through_one_formatter() -> None:
    config = log_config(LogFormat.JSON, LogLevel.WARNING)
    assert config["root"] == {"handlers": ["service"], "level": "WARNING"}
    assert config["formatters"]["service"]["format"] == "json"
    # uvicorn's loggers reach the root handler; its access logger never writes.
    assert config["loggers"]["uvicorn"]["propagate"] is True
    assert config["loggers"]["uvicorn.access"] == {"handlers": [], "propagate": False}


# --- generated calls -------------------------------------------------------------------


def _tokens(url: str) -> dict[str, str]:
    engine = create_engine(url)
    try:
        store = Tokens(engine, TOKEN_KEY)
        return {role.value: store.create(f"{role.value}-name", role) for role in Role}
    finally:
        engine.dispose()


def _secrets(tokens: dict[str, str], *found: str) -> list[str]:
    """Each token, its random part and a slice of it (a partial echo), and ``found``."""
    parts = list(found)
    for token in tokens.values():
        random_part = token.removeprefix(TOKEN_PREFIX)
        parts += [token, random_part, random_part[5:17]]
    return parts


def test_log_lines_never_carry_tokens_payloads_or_checkpoints_of_generated_calls(
    tmp_path: Path,
) -> None:
    url = fresh_sqlite_url(tmp_path)
    tokens = _tokens(url)
    app = create_app(Settings(database_url=url, token_key=SecretStr(TOKEN_KEY)))
    admin = {"Authorization": f"Bearer {tokens['admin']}"}
    roles: set[str] = set()

    @settings(max_examples=40, deadline=None, database=None)
    @given(
        payload_text=st.text(min_size=1, max_size=40),
        checkpoint_data=st.binary(min_size=12, max_size=64),
        junk_token=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=20),
        bad_json=st.booleans(),
        role=st.sampled_from(["worker", "reader", "admin"]),
    )
    def calls(
        payload_text: str, checkpoint_data: bytes, junk_token: str, bad_json: bool, role: str
    ) -> None:
        marker = f"PAYLOAD-{uuid.uuid4().hex}"
        payload = json.dumps({"marker": marker, "text": payload_text}).encode()
        if bad_json:
            payload = payload[:-1]  # refused: 422, the body named nowhere
        checkpoint = Checkpoint(
            id=f"cp-{uuid.uuid4().hex[:8]}", data=marker.encode() + checkpoint_data
        )
        caller = {"Authorization": f"Bearer {tokens[role]}"}
        with captured_lines(level=logging.DEBUG) as lines:
            run = start_root(http, create_session(http))
            records = f"/v1/runs/{run.run_id}/records"
            http.post(records, json=append_body(note(run, "n", payload=payload)), headers=caller)
            suspension = f"/v1/runs/{run.run_id}/suspension"
            http.post(suspension, json=suspension_body(run, checkpoint), headers=caller)
            http.get(suspension, headers=caller)
            http.get(records, headers=caller)
            for token in (TOKEN_PREFIX + junk_token, junk_token, tokens["reader"]):
                http.post("/v1/sessions", json={}, headers={"Authorization": f"Bearer {token}"})

        text = "\n".join(lines)
        for line in lines:
            json.loads(line)
        data = checkpoint.data
        for secret in _secrets(tokens, marker, base64.b64encode(data).decode(), data.hex()):
            assert secret not in text, f"a log line carries {secret!r}"
        assert junk_token not in text
        roles.update(entry["role"] for entry in _access(lines) if entry["role"])

    with TestClient(app, raise_server_exceptions=False, headers=admin) as http:
        calls()
    assert roles == {"admin", "worker", "reader"}  # the role and its name, never the token


def test_an_event_stream_is_logged_and_counted_once_when_it_ends(sqlite_url: str) -> None:
    with (
        captured_lines() as lines,
        TestClient(create_app(Settings(database_url=sqlite_url))) as http,
    ):
        run = start_root(http, create_session(http))
        finish(http, run)
        # A finished run's stream sends its records and `end`, then closes.
        with http.stream("GET", f"/v1/runs/{run.run_id}/records/stream") as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            body = "".join(stream.iter_text())
    assert "event: end" in body
    streams = [entry for entry in _access(lines) if entry["operation"] == "tail-run-records"]
    assert len(streams) == 1
    assert (streams[0]["status"], streams[0]["stream"]) == (200, True)
    assert streams[0]["path"] == "/v1/runs/{run_id}/records/stream"
