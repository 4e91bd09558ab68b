"""A real high-availability PostgreSQL cluster on loopback: one etcd, three PostgreSQL
members under Patroni, synchronous replication (CONTRACT.md 16, docs/scaling.md "High
availability").

Debian's packages (``patroni``, ``etcd-server``; ``python3-etcd`` for etcd's v2 API) are
installed when missing and the process is root with apt, as scripts/test installs
Chromium. Everything runs as the ``postgres`` user in one temporary directory: etcd with
its v2 API on (Patroni 3.0.2 over the v3 API once let a thawed old leader take the leader
key back, an upstream bug fixed later), Patroni with ``synchronous_mode: true`` (every
acknowledged commit is on the synchronous standby, the only one Patroni promotes) and
``primary_start_timeout: 0`` (a crashed primary fails over instead of being restarted in
place), short timings (``ttl`` 10 s, ``loop_wait`` 1 s) so a test fails over in seconds.

Three blows (``kill_postgres``, ``stop_patroni``, ``freeze``/``thaw``), the leader as
Patroni's REST API names it, and the time until another member accepts writes
(``wait_for_new_primary``): Patroni's own failover time, the yardstick of the service's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from tests.conftest import free_port
from tests.replicas.cluster import server_binaries

SCOPE = "rs-failover"
DATABASE = "postgres"
#: Patroni's timings: the leader key lives ``TTL`` seconds unless renewed every loop.
TTL, LOOP_WAIT, RETRY_TIMEOUT = 10, 1, 4
_PACKAGES = ("patroni", "etcd-server", "python3-etcd")


def missing_tools() -> str | None:
    """Why the cluster cannot be made here (``None``: it can). Installs Debian's
    packages first when they are missing and this process may (root, apt)."""
    if server_binaries() is None:
        return "PostgreSQL's server programs are not installed"
    if shutil.which("patroni") and shutil.which("etcd") and _has_etcd_v2_client():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "patroni and etcd are not installed and cannot be (not root, or no apt-get)"
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *_PACKAGES],
    ):
        done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"could not install {' '.join(_PACKAGES)}: {done.stderr.strip()[-300:]}"
    if shutil.which("patroni") and shutil.which("etcd") and _has_etcd_v2_client():
        return None
    return "patroni or etcd is still missing after apt-get install"


def _has_etcd_v2_client() -> bool:
    return Path("/usr/lib/python3/dist-packages/etcd/__init__.py").is_file()


@dataclass
class Member:
    name: str
    port: int
    api_port: int
    data_dir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def postgres_pids(self) -> list[int]:
        """The postmaster and every process it started."""
        root = self.postmaster_pid()
        if root is None:
            return []
        pids = [root]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == root:
                    pids.append(int(stat.parent.name))
        return pids

    def accepts_writes(self, timeout: float = 1.0) -> bool:
        try:
            with psycopg.connect(
                host="127.0.0.1",
                port=self.port,
                user="postgres",
                dbname=DATABASE,
                connect_timeout=max(1, int(timeout)),
                target_session_attrs="read-write",
            ):
                return True
        except psycopg.Error:
            return False


class PatroniCluster:
    """One etcd and ``size`` Patroni members in a temporary directory (module docstring)."""

    def __init__(self, size: int = 3) -> None:
        binaries = server_binaries()
        assert binaries is not None
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="rs-failover-"))
        self.etcd_port, self.etcd_peer_port = free_port(), free_port()
        self.members = [
            Member(f"m{index}", free_port(), free_port(), self.root / f"m{index}" / "data")
            for index in range(1, size + 1)
        ]
        self.etcd: subprocess.Popen[bytes] | None = None
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")

    # --- the URL the service is given ---------------------------------------------------

    def url(self, database: str = DATABASE) -> str:
        hosts = ",".join(f"127.0.0.1:{member.port}" for member in self.members)
        return f"postgresql://postgres@{hosts}/{database}?target_session_attrs=read-write"

    # --- processes ----------------------------------------------------------------------

    def _spawn(self, command: list[str], log: Path) -> subprocess.Popen[bytes]:
        user = "postgres" if self._as_postgres else None
        with log.open("ab") as out:
            return subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                env={**os.environ, "HOME": str(self.root)},
                start_new_session=True,
                user=user,
                group=user,
            )

    def start(self, timeout: float = 120.0) -> PatroniCluster:
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        client = f"http://127.0.0.1:{self.etcd_port}"
        self.etcd = self._spawn(
            [
                "etcd",
                "--name=e0",
                f"--data-dir={self.root / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=e0={peer}",
                "--enable-v2=true",
            ],
            self.root / "etcd.log",
        )
        _wait(lambda: _get(f"{client}/version") is not None, 30, "etcd did not start")
        first, *others = self.members
        self.start_member(first)
        _wait(first.accepts_writes, timeout, f"the first member never led:\n{self.logs()}")
        for member in others:
            self.start_member(member)
        self.wait_healthy(timeout)
        return self

    def _config(self, member: Member) -> Path:
        directory = member.data_dir.parent
        directory.mkdir(parents=True, exist_ok=True)
        if self._as_postgres:
            shutil.chown(directory, "postgres", "postgres")
        config = {
            "scope": SCOPE,
            "namespace": "/runtime-store/",
            "name": member.name,
            "restapi": {
                "listen": f"127.0.0.1:{member.api_port}",
                "connect_address": f"127.0.0.1:{member.api_port}",
            },
            # etcd's v2 API (python3-etcd): see the module docstring.
            "etcd": {"host": f"127.0.0.1:{self.etcd_port}"},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "maximum_lag_on_failover": 1048576,
                    "synchronous_mode": True,
                    "primary_start_timeout": 0,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "remove_data_directory_on_rewind_failure": True,
                        "remove_data_directory_on_diverged_timelines": True,
                        "parameters": {
                            "wal_level": "replica",
                            "hot_standby": "on",
                            "wal_log_hints": "on",
                            "max_wal_senders": 10,
                            "max_replication_slots": 10,
                            "max_connections": 100,
                            "wal_keep_size": "128MB",
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}],
                "pg_hba": [
                    "local all all trust",
                    "host replication all 127.0.0.1/32 trust",
                    "host all all 127.0.0.1/32 trust",
                ],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{member.port}",
                "connect_address": f"127.0.0.1:{member.port}",
                "data_dir": str(member.data_dir),
                "bin_dir": str(self.binaries),
                "pgpass": str(directory / "pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres", "password": "postgres"},
                    "replication": {"username": "postgres", "password": "postgres"},
                    "rewind": {"username": "postgres", "password": "postgres"},
                },
                "parameters": {
                    "unix_socket_directories": str(directory),
                    "shared_buffers": "32MB",
                    # Durability against a killed server comes from the OS page cache and
                    # synchronous replication; the machine itself never dies in a test.
                    "fsync": "off",
                    "full_page_writes": "on",
                    "logging_collector": "off",
                },
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
        }
        path = directory / "patroni.yml"
        path.write_text(json.dumps(config, indent=1))  # JSON is YAML
        return path

    def start_member(self, member: Member) -> None:
        config = self._config(member)
        member.process = self._spawn(["patroni", str(config)], config.parent / "patroni.log")

    def stop(self) -> None:
        """Everything down (thawed first), the directory removed."""
        for member in self.members:
            self.thaw(member)
        for member in self.members:
            if member.process is not None and member.process.poll() is None:
                member.process.send_signal(signal.SIGTERM)
        for member in self.members:
            if member.process is not None:
                try:
                    member.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    member.process.kill()
                    member.process.wait()
            for pid in member.postgres_pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self.etcd is not None:
            self.etcd.kill()
            self.etcd.wait()
        shutil.rmtree(self.root, ignore_errors=True)

    def logs(self) -> str:
        parts = []
        for member in self.members:
            log = member.data_dir.parent / "patroni.log"
            if log.is_file():
                parts.append(f"--- {member.name} ---\n" + log.read_text(errors="replace")[-3000:])
        return "\n".join(parts)

    # --- what Patroni says --------------------------------------------------------------

    def roles(self) -> dict[str, tuple[str, str, int | None]]:
        """Each member Patroni's cluster view names: (role, state, timeline)."""
        for member in self.members:
            view = _get(f"{member.api}/cluster", timeout=1.0)
            if view is not None:
                return {
                    m["name"]: (m.get("role", ""), m.get("state", ""), m.get("timeline"))
                    for m in view.get("members", [])
                }
        return {}

    def leader(self) -> Member:
        for member in self.members:
            if member.accepts_writes():
                return member
        raise AssertionError(f"no member accepts writes:\n{self.logs()}")

    def wait_healthy(self, timeout: float = 120.0) -> None:
        """One leader and every other member a streaming standby on its timeline, one of
        them synchronous."""

        def healthy() -> bool:
            roles = self.roles()
            if len(roles) != len(self.members):
                return False
            leaders = [r for r in roles.values() if r[0] == "leader" and r[1] == "running"]
            standbys = [r for r in roles.values() if r[0] in ("sync_standby", "replica")]
            timelines = {r[2] for r in roles.values()}
            return (
                len(leaders) == 1
                and len(standbys) == len(self.members) - 1
                and all(r[1] in ("streaming", "running") for r in standbys)
                and any(r[0] == "sync_standby" for r in standbys)
                and len(timelines) == 1
            )

        _wait(healthy, timeout, f"the cluster did not become healthy: {self.roles()}")

    def wait_for_new_primary(self, old: Member, timeout: float = 90.0) -> tuple[Member, float]:
        """The member that accepts writes after ``old`` was hit, and when (monotonic)."""
        others = [member for member in self.members if member is not old]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for member in others:
                if member.accepts_writes(timeout=1.0):
                    return member, time.monotonic()
            time.sleep(0.05)
        raise AssertionError(f"no new primary within {timeout} s:\n{self.logs()}")

    # --- the blows ----------------------------------------------------------------------

    def kill_postgres(self, member: Member) -> None:
        """SIGKILL the member's postmaster: its backends end as they notice."""
        pid = member.postmaster_pid()
        assert pid is not None, f"{member.name} runs no PostgreSQL"
        os.kill(pid, signal.SIGKILL)

    def stop_patroni(self, member: Member) -> None:
        """Patroni stopped cleanly (SIGTERM): it shuts its PostgreSQL down and gives the
        leader key up."""
        assert member.process is not None
        member.process.send_signal(signal.SIGTERM)
        member.process.wait(timeout=60)

    def freeze(self, member: Member) -> None:
        """A hung machine: its Patroni and every PostgreSQL process stopped (SIGSTOP);
        their sockets stay open and the kernel keeps accepting connections."""
        assert member.process is not None
        os.kill(member.process.pid, signal.SIGSTOP)
        for pid in member.postgres_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def thaw(self, member: Member) -> None:
        for pid in member.postgres_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        if member.process is not None and member.process.poll() is None:
            os.kill(member.process.pid, signal.SIGCONT)


@contextlib.contextmanager
def patroni_cluster(size: int = 3) -> Iterator[PatroniCluster]:
    cluster = PatroniCluster(size)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def _get(url: str, timeout: float = 2.0) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            value = json.loads(response.read())
            return value if isinstance(value, dict) else {"value": value}
    except (OSError, ValueError):
        return None


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(what)
