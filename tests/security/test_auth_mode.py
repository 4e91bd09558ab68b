"""Issue 19, items 2 and 3: the auth mode is configuration that every worker shares.

Tokens are required exactly when ``RUNTIME_STORE_TOKEN_KEY`` is set; nothing is guessed from
the database. ``serve`` refuses to start with active tokens and no key (one line, exit 2),
``/readyz`` is 503 while active tokens exist without a key, and two workers answer alike
whatever tokens appear while they run. ``RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN`` stores a first
admin token at start, once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.domain.tokens import Role
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from tests.conftest import LiveServer, free_port, start_server, stop_server
from tests.security import fresh_postgres_url, fresh_sqlite_url

KEY = "auth-mode-test-key-0123456789abcdef"
BOOTSTRAP = "rst_" + "b" * 43


def _serve(database_url: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``runtime-store serve`` run to its refusal (a started server would time out)."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_STORE_")}
    environment = {**inherited, **env, "RUNTIME_STORE_DATABASE_URL": database_url}
    return subprocess.run(
        # A free port: serve checks it first (port 1 is refused to non-root users).
        [sys.executable, "-m", "app", "serve", "--port", str(free_port()), "--no-migrate", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _create_token(database_url: str, name: str, role: Role = Role.ADMIN) -> str:
    engine = create_engine(database_url)
    try:
        return Tokens(engine, KEY).create(name, role)
    finally:
        engine.dispose()


def test_serve_refuses_active_tokens_without_the_key_in_one_line(tmp_path: Path) -> None:
    url = fresh_sqlite_url(tmp_path)
    _create_token(url, "ops")
    done = _serve(url, env={})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "refusing to serve: 1 active token(s) exist in the database but RUNTIME_STORE_TOKEN_KEY "
        "is not set: set it to the key they were made with (tokens are then required), or "
        "revoke them"
    ]
    assert "Traceback" not in done.stdout + done.stderr


def test_serve_refuses_a_bootstrap_token_without_the_key(tmp_path: Path) -> None:
    done = _serve(
        fresh_sqlite_url(tmp_path), env={"RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN": BOOTSTRAP}
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "refusing to serve: RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN is set but "
        "RUNTIME_STORE_TOKEN_KEY is not: set the key too"
    ]


def test_serve_refuses_a_weak_bootstrap_token_in_one_line(tmp_path: Path) -> None:
    done = _serve(
        fresh_sqlite_url(tmp_path),
        env={"RUNTIME_STORE_TOKEN_KEY": KEY, "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN": "rst_short"},
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("refusing to serve: RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN: a token must")


def test_a_revoked_token_does_not_keep_an_open_service_from_starting(tmp_path: Path) -> None:
    url = fresh_sqlite_url(tmp_path)
    _create_token(url, "old")
    engine = create_engine(url)
    Tokens(engine, KEY).revoke("old")
    engine.dispose()
    server = start_server(url, tmp_path / "open.log")
    try:
        assert httpx.get(f"{server.base_url}/readyz").status_code == 200
        assert httpx.get(f"{server.base_url}/v1/sessions").status_code == 200
    finally:
        stop_server(server)


def test_the_bootstrap_admin_token_is_stored_once_and_works(tmp_path: Path) -> None:
    url = fresh_sqlite_url(tmp_path)
    env = {"RUNTIME_STORE_TOKEN_KEY": KEY, "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN": BOOTSTRAP}
    for start, says in enumerate(("stored", "is RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN")):
        server = start_server(url, tmp_path / f"bootstrap-{start}.log", env=env)
        try:
            sessions = f"{server.base_url}/v1/sessions"
            assert httpx.get(sessions).status_code == 401
            admin = {"Authorization": f"Bearer {BOOTSTRAP}"}
            assert httpx.get(sessions, headers=admin).status_code == 200
        finally:
            stop_server(server)
        assert says in server.log()
    engine = create_engine(url)
    try:
        (token,) = Tokens(engine, KEY).list()
    finally:
        engine.dispose()
    assert (token.name, token.role, token.revoked_at) == ("bootstrap-admin", Role.ADMIN, None)


# --- two workers, tokens appearing while they run ----------------------------------------


@pytest.fixture
def two_workers(postgres_url: str, tmp_path: Path) -> Iterator[tuple[str, LiveServer]]:
    """An open service with two workers (PostgreSQL) over its own database."""
    with fresh_postgres_url(postgres_url) as url:
        server = start_server(url, tmp_path / "workers.log", "--workers", "2")
        try:
            yield url, server
        finally:
            stop_server(server)


def _fresh_connections(server: LiveServer, path: str, count: int) -> list[int]:
    """Statuses of ``count`` requests, each on a new connection (so both workers answer)."""
    statuses = []
    for _ in range(count):
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            statuses.append(client.get(path).status_code)
    return statuses


@pytest.mark.postgres
def test_a_token_created_while_open_workers_run_changes_no_worker_and_fails_readiness(
    two_workers: tuple[str, LiveServer],
) -> None:
    url, server = two_workers
    assert "2 worker(s)" in server.log()
    assert set(_fresh_connections(server, "/readyz", 6)) == {200}
    _create_token(url, "ops")
    # Every worker still serves open (the key decides, not the database) ...
    assert _fresh_connections(server, "/v1/sessions", 20) == [200] * 20
    # ... and none says ready: the token would be silently ignored.
    answers = [httpx.get(f"{server.base_url}/readyz", timeout=10) for _ in range(6)]
    assert {answer.status_code for answer in answers} == {503}
    assert "1 active token(s) exist" in answers[0].json()["detail"]
