"""On SQLite an acknowledged write is on disk (``RUNTIME_STORE_SQLITE_SYNCHRONOUS``, default
``full``): the served process syncs the database at every commit it answers, counted with
strace; ``normal`` trades that for fewer syncs, as documented."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from app.storage import upgrade_schema
from tests.api.wire_builders import append_body, create_session, note, start_root
from tests.conftest import free_port

APPENDS = 40


def _synchronous_of(settings: Settings) -> int:
    app = create_app(settings)
    with TestClient(app), app.state.engine.connect() as conn:
        return int(conn.exec_driver_sql("PRAGMA synchronous").scalar_one())


def test_the_service_opens_sqlite_with_full_sync_unless_told_normal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'durable.db'}"
    upgrade_schema(url)
    assert _synchronous_of(Settings(database_url=url)) == 2  # FULL
    assert _synchronous_of(Settings(database_url=url, sqlite_synchronous="normal")) == 1


def _syncs_per_append(tmp_path: Path, setting: str) -> float:
    """Served under strace: the database syncs per acknowledged append."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace is missing: apt-get install strace")
    url = f"sqlite:///{tmp_path / f'{setting}.db'}"
    upgrade_schema(url)
    port = free_port()
    trace = tmp_path / f"{setting}.strace"
    log = (tmp_path / f"{setting}.log").open("wb")
    server = subprocess.Popen(
        [
            strace,
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync",
            "-o",
            str(trace),
            sys.executable,
            "-m",
            "app",
            "serve",
            "--port",
            str(port),
            "--no-migrate",
        ],
        env={
            "PATH": "/usr/bin:/bin",
            "RUNTIME_STORE_DATABASE_URL": url,
            "RUNTIME_STORE_SQLITE_SYNCHRONOUS": setting,
            "RUNTIME_STORE_WEBHOOK_DISPATCH": "off",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        },
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # strace and the service it traces stop together
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (tmp_path / f"{setting}.log").read_text()
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.2)
        with httpx.Client(base_url=base, timeout=30) as http:
            run = start_root(http, create_session(http))
            before = _syncs(trace)
            for i in range(APPENDS):
                answer = http.post(
                    f"/v1/runs/{run.run_id}/records", json=append_body(note(run, f"n-{i}"))
                )
                assert answer.status_code == 200, answer.text
            return (_syncs(trace) - before) / APPENDS
    finally:
        os.killpg(server.pid, signal.SIGINT)  # serve's own shutdown; strace then ends
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def _syncs(trace: Path) -> int:
    text = trace.read_text() if trace.exists() else ""
    return len(re.findall(r"\b(?:fsync|fdatasync)\(", text))


@pytest.mark.serial
def test_every_acknowledged_sqlite_append_is_synced_to_disk_by_default(tmp_path: Path) -> None:
    assert _syncs_per_append(tmp_path, "full") >= 1.0


@pytest.mark.serial
def test_normal_sync_leaves_acknowledged_appends_to_the_next_checkpoint(tmp_path: Path) -> None:
    assert _syncs_per_append(tmp_path, "normal") < 0.5
