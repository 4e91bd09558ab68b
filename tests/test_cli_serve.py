"""Issue 33, item 3: ``serve`` says what stops it in one line, before it claims to serve:
a port in use (with the ``--port`` to pass instead), a token key that is not the one the
stored tokens were made under. Each case runs the real command in a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from app.domain.tokens import Role
from app.storage import create_engine, upgrade_schema
from app.storage.access.tokens import KEY_CHECK_NAME, Tokens
from app.storage.database.tables import service_keys
from tests.conftest import free_port, start_server, stop_server

KEY = "serve-start-test-key-0123456789abcdef"
OTHER = "serve-start-test-key-not-the-same-one"


def serve(database_url: str, port: int, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``runtime-store serve`` run to its refusal (a started server would time out)."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_STORE_")}
    return subprocess.run(
        [sys.executable, "-m", "app", "serve", "--port", str(port)],
        env={**inherited, **env, "RUNTIME_STORE_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def refusal(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "runtime-store on http" not in done.stdout  # never the banner
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@contextmanager
def taken_port(*, reuse_port: bool) -> Iterator[int]:
    """A port another process listens on (with ``SO_REUSEPORT``, as a service with
    several workers does: a second service must not join its group)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        if reuse_port:
            held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


@pytest.mark.parametrize("reuse_port", [False, True], ids=["plain", "so-reuseport"])
def test_a_port_in_use_is_one_line_suggesting_port_before_anything_else(
    reuse_port: bool, tmp_path: Path
) -> None:
    database = tmp_path / "never.db"
    with taken_port(reuse_port=reuse_port) as port:
        done = serve(f"sqlite:///{database}", port, {})
    line = refusal(done)
    assert line == (
        f"refusing to serve: port {port} is in use on 127.0.0.1 (another runtime-store?): "
        f"pass --port with a free one, e.g. --port {port + 1} (or set RUNTIME_STORE_PORT)"
    )
    assert done.stdout == ""  # nothing migrated, nothing announced
    assert not database.exists()


def _token(url: str, key: str) -> str:
    engine = create_engine(url)
    try:
        return Tokens(engine, key).create("ops", Role.ADMIN)
    finally:
        engine.dispose()


def _forget_check(url: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(service_keys.delete().where(service_keys.c.name == KEY_CHECK_NAME))
    finally:
        engine.dispose()


def _sessions(base_url: str, token: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{base_url}/v1/sessions", headers=headers, timeout=10).status_code


def test_a_token_key_that_matches_no_stored_token_refuses_to_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'keys.db'}"
    upgrade_schema(url)
    token = _token(url, KEY)
    line = refusal(serve(url, free_port(), {"RUNTIME_STORE_TOKEN_KEY": OTHER}))
    assert line.startswith(
        "refusing to serve: RUNTIME_STORE_TOKEN_KEY is not the key the 1 active token(s) "
        "were created under"
    )
    server = start_server(url, tmp_path / "right.log", env={"RUNTIME_STORE_TOKEN_KEY": KEY})
    try:
        assert _sessions(server.base_url, token) == 200
    finally:
        stop_server(server)


def test_a_database_whose_tokens_predate_the_check_learns_the_key_from_a_token(
    tmp_path: Path,
) -> None:
    """The upgrade path: tokens exist, no check value. A start with any key is let through
    (nothing can tell yet); the first token that authenticates records the key, and from
    then on a wrong key is refused at start."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade_schema(url)
    token = _token(url, KEY)
    _forget_check(url)
    wrong = start_server(url, tmp_path / "wrong.log", env={"RUNTIME_STORE_TOKEN_KEY": OTHER})
    try:
        assert _sessions(wrong.base_url, token) == 401
    finally:
        stop_server(wrong)
    assert "recorded when one of them first authenticates" in wrong.log()
    right = start_server(url, tmp_path / "right.log", env={"RUNTIME_STORE_TOKEN_KEY": KEY})
    try:
        assert _sessions(right.base_url, token) == 200
    finally:
        stop_server(right)
    refusal(serve(url, free_port(), {"RUNTIME_STORE_TOKEN_KEY": OTHER}))
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            names = conn.execute(sa.select(service_keys.c.name)).scalars().all()
    finally:
        engine.dispose()
    assert KEY_CHECK_NAME in names
