"""A fresh PostgreSQL database, ``runtime-store serve`` replicas over it, and clients that
send every request to a random replica.

Each reliability test owns its database (created, migrated, dropped with ``FORCE``), so
``verify_database`` judges only what the test wrote and other test runs on the same
cluster are never touched.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from app.storage import create_engine, upgrade_schema
from runtime_store_client import HttpStore
from tests.conftest import free_port

# --- the database ------------------------------------------------------------------------


@dataclass(frozen=True)
class Database:
    """A database of its own on the test cluster; ``url`` connects as the cluster's user."""

    name: str
    url: str
    admin: Engine  # AUTOCOMMIT, on the cluster's maintenance database

    def engine(self) -> Engine:
        return create_engine(self.url)

    def url_for(self, user: str, password: str) -> str:
        return (
            make_url(self.url)
            .set(username=user, password=password)
            .render_as_string(hide_password=False)
        )

    def terminate_connections(self) -> int:
        """``pg_terminate_backend`` on every connection to this database; how many ended."""
        with self.admin.connect() as conn:
            ended = conn.execute(
                sa.text(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                    "FROM pg_stat_activity WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": self.name},
            ).scalar_one()
        return int(ended)

    def allow_connections(self, allowed: bool) -> None:
        """GRANT or REVOKE ``CONNECT`` for PUBLIC (superusers are never refused)."""
        verb = (
            "GRANT CONNECT ON DATABASE {} TO PUBLIC"
            if allowed
            else ("REVOKE CONNECT ON DATABASE {} FROM PUBLIC")
        )
        with self.admin.connect() as conn:
            conn.execute(sa.text(verb.format(f'"{self.name}"')))


@contextmanager
def fresh_database(session_database_url: str) -> Iterator[Database]:
    """A uniquely named database on the cluster of ``session_database_url``, at head."""
    name = f"rs_reliability_{uuid.uuid4().hex[:12]}"
    server = make_url(session_database_url)
    admin = create_engine(server, isolation_level="AUTOCOMMIT", pool_size=1)
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = server.set(database=name).render_as_string(hide_password=False)
    try:
        upgrade_schema(url)
        yield Database(name, url, admin)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def service_role(database: Database) -> Iterator[tuple[str, str]]:
    """A non-superuser login with data rights on ``database``: REVOKE CONNECT refuses it."""
    user, password = f"rs_reliability_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    with database.admin.connect() as conn:
        conn.execute(sa.text(f"CREATE ROLE \"{user}\" LOGIN PASSWORD '{password}'"))
    engine = database.engine()
    try:
        with engine.begin() as conn:
            for grant in (
                "GRANT USAGE ON SCHEMA public TO {}",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}",
                "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {}",
            ):
                conn.execute(sa.text(grant.format(f'"{user}"')))
        yield user, password
    finally:
        engine.dispose()
        database.allow_connections(True)
        database.terminate_connections()
        engine = database.engine()
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP OWNED BY "{user}"'))
        engine.dispose()
        with database.admin.connect() as conn:
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{user}"'))


# --- replicas ----------------------------------------------------------------------------


class Replica:
    """One ``runtime-store serve`` process (one uvicorn worker) on a fixed loopback port.

    ``kill`` is SIGKILL: no shutdown, open transactions are cut by the database. ``start``
    again reuses the same port, so clients reach the new process at the same address.
    """

    def __init__(self, name: str, database_url: str, log_dir: Path) -> None:
        self.name = name
        self.database_url = database_url
        self.log_dir = log_dir
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return "".join(
            path.read_text(errors="replace")
            for path in sorted(self.log_dir.glob(f"{self.name}-*.log"))
        )

    def start(self, timeout: float = 30.0) -> None:
        self.starts += 1
        env = {
            **os.environ,
            "RUNTIME_STORE_DATABASE_URL": self.database_url,
            "RUNTIME_STORE_WORKERS": "1",
        }
        with (self.log_dir / f"{self.name}-{self.starts}.log").open("wb") as log_file:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port), "--no-migrate"],
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.process.returncode}:\n{self.log()}"
                )
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"{self.name} did not answer within {timeout} s:\n{self.log()}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def ready(self) -> int:
        """The status ``/readyz`` answers."""
        return httpx.get(f"{self.base_url}/readyz", timeout=5).status_code


@contextmanager
def replicas(database_url: str, log_dir: Path, count: int = 2) -> Iterator[list[Replica]]:
    """``count`` replicas over one database, started together, stopped afterwards."""
    started = [Replica(f"replica-{index}", database_url, log_dir) for index in range(count)]
    try:
        for replica in started:
            replica.start()
        yield started
    finally:
        for replica in started:
            replica.stop()


# --- balanced clients --------------------------------------------------------------------


@dataclass
class Traffic:
    """What one client's transport saw: requests sent, 503 answers, failed connections."""

    requests: int = 0
    unavailable: int = 0
    connection_errors: int = 0

    def add(self, other: Traffic) -> None:
        self.requests += other.requests
        self.unavailable += other.unavailable
        self.connection_errors += other.connection_errors


class Balancer(httpx.BaseTransport):
    """Sends each request, retries included, to a replica picked at random."""

    def __init__(self, ports: Sequence[int], rng: random.Random) -> None:
        self.ports = list(ports)
        self.rng = rng
        self.traffic = Traffic()
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        port = self.rng.choice(self.ports)
        request.url = request.url.copy_with(port=port)
        request.headers["Host"] = f"127.0.0.1:{port}"
        self.traffic.requests += 1
        try:
            response = self._inner.handle_request(request)
        except httpx.TransportError:
            self.traffic.connection_errors += 1
            raise
        if response.status_code == 503:
            self.traffic.unavailable += 1
        return response

    def close(self) -> None:
        self._inner.close()


def balanced_store(
    cluster: Sequence[Replica],
    seed: int,
    *,
    retries: int = 3,
    deadline: float = 30.0,
    timeout: float = 10.0,
) -> tuple[HttpStore, Balancer]:
    """An ``HttpStore`` whose every request goes to a random replica of ``cluster``."""
    balancer = Balancer([replica.port for replica in cluster], random.Random(seed))
    store = HttpStore(
        cluster[0].base_url,
        retries=retries,
        deadline=deadline,
        timeout=timeout,
        httpx_args={"transport": balancer},
    )
    return store, balancer
