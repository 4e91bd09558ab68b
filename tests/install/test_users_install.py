"""The install users get, proven without Docker: both wheels built from the checkout,
installed with no extras into a fresh venv with exactly the dependencies uv.lock pins
(``scripts/install-service``, the two steps the Dockerfile runs), then served as a
deployment runs it, with tokens required, on SQLite and on a fresh PostgreSQL database.

Nothing of the checkout or of the development venv is importable there: each command runs
in that venv, from a directory outside the checkout, with a clean environment.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, new_postgres_database
from tests.packaging import ROOT, uv, uv_environment

#: What a worker does with the installed client: its session made by the admin token (the
#: role that may create sessions), then a run started, appended to, paged and finished with
#: a worker token.
WORKER_SCRIPT = """
import json, sys, uuid
from runtime_store_client import HttpStore, Record, RunStart, RunStatus, utc_now

url, admin, worker = sys.argv[1:4]
session, run = f"chat-{uuid.uuid4().hex}", f"run-{uuid.uuid4().hex}"
with HttpStore(url, token=admin) as host:
    host.create_session(session, utc_now())
owner = dict(run_id=run, agent_id="planner", session_id=session, turn_id="")
def record(key, type, payload, timestamp):
    return Record(id="", event_key=key, type=type, payload=json.dumps(payload).encode(),
                  timestamp=timestamp, **owner)
with HttpStore(url, token=worker) as store:
    t = utc_now()
    start = RunStart(run_id=run, agent_id="planner", session_id=session, started_at=t)
    started = record("start", "run_started",
                     {"ParentRunID": "", "PredecessorRunID": "", "Labels": None}, t)
    canceled = record("start-canceled", "run_completed", {"status": "canceled",
                      "phase": "canceled", "cancellation": {"reason": "session_ended"}}, t)
    assert store.start_root_run(start, started, canceled).run_status == RunStatus.RUNNING
    assert store.append_run_record(record("note", "planner_note", {"n": 1}, utc_now())).id == "2"
    page = store.list_run_records(run, limit=1)
    assert [r.id for r in page.records] == ["1"] and page.next_cursor == "1"
    done = record("done", "run_completed", {"status": "success", "phase": "completed"},
                  utc_now())
    store.record_run_terminal(run, RunStatus.COMPLETED, done)
    assert store.load_run(run).status == RunStatus.COMPLETED
    print([r.id for r in store.list_run_records(run).records])
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding what users install; its ``bin``."""
    venv = tmp_path_factory.mktemp("users") / "venv"
    env = {**uv_environment(), "UV": uv(), "PYTHON": sys.executable}
    for step in ("dependencies", "wheels"):
        subprocess.run(
            [str(ROOT / "scripts" / "install-service"), step, str(venv)],
            check=True,
            capture_output=True,
            env=env,
            timeout=600,
        )
    return venv / "bin"


def _clean_environment(database_url: str, **settings: str) -> dict[str, str]:
    """Only what a deployment sets: no PYTHONPATH, no test variables, no venv of ours."""
    keep = {name: os.environ[name] for name in ("HOME", "LANG", "TMPDIR") if name in os.environ}
    return {
        **keep,
        "PATH": "/usr/bin:/bin",
        "RUNTIME_STORE_DATABASE_URL": database_url,
        **settings,
    }


def _run(bin_dir: Path, cwd: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(bin_dir / args[0]), *args[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database (no schema): what a first deployment meets."""
    with new_postgres_database(migrated=False) as url:
        yield url


def _serve_and_work(bin_dir: Path, home: Path, database_url: str) -> None:
    admin = "rst_" + secrets.token_urlsafe(32)
    env = _clean_environment(
        database_url,
        RUNTIME_STORE_TOKEN_KEY=secrets.token_urlsafe(32),
        RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN=admin,
    )
    assert "schema at" in _run(bin_dir, home, env, "runtime-store", "db", "upgrade")
    worker = _run(
        bin_dir, home, env, "runtime-store", "tokens", "create", "--role", "worker", "--name", "w"
    ).strip()
    port = free_port()
    log = (home / "serve.log").open("wb")
    server = subprocess.Popen(
        [str(bin_dir / "runtime-store"), "serve", "--port", str(port)],
        cwd=home,
        env={**env, "RUNTIME_STORE_WORKERS": "1"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (home / "serve.log").read_text()
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, (home / "serve.log").read_text()
            time.sleep(0.2)
        assert httpx.get(f"{url}/v1/runs/x").status_code == 401  # tokens are required
        out = _run(bin_dir, home, env, "python", "-c", WORKER_SCRIPT, url, admin, worker)
        assert out.strip() == "['1', '2', '3']"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_the_wheels_installed_from_the_lock_import_nothing_of_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    probe = (
        "import app, runtime_store_client, greenlet, importlib.util as u\n"
        "print(app.__file__); print(runtime_store_client.__file__)\n"
        "print([m for m in ('pytest', 'playwright', 'opentelemetry.sdk') if u.find_spec(m)])\n"
    )
    out = _run(installed, tmp_path, _clean_environment("sqlite://"), "python", "-c", probe)
    service, client, dev_tools = out.splitlines()
    site = str(installed.parent / "lib")
    assert service.startswith(site), out
    assert client.startswith(site), out
    assert dev_tools == "[]", "no dev tool and no extra is installed"


def test_the_installed_service_serves_sqlite_with_tokens_required(
    installed: Path, tmp_path: Path
) -> None:
    _serve_and_work(installed, tmp_path, f"sqlite:///{tmp_path / 'runtime-store.db'}")


@pytest.mark.postgres
def test_the_installed_service_serves_a_fresh_postgresql_database_with_tokens_required(
    installed: Path, tmp_path: Path, fresh_postgres_database: str
) -> None:
    _serve_and_work(installed, tmp_path, fresh_postgres_database)


def test_the_lock_matches_every_pyproject_file() -> None:
    """``uv lock`` would change nothing: uv.lock is what the pyproject files ask for (else
    ``./scripts/lock`` refreshes it)."""
    done = subprocess.run(
        [uv(), "lock", "--check"],
        cwd=ROOT,
        env=uv_environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
