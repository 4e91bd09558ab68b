"""A real PostgreSQL primary and a real hot standby on loopback, made for the tests.

The machine's own cluster is shared and allows no replication connections, so the tests
make their own pair with PostgreSQL's server binaries: ``initdb`` a primary (trust auth,
loopback only, replication allowed), ``pg_basebackup -R`` a standby from it (streaming,
``hot_standby``), both in a temporary directory, started with ``pg_ctl`` and removed at
the end. Durability settings are off (``fsync``): the tests prove routing, not crashes.
As root, the servers run as the ``postgres`` user, as PostgreSQL requires.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import create_engine


def server_binaries() -> Path | None:
    """The directory of PostgreSQL's server programs (``initdb``, ``pg_ctl``), if any."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_basebackup"), reverse=True)
    if candidates:  # Debian's layout: every server program of one version together
        return candidates[0].parent
    found = shutil.which("pg_basebackup")
    return Path(found).parent if found and shutil.which("initdb") else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class StreamingPair:
    """A primary on one port and its hot standby on another (module docstring)."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="rs-replicas-"))
        self.primary_dir = self.root / "primary"
        self.standby_dir = self.root / "standby"
        self.primary_port = _free_port()
        self.standby_port = _free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            entry = pwd.getpwnam("postgres")
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    # --- processes ----------------------------------------------------------------------

    def _run(self, program: str, *args: str, timeout: float = 120) -> None:
        command = [str(self.binaries / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(f"{program} failed: {result.stdout}\n{result.stderr}")

    def _settings(self, data_dir: Path, port: int) -> None:
        settings = {
            "port": str(port),
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.root}'",
            "fsync": "off",
            "full_page_writes": "off",
            "shared_buffers": "32MB",
            "max_connections": "100",
            "wal_level": "replica",
            "max_wal_senders": "4",
            "hot_standby": "on",
            # A replayed change never waits for a standby read (and cancels it instead):
            # the tests see the primary serve a read a recovery conflict cancelled.
            "max_standby_streaming_delay": "0",
            "logging_collector": "off",
        }
        with (data_dir / "postgresql.auto.conf").open("a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())

    def start_primary(self) -> StreamingPair:
        """The primary alone: a private cluster a test may stop, crash and restart."""
        self._run(
            "initdb", "-D", str(self.primary_dir), "-U", "postgres", "--auth=trust", "-E", "UTF8"
        )
        with (self.primary_dir / "pg_hba.conf").open("a") as hba:
            hba.write("host replication all 127.0.0.1/32 trust\n")
        self._settings(self.primary_dir, self.primary_port)
        self._pg_ctl(self.primary_dir, "start")
        return self

    def restart_primary(self, mode: str) -> None:
        """``pg_ctl restart -m mode``: ``immediate`` is a crash (recovery from the WAL at
        start), ``fast`` a clean shutdown; every connection is cut either way."""
        self._pg_ctl(self.primary_dir, "restart", "-m", mode)

    def start(self) -> StreamingPair:
        self.start_primary()
        self._run(
            "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.primary_port),
            "-U",
            "postgres",
            "-D",
            str(self.standby_dir),
            "-R",
            "-X",
            "stream",
        )
        with (self.standby_dir / "postgresql.auto.conf").open("a") as conf:
            conf.write(f"port = {self.standby_port}\n")
        self.start_standby()
        return self

    def _pg_ctl(self, data_dir: Path, action: str, *extra: str) -> None:
        log = self.root / f"{data_dir.name}.log"
        self._run("pg_ctl", "-D", str(data_dir), "-l", str(log), "-w", "-t", "60", action, *extra)

    def start_standby(self) -> None:
        self._pg_ctl(self.standby_dir, "start")

    def stop_standby(self) -> None:
        self._pg_ctl(self.standby_dir, "stop", "-m", "fast")

    def remove(self) -> None:
        for data_dir in (self.standby_dir, self.primary_dir):
            if (data_dir / "postmaster.pid").exists():
                with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                    self._pg_ctl(data_dir, "stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    # --- databases ----------------------------------------------------------------------

    def primary_url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.primary_port}/{database}"

    def standby_url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.standby_port}/{database}"

    def admin(self, url: str) -> Engine:
        return create_engine(url, isolation_level="AUTOCOMMIT", pool_size=1, max_overflow=0)

    def create_database(self, name: str) -> None:
        engine = self.admin(self.primary_url())
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        finally:
            engine.dispose()

    def primary_position(self) -> int:
        return self._scalar(self.primary_url(), "pg_current_wal_lsn()")

    def replayed(self) -> int:
        return self._scalar(self.standby_url(), "pg_last_wal_replay_lsn()")

    def _scalar(self, url: str, function: str) -> int:
        engine = self.admin(url)
        try:
            with engine.connect() as conn:
                value = conn.execute(sa.text(f"SELECT ({function} - '0/0'::pg_lsn)::bigint"))
                return int(value.scalar_one())
        finally:
            engine.dispose()

    def catch_up(self, timeout: float = 30) -> None:
        """Wait until the standby has replayed everything the primary has written now."""
        target = self.primary_position()
        deadline = time.monotonic() + timeout
        while self.replayed() < target:
            if time.monotonic() > deadline:
                raise TimeoutError("the standby did not catch up with the primary")
            time.sleep(0.01)

    def pause_replay(self) -> None:
        """Stop replay; returns once the standby says it has stopped. An idle standby
        notices a pause request only at its next record, so the primary writes one (a
        WAL message) until it does: no later write of a test is replayed."""
        self._standby_call("pg_wal_replay_pause()")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._pause_state() == "paused":
                return
            primary = self.admin(self.primary_url())
            try:
                with primary.connect() as conn:
                    conn.execute(sa.text("SELECT pg_logical_emit_message(false, 'rs', 'pause')"))
            finally:
                primary.dispose()
            time.sleep(0.02)
        raise TimeoutError("the standby did not pause its replay")

    def _pause_state(self) -> str:
        engine = self.admin(self.standby_url())
        try:
            with engine.connect() as conn:
                return str(conn.execute(sa.text("SELECT pg_get_wal_replay_pause_state()")).scalar())
        finally:
            engine.dispose()

    def resume_replay(self) -> None:
        self._standby_call("pg_wal_replay_resume()")

    def _standby_call(self, call: str) -> None:
        engine = self.admin(self.standby_url())
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(f"SELECT {call}"))
        finally:
            engine.dispose()


def start_pair(binaries: Path) -> StreamingPair:
    pair = StreamingPair(binaries)
    try:
        return pair.start()
    except BaseException:
        pair.remove()
        raise


def start_cluster(binaries: Path) -> StreamingPair:
    """A private cluster without a standby (``StreamingPair.start_primary``)."""
    pair = StreamingPair(binaries)
    try:
        return pair.start_primary()
    except BaseException:
        pair.remove()
        raise


def read_urls(urls: Sequence[str]) -> str:
    """``RUNTIME_STORE_READ_DATABASE_URLS`` for these URLs."""
    return ",".join(urls)
