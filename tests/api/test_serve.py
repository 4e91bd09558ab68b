"""``runtime-store serve`` as an operator runs it: migrations at start, workers, replicas.

These start their own processes (``start_server`` always passes ``--no-migrate``) on fresh
databases, and stop them with SIGINT.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from app.storage import create_engine
from app.storage.migrate import head_revision, schema_is_current
from tests.conftest import free_port

START_TIMEOUT_S = 30


@dataclass
class Serving:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def launch(database_url: str, log_path: Path, *args: str) -> Serving:
    """Start ``runtime-store serve`` on a free loopback port; does not wait."""
    port = free_port()
    env = {**os.environ, "RUNTIME_STORE_DATABASE_URL": database_url}
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port), *args],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    return Serving(f"http://127.0.0.1:{port}", process, log_path)


def wait_ready(server: Serving) -> dict[str, str]:
    """Wait until ``/readyz`` answers 200; return its body."""
    deadline = time.monotonic() + START_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"serve exited with {server.process.returncode}:\n{server.log()}")
        try:
            response = httpx.get(f"{server.base_url}/readyz", timeout=2)
        except httpx.TransportError as exc:
            last = repr(exc)
        else:
            if response.status_code == 200:
                body: dict[str, str] = response.json()
                return body
            last = response.text
        time.sleep(0.1)
    pytest.fail(f"serve was not ready within {START_TIMEOUT_S} s ({last}):\n{server.log()}")


def stop(server: Serving) -> int:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGINT)
    try:
        return server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        return server.process.wait()


@contextmanager
def serving(database_url: str, log_path: Path, *args: str) -> Iterator[Serving]:
    server = launch(database_url, log_path, *args)
    try:
        yield server
    finally:
        stop(server)


def test_serve_applies_the_migrations_to_a_fresh_sqlite_file(tmp_path: Path) -> None:
    database = tmp_path / "fresh.db"
    url = f"sqlite:///{database}"
    assert not database.exists()
    with serving(url, tmp_path / "serve.log") as server:
        ready = wait_ready(server)
        assert ready == {"status": "ready", "detail": f"schema at head ({head_revision()})"}
    assert schema_is_current(url) == (True, head_revision(), head_revision())


def test_serve_on_sqlite_uses_one_worker_whatever_is_asked(tmp_path: Path) -> None:
    with serving(f"sqlite:///{tmp_path / 'one.db'}", tmp_path / "serve.log", "--workers", "4") as s:
        wait_ready(s)
        log = s.log()
        pid = s.process.pid
    assert "SQLite allows one writer process: serving with 1 worker." in log
    assert ", 1 worker(s)" in log
    # One worker means uvicorn serves in the launched process itself, with no supervisor.
    assert f"Started server process [{pid}]" in log
    assert "Started parent process" not in log


@pytest.fixture
def fresh_postgres_url(postgres_url: str) -> Iterator[str]:
    """A new, empty database on the test PostgreSQL server, dropped afterwards."""
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT", pool_size=1)
    name = f"rs_serve_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_two_replicas_started_together_on_postgres_migrate_once_and_both_serve(
    fresh_postgres_url: str, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(
                serving(fresh_postgres_url, tmp_path / f"replica-{i}.log", "--workers", "1")
            )
            for i in range(2)
        ]
        for replica in replicas:
            assert wait_ready(replica)["status"] == "ready", replica.log()
        for replica in replicas:
            session = httpx.post(
                f"{replica.base_url}/v1/sessions",
                json={
                    "session_id": f"s-{replica.process.pid}",
                    "created_at": "2026-11-30T01:02:03.456Z",
                },
                timeout=10,
            )
            assert session.status_code == 200, session.text
        codes = [stop(replica) for replica in replicas]
        logs = [replica.log() for replica in replicas]
    assert all("Traceback" not in log for log in logs), "\n".join(logs)
    assert codes == [0, 0], "\n".join(logs)

    engine = create_engine(fresh_postgres_url, pool_size=1)
    try:
        with engine.connect() as conn:
            versions = conn.execute(sa.text("SELECT version_num FROM alembic_version")).all()
            sessions = conn.execute(sa.text("SELECT count(*) FROM sessions")).scalar_one()
    finally:
        engine.dispose()
    assert [row.version_num for row in versions] == [head_revision()]
    assert sessions == 2
