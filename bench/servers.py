"""The databases and ``runtime-store serve`` processes the benchmark measures.

PostgreSQL: a database created for this run on the local server and dropped at the end.
SQLite: a file in a temporary directory. Each service is a ``runtime-store serve``
subprocess on 127.0.0.1 that applies the migrations itself at start, with tokens required
or open as the sitting's ``Auth`` says (``bench/auth.py``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from app.domain.tokens import TOKEN_PREFIX
from app.storage import create_engine
from runtime_store_client import HttpStore

from .auth import NO_TOKENS, Auth, Tokens


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def postgres_answers(admin_url: str) -> str | None:
    """``None`` when the PostgreSQL server answers, else why not."""
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT", pool_size=1)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        return str(exc.orig).splitlines()[0] if exc.orig else str(exc)
    finally:
        engine.dispose()
    return None


def create_postgres_database(admin_url: str) -> str:
    """Create an empty database for this run; returns its URL."""
    name = f"rs_bench_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT", pool_size=1)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def drop_postgres_database(admin_url: str, database_url: str) -> None:
    name = make_url(database_url).database
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT", pool_size=1)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        engine.dispose()


def postgres_settings(database_url: str, *names: str) -> dict[str, str]:
    """``SHOW <name>`` for each name (``server_version``, ``autovacuum``, …)."""
    engine = create_engine(database_url, pool_size=1)
    try:
        with engine.connect() as conn:
            return {name: str(conn.exec_driver_sql(f"SHOW {name}").scalar_one()) for name in names}
    finally:
        engine.dispose()


def _cli() -> list[str]:
    """The ``runtime-store`` command of this environment."""
    script = Path(sys.executable).with_name("runtime-store")
    if script.exists():
        return [str(script)]
    found = shutil.which("runtime-store")
    return [found] if found else [sys.executable, "-m", "app"]


def _serve_command() -> list[str]:
    return [*_cli(), "serve"]


@dataclass
class Service:
    """One ``runtime-store serve`` process (and the uvicorn workers it spawns)."""

    name: str
    base_url: str
    database_url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    #: What its clients send (none when it serves open).
    tokens: Tokens = field(default=NO_TOKENS)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def workers(self) -> int:
        """Worker processes ``serve`` announced (0 until it has)."""
        return _announced_workers(self.log_path.read_text(errors="replace"))

    def peak_rss(self) -> list[ProcessMemory]:
        """Peak resident memory (``VmHWM``) of the service process and its workers."""
        return peak_rss_tree(self.process.pid)


def start_service(
    name: str,
    database_url: str,
    log_dir: Path,
    workers: int = 0,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    *,
    auth: Auth,
) -> Service:
    """Start ``runtime-store serve`` on a free loopback port; wait until every worker runs.
    With tokens required, make its worker token and check that the service requires it."""
    port = free_port()
    log_path = log_dir / f"{name}.log"
    command = [*_serve_command(), "--host", "127.0.0.1", "--port", str(port)]
    if workers > 0:
        command += ["--workers", str(workers)]
    env = {**os.environ, **(env or {}), "RUNTIME_STORE_DATABASE_URL": database_url}
    for variable in ("RUNTIME_STORE_WORKERS", "RUNTIME_STORE_NO_MIGRATE", "RUNTIME_STORE_PORT"):
        env.pop(variable, None)
    auth.apply(env)
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    service = Service(name, f"http://127.0.0.1:{port}", database_url, process, log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{service.log_tail()}")
        if _ready(service):
            try:
                service.tokens = _settle_tokens(service, auth, env)
            except BaseException:
                stop_service(service)
                raise
            return service
        time.sleep(0.1)
    stop_service(service)
    raise RuntimeError(f"{name} did not become ready within {timeout} s:\n{service.log_tail()}")


def _settle_tokens(service: Service, auth: Auth, env: dict[str, str]) -> Tokens:
    """The tokens of a ready service: a worker token made for it (on its database, now
    migrated, under its key and with its ``PYTHONPATH``) and the bootstrap admin token.
    Its mode is asked, not assumed: a figure labelled "tokens" was measured with them."""
    tokens = NO_TOKENS
    if auth.required:
        tokens = Tokens(_create_token(service, "worker", env), auth.admin_token)
    with HttpStore(service.base_url, token=tokens.worker) as store:
        found = store.whoami()
    expected = "worker" if auth.required else "admin"
    if (found.mode, found.role) != (auth.mode, expected):
        raise RuntimeError(
            f"{service.name} serves {found.mode} (role {found.role}), not {auth.mode} "
            f"(role {expected})"
        )
    return tokens


def _create_token(service: Service, role: str, env: dict[str, str]) -> str:
    """``runtime-store tokens create``; the token is read from its output, never shown."""
    done = subprocess.run(
        [
            *_cli(),
            "tokens",
            "create",
            "--role",
            role,
            "--name",
            f"bench-{role}-{service.name}",
            "--database-url",
            service.database_url,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    token = (done.stdout.strip().splitlines() or [""])[-1]
    if done.returncode != 0 or not token.startswith(TOKEN_PREFIX):
        # Its stderr only: stdout would hold the token.
        raise RuntimeError(
            f"runtime-store tokens create for {service.name} exited with "
            f"{done.returncode}: {done.stderr.strip()[-2000:]}"
        )
    return token


def _ready(service: Service) -> bool:
    """``/readyz`` answers and every announced uvicorn worker has started."""
    try:
        if httpx.get(f"{service.base_url}/readyz", timeout=1).status_code != 200:
            return False
    except httpx.TransportError:
        return False
    log = service.log_path.read_text(errors="replace")
    workers = _announced_workers(log)
    return workers == 1 or (workers > 1 and log.count("Application startup complete") >= workers)


def _announced_workers(log: str) -> int:
    """From ``serve``'s line "runtime-store on http://…, N worker(s)"."""
    announced = [line for line in log.splitlines() if line.endswith("worker(s)")]
    return int(announced[-1].rsplit(",", 1)[1].split()[0]) if announced else 0


