"""``runtime-store serve`` as an operator runs it: migrations at start, workers, replicas.

These start their own processes (``start_server`` always passes ``--no-migrate``) on fresh
databases, and stop them with SIGINT.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from uvicorn.config import STARTUP_FAILURE

from app.serving import CRASH_LOOP_STARTS, TEST_START_DELAY_ENV, TEST_START_EXIT_ENV
from app.storage import create_engine
from app.storage.database.migrations import head_revision, schema_is_current
from tests.conftest import free_port

START_TIMEOUT_S = 30


@dataclass
class Serving:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def launch(
    database_url: str, log_path: Path, *args: str, env: dict[str, str] | None = None
) -> Serving:
    """Start ``runtime-store serve`` on a free loopback port; does not wait."""
    port = free_port()
    env = {**os.environ, **(env or {}), "RUNTIME_STORE_DATABASE_URL": database_url}
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port), *args],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    return Serving(f"http://127.0.0.1:{port}", process, log_path)


def wait_ready(server: Serving, timeout: float = START_TIMEOUT_S) -> dict[str, str]:
    """Wait until ``/readyz`` answers 200; return its body."""
    deadline = time.monotonic() + timeout
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
    pytest.fail(f"serve was not ready within {timeout} s ({last}):\n{server.log()}")


def stop(server: Serving) -> int:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGINT)
    try:
        return server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        return server.process.wait()


@contextmanager
def serving(
    database_url: str, log_path: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[Serving]:
    server = launch(database_url, log_path, *args, env=env)
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


# --- several workers: one SO_REUSEPORT socket each (app/serving.py) ----------------------


def _worker_pids(server: Serving) -> list[int]:
    """The uvicorn worker processes of ``serve`` (its children, not the resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == server.process.pid and b"resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return sorted(found)


def _established_on(port: int) -> set[int]:
    """Socket inodes of the established server-side connections on ``port``."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].split(":")[1], 16)
        if local_port == port and fields[3] == "01":  # 01: ESTABLISHED
            inodes.add(int(fields[9]))
    return inodes


def _connections_per_worker(server: Serving, pids: list[int]) -> dict[int, int]:
    port = int(server.base_url.rsplit(":", 1)[1])
    established = _established_on(port)
    counts = {}
    for pid in pids:
        sockets = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                sockets.add(int(target[len("socket:[") : -1]))
        counts[pid] = len(sockets & established)
    return counts


def _open_connections(server: Serving, count: int) -> list[httpx.Client]:
    """``count`` keep-alive connections opened in one burst (as a client pool warms up),
    each having answered one request."""
    clients = [httpx.Client(base_url=server.base_url, timeout=5) for _ in range(count)]
    with ThreadPoolExecutor(count) as pool:
        codes = list(pool.map(lambda client: client.get("/healthz").status_code, clients))
    assert codes == [200] * count
    return clients


def _wait_for_workers(server: Serving, count: int) -> list[int]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        pids = _worker_pids(server)
        if len(pids) == count and server.log().count("Application startup complete") >= count:
            return pids
        time.sleep(0.1)
    pytest.fail(f"{count} workers did not start:\n{server.log()}")


def test_serve_spreads_connections_over_every_worker(
    fresh_postgres_url: str, tmp_path: Path
) -> None:
    with serving(fresh_postgres_url, tmp_path / "serve.log", "--workers", "2") as server:
        wait_ready(server)
        pids = _wait_for_workers(server, 2)
        clients = _open_connections(server, 64)
        try:
            counts = _connections_per_worker(server, pids)
        finally:
            for client in clients:
                client.close()
    # uvicorn's one shared socket let one worker accept a burst nearly whole (31 of 32
    # seen); the kernel hashes connections over the workers' own sockets, so each holds
    # about half. At least a quarter each fails by chance with probability ~2e-5.
    assert sum(counts.values()) == 64, counts
    assert all(count >= 16 for count in counts.values()), counts


def test_every_worker_starts_with_malloc_arenas_capped(
    fresh_postgres_url: str, tmp_path: Path
) -> None:
    with serving(fresh_postgres_url, tmp_path / "serve.log", "--workers", "2") as server:
        wait_ready(server)
        pids = _wait_for_workers(server, 2)
        environments = [Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") for pid in pids]
    assert all(b"MALLOC_ARENA_MAX=2" in environment for environment in environments)


def test_a_replacement_worker_takes_over_the_socket_of_the_one_that_died(
    fresh_postgres_url: str, tmp_path: Path
) -> None:
    with serving(fresh_postgres_url, tmp_path / "serve.log", "--workers", "2") as server:
        wait_ready(server)
        first, second = _wait_for_workers(server, 2)
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while first in _worker_pids(server) or len(_worker_pids(server)) < 2:
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.1)
        # Every new connection is answered, whichever socket the kernel hashed it to: none
        # is left queued on a socket nobody accepts from.
        clients = _open_connections(server, 32)
        try:
            replacement = next(pid for pid in _worker_pids(server) if pid != second)
            counts = _connections_per_worker(server, [second, replacement])
        finally:
            for client in clients:
                client.close()
    assert sum(counts.values()) == 32, counts
    assert counts[replacement] > 0, counts


def test_serve_logs_each_request_unless_told_not_to(tmp_path: Path) -> None:
    logs = {}
    for name, args in (("quiet", ("--no-access-log",)), ("access", ())):
        url = f"sqlite:///{tmp_path / (name + '.db')}"
        with serving(url, tmp_path / f"{name}.log", *args) as server:
            wait_ready(server)
            assert httpx.get(f"{server.base_url}/healthz", timeout=5).status_code == 200
        logs[name] = server.log()
    # The service's own JSON access line (standard error is not a terminal here).
    access = {
        name: [
            entry
            for entry in (json.loads(line) for line in log.splitlines() if line.startswith("{"))
            if entry["logger"] == "runtime_store.access"
        ]
        for name, log in logs.items()
    }
    assert access["quiet"] == [], logs["quiet"]
    assert "GET /healthz 200" in [entry["message"] for entry in access["access"]]
    assert '"GET /healthz HTTP/1.1" 200' not in logs["access"]  # uvicorn's own stays off


# --- start-up under load: the supervisor waits for a starting worker (app/serving.py) ----


def _supervisor_lines(log: str) -> list[str]:
    """The messages of the supervisor's log lines (JSON lines: standard error is not a
    terminal here)."""
    entries = (json.loads(line) for line in log.splitlines() if line.startswith("{"))
    return [entry["message"] for entry in entries if entry["logger"] == "uvicorn.error"]


def test_a_worker_slow_to_start_is_waited_for_not_killed(postgres_url: str, tmp_path: Path) -> None:
    # Each worker sleeps before it answers health checks, as one still importing on a loaded
    # machine does: longer than uvicorn's 5 s health check (which killed such workers, one
    # after the other), well within the start-up timeout (90 s by default).
    env = {TEST_START_DELAY_ENV: "7"}
    args = ("--workers", "2", "--no-migrate")
    with serving(postgres_url, tmp_path / "serve.log", *args, env=env) as server:
        wait_ready(server, START_TIMEOUT_S + 7)
        pids = _wait_for_workers(server, 2)
        messages = _supervisor_lines(server.log())
    started = [message for message in messages if message.startswith("Started server process")]
    assert len(started) == 2, messages  # the first two workers, none replaced
    assert all(str(pid) in " ".join(started) for pid in pids), (pids, started)
    assert not [message for message in messages if "not ready" in message or "died" in message]


def test_a_worker_not_ready_within_the_timeout_is_replaced_until_serve_gives_up(
    postgres_url: str, tmp_path: Path
) -> None:
    env = {TEST_START_DELAY_ENV: "600"}
    args = ("--workers", "2", "--no-migrate", "--worker-start-timeout", "1")
    server = launch(postgres_url, tmp_path / "serve.log", *args, env=env)
    try:
        code = server.process.wait(timeout=START_TIMEOUT_S)
    finally:
        stop(server)
    messages = _supervisor_lines(server.log())
    hung = [message for message in messages if " not ready within 1 s" in message]
    assert len(hung) == CRASH_LOOP_STARTS, messages
    assert all(message.endswith("; starting its replacement") for message in hung[:-1])
    assert hung[-1].endswith(f": {CRASH_LOOP_STARTS} worker starts in a row failed, stopping")
    assert code == STARTUP_FAILURE, server.log()


def test_a_worker_that_crashes_at_every_start_stops_serve_with_one_line(
    postgres_url: str, tmp_path: Path
) -> None:
    env = {TEST_START_EXIT_ENV: "1"}
    server = launch(postgres_url, tmp_path / "serve.log", "--workers", "2", "--no-migrate", env=env)
    try:
        code = server.process.wait(timeout=START_TIMEOUT_S)
    finally:
        stop(server)
    messages = _supervisor_lines(server.log())
    stopping = [message for message in messages if "in a row failed" in message]
    assert len(stopping) == 1, messages
    assert re.fullmatch(
        rf"worker \[\d+\] exited with status 1 while starting: {CRASH_LOOP_STARTS} worker "
        "starts in a row failed, stopping",
        stopping[0],
    ), stopping
    replaced = [message for message in messages if message.endswith("starting its replacement")]
    assert len(replaced) == CRASH_LOOP_STARTS - 1, messages
    assert code == STARTUP_FAILURE, server.log()
    assert "Traceback" not in server.log()