def stop_service(service: Service) -> None:
    if service.process.poll() is None:
        service.process.send_signal(signal.SIGINT)
    try:
        service.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        service.process.kill()
        service.process.wait()


# --- memory -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessMemory:
    pid: int
    role: str
    peak_rss_mb: float


def _status_kb(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after it.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid:
            found.append(int(entry.name))
    return found


def _role(pid: int, root: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "gone"
    if pid == root:
        return "service"
    if "resource_tracker" in cmdline:
        return "resource-tracker"
    if "multiprocessing" in cmdline or "spawn_main" in cmdline:
        return "worker"
    return "child"


def peak_rss_tree(root: int) -> list[ProcessMemory]:
    """``VmHWM`` of ``root`` and every descendant, read from ``/proc``."""
    result: list[ProcessMemory] = []
    pending = [root]
    while pending:
        pid = pending.pop()
        peak = _status_kb(pid, "VmHWM")
        if peak is not None:
            result.append(ProcessMemory(pid, _role(pid, root), round(peak / 1024, 1)))
        pending.extend(_children(pid))
    return result


# --- CPU --------------------------------------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    return [name, *stat.rsplit(")", 1)[1].split()]


def _cpu_seconds(fields: list[str]) -> float:
    # After the name: state ppid … utime is field 14 and stime 15 of stat(5) (1-based).
    return (int(fields[12]) + int(fields[13])) / _TICKS


def machine_ticks() -> tuple[int, int]:
    """(steal, all) CPU ticks of the whole machine so far, from ``/proc/stat``."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    # user nice system idle iowait irq softirq steal [guest guest_nice: inside user/nice]
    return fields[7] if len(fields) > 7 else 0, sum(fields[:8])


def steal_pct(before: tuple[int, int], after: tuple[int, int]) -> float:
    """Percent of the machine's CPU time stolen between two ``machine_ticks``."""
    total = after[1] - before[1]
    return 100.0 * (after[0] - before[0]) / total if total > 0 else 0.0


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of ``root`` and its live descendants."""
    total, pending = 0.0, [root]
    while pending:
        pid = pending.pop()
        fields = _stat_fields(pid)
        if fields is not None:
            total += _cpu_seconds(fields)
        pending.extend(_children(pid))
    return total


def postgres_cpu(database: str) -> dict[int, float]:
    """CPU seconds of each PostgreSQL backend process connected to ``database``.

    Backends show their database in their process title; other databases' backends (the
    server may be shared) are left out. Compare two snapshots with ``cpu_delta``.
    """
    found: dict[int, float] = {}
    marker = f" {database} ".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is None or not fields[0].startswith("postgres"):
            continue
        try:
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in title.replace(b"\0", b" "):
            found[int(entry.name)] = _cpu_seconds(fields)
    return found


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU used between two snapshots by the processes alive at the second."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())
