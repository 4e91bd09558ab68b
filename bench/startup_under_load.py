"""``python -m bench.startup_under_load``: does ``runtime-store serve`` start on a busy machine?

Issue 29, item 1: on PostgreSQL with two workers and a load average of 4-8, every worker
was killed by the supervisor's 5 s health check while it was still importing, replaced,
killed again, and the service never answered. This starts ``--busy`` CPU-bound processes
(4 by default), then ``runtime-store serve --workers 2`` on a fresh PostgreSQL database
(migrations at start and, unless ``--auth open``, the token key and a bootstrap admin token
to store, as an operator runs it), and reports:

* how long until ``/readyz`` answers 200, and until every worker has started;
* whether every worker served: a burst of keep-alive connections is opened and each
  worker's share is read from ``/proc`` (the kernel spreads connections over the
  workers' ``SO_REUSEPORT`` sockets; the service exposes no worker ID, and ``/metrics``
  adds the workers up);
* whether any worker was replaced (worker PIDs in the log beyond the first ones, and the
  supervisor's "not ready within" or "died" lines);
* the CPU seconds each worker used until it served.

Before that (``--import-runs``, 0 to skip), with no load of its own, it measures the CPU
time of ``runtime-store --help``, of ``runtime-store sessions list`` (against a port
where nothing listens: imports, then one refused connection), of importing ``app.serving``
(what a worker imports before it answers health checks) and of importing ``app.main``
(the whole app), best and median of several runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from . import auth
from .auth import Auth
from .config import postgres_admin_url
from .servers import (
    _children,
    _serve_command,
    create_postgres_database,
    drop_postgres_database,
    free_port,
    postgres_answers,
)

#: Connections opened in one burst to see which workers accept them.
BURST = 32
_TICKS = os.sysconf("SC_CLK_TCK")


# --- import cost -------------------------------------------------------------------------


def cpu_seconds(command: list[str], env: dict[str, str] | None = None) -> float:
    """User and system CPU seconds of one run of ``command`` (and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        command,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def import_costs(runs: int) -> dict[str, dict[str, float]]:
    """Best and median CPU seconds of the commands whose start-up matters."""
    cli = _serve_command()[:-1]  # the runtime-store command, without "serve"
    unreachable = {"RUNTIME_STORE_URL": "http://127.0.0.1:1"}
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "runtime-store --help": ([*cli, "--help"], None),
        "runtime-store sessions list": ([*cli, "sessions", "list"], unreachable),
        "import app.serving": ([sys.executable, "-c", "import app.serving"], None),
        "import app.main": ([sys.executable, "-c", "import app.main"], None),
    }
    costs = {}
    for name, (command, env) in commands.items():
        seconds = [cpu_seconds(command, env) for _ in range(runs)]
        costs[name] = {
            "best_s": round(min(seconds), 2),
            "median_s": round(statistics.median(seconds), 2),
        }
    return costs


# --- load ----------------------------------------------------------------------------------


@contextmanager
def busy_processes(count: int) -> Iterator[list[int]]:
    """``count`` processes that spin on a CPU each until the block ends."""
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield [process.pid for process in processes]
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


# --- the service ---------------------------------------------------------------------------


@dataclass
class StartUp:
    """What one ``serve`` start under load did."""

    busy: int
    workers: int
    load_average_at_start: float
    #: ``tokens`` or ``open`` (``bench/auth.py``).
    auth: str
    load_average_at_ready: float | None = None
    supervisor_after_s: float | None = None
    readyz_after_s: float | None = None
    all_workers_after_s: float | None = None
    exit_code: int | None = None
    worker_pids: list[int] = field(default_factory=list)
    connections_per_worker: dict[int, int] = field(default_factory=dict)
    requests_per_worker: dict[int, int] = field(default_factory=dict)
    worker_cpu_s: dict[int, float] = field(default_factory=dict)
    started_worker_pids: list[int] = field(default_factory=list)
    supervisor_complaints: list[str] = field(default_factory=list)

    @property
    def every_worker_served(self) -> bool:
        counts = self.connections_per_worker
        return len(counts) == self.workers and all(count > 0 for count in counts.values())

    @property
    def replaced(self) -> int:
        """Workers the supervisor retired and replaced (some before they logged a line)."""
        return sum(m.endswith("starting its replacement") for m in self.supervisor_complaints)


def _log_messages(log: str) -> list[str]:
    """The messages of ``serve``'s log (JSON lines: its output is not a terminal)."""
    messages = []
    for line in log.splitlines():
        if line.startswith("{"):
            try:
                messages.append(str(json.loads(line)["message"]))
            except (ValueError, KeyError):
                continue
        else:
            messages.append(line)
    return messages


def _requests_per_pid(log: str) -> dict[int, int]:
    """Requests each process answered, from the access lines' ``pid`` (docs/operations.md)."""
    counts: dict[int, int] = {}
    for line in log.splitlines():
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("logger") == "runtime_store.access" and "pid" in entry:
            counts[int(entry["pid"])] = counts.get(int(entry["pid"]), 0) + 1
    return counts


def _supervisor_started(log: str) -> float | None:
    """When ``serve`` started its workers (its imports, migrations and checks done): the
    time of uvicorn's "Started parent process" line, as a UNIX time."""
    for line in log.splitlines():
        if line.startswith("{") and "Started parent process" in line:
            stamp = json.loads(line)["time"].replace("Z", "+00:00")
            return datetime.fromisoformat(stamp).timestamp()
    return None


def _started_pids(messages: list[str]) -> list[int]:
    prefix = "Started server process ["
    return [int(m[len(prefix) :].split("]")[0]) for m in messages if m.startswith(prefix)]


def _worker_pids(serve_pid: int) -> list[int]:
    """The uvicorn workers of ``serve`` (its children but multiprocessing's tracker)."""
    found = []
    for pid in _children(serve_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in command:
            found.append(pid)
    return sorted(found)


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds ``pid`` has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14 and 15)


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    return inodes


def _established_on(port: int) -> set[int]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                inodes.add(int(fields[9]))
    return inodes


def connections_per_worker(base_url: str, port: int, pids: list[int]) -> dict[int, int]:
    """Open ``BURST`` keep-alive connections at once (each answers one request) and count
    those each worker holds."""
    clients = [httpx.Client(base_url=base_url, timeout=30) for _ in range(BURST)]
    try:
        with ThreadPoolExecutor(BURST) as pool:
            list(pool.map(lambda client: client.get("/healthz"), clients))
        established = _established_on(port)
        return {pid: len(_socket_inodes(pid) & established) for pid in pids}
    finally:
        for client in clients:
            client.close()


def start_under_load(
    admin_url: str,
    log_dir: Path,
    *,
    busy: int,
    workers: int,
    timeout: float,
    start_timeout: int | None,
    mode: str,
) -> StartUp:
    """Start ``serve`` on a fresh database while ``busy`` processes spin; see the module."""
    database_url = create_postgres_database(admin_url)
    log_path = log_dir / "serve.log"
    with ExitStack() as stack:
        stack.callback(drop_postgres_database, admin_url, database_url)
        stack.enter_context(busy_processes(busy))
        time.sleep(2)  # the spinners take their share of the cores
        result = StartUp(busy, workers, round(os.getloadavg()[0], 2), mode)
        port = free_port()
        command = [*_serve_command(), "--host", "127.0.0.1", "--port", str(port)]
        command += ["--workers", str(workers)]
        if start_timeout is not None:
            command += ["--worker-start-timeout", str(start_timeout)]
        env = {**os.environ, "RUNTIME_STORE_DATABASE_URL": database_url}
        for variable in ("RUNTIME_STORE_WORKERS", "RUNTIME_STORE_NO_MIGRATE", "PORT"):
            env.pop(variable, None)
        # Only /readyz and /healthz are asked, which need no token: no worker token made.
        Auth.of(mode).apply(env)
        with log_path.open("wb") as log:
            started, started_at = time.monotonic(), time.time()
            process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        stack.callback(_stop, process)
        _wait(result, process, f"http://127.0.0.1:{port}", log_path, started, timeout)
        if result.all_workers_after_s is not None:
            result.load_average_at_ready = round(os.getloadavg()[0], 2)
            result.worker_pids = _worker_pids(process.pid)
            result.worker_cpu_s = {pid: round(_cpu_s(pid), 2) for pid in result.worker_pids}
            result.connections_per_worker = connections_per_worker(
                f"http://127.0.0.1:{port}", port, result.worker_pids
            )
        result.exit_code = process.poll()  # None: still serving, as it should
        _stop(process)  # every access line written
        log_text = log_path.read_text(errors="replace")
        result.requests_per_worker = _requests_per_pid(log_text)
        supervisor = _supervisor_started(log_text)
        if supervisor is not None:
            result.supervisor_after_s = round(supervisor - started_at, 2)
        messages = _log_messages(log_text)
        result.started_worker_pids = _started_pids(messages)
        complaints = ("not ready within", "died", "while starting", "in a row", "failed to")
        result.supervisor_complaints = [m for m in messages if any(c in m for c in complaints)]
    return result


def _wait(
    result: StartUp,
    process: subprocess.Popen[bytes],
    base_url: str,
    log_path: Path,
    started: float,
    timeout: float,
) -> None:
    """Poll until ``/readyz`` answers and every worker has started, ``serve`` exits, or
    ``timeout`` seconds pass."""
    while time.monotonic() - started < timeout and process.poll() is None:
        if result.readyz_after_s is None:
            try:
                if httpx.get(f"{base_url}/readyz", timeout=5).status_code == 200:
                    result.readyz_after_s = round(time.monotonic() - started, 2)
            except httpx.TransportError:
                pass
        if result.readyz_after_s is not None:
            log = log_path.read_text(errors="replace")
            if log.count("Application startup complete") >= result.workers:
                result.all_workers_after_s = round(time.monotonic() - started, 2)
                return
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- report ----------------------------------------------------------------------------------


def report(result: StartUp) -> str:
    ready = "never" if result.readyz_after_s is None else f"after {result.readyz_after_s} s"
    every = (
        "never" if result.all_workers_after_s is None else f"after {result.all_workers_after_s} s"
    )
    lines = [
        f"busy processes: {result.busy}; load average at serve's start: "
        f"{result.load_average_at_start}, when every worker served: "
        f"{result.load_average_at_ready}",
        f"serve --workers {result.workers}, fresh PostgreSQL database, migrations at start, "
        f"auth {result.auth}",
        f"workers spawned after {result.supervisor_after_s} s (serve's imports, migrations "
        f"and checks); /readyz answered 200 {ready}; every worker started {every}",
        f"workers: {result.worker_pids}; CPU seconds each until it served: {result.worker_cpu_s}",
        f"connections of a {BURST}-connection burst per worker: "
        f"{result.connections_per_worker} (every worker served: "
        f"{'yes' if result.every_worker_served else 'no'}); requests each process "
        f"answered (access lines' pid): {result.requests_per_worker}",
        f"workers replaced: {result.replaced} (worker processes that logged their start: "
        f"{len(result.started_worker_pids)})",
    ]
    lines += [f"supervisor: {complaint}" for complaint in result.supervisor_complaints]
    if result.exit_code is not None:
        lines.append(f"serve exited by itself with status {result.exit_code}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.startup_under_load",
        description=(__doc__ or "").split("\n\n")[0],
    )
    parser.add_argument("--busy", type=int, default=4, help="CPU-bound processes (default 4)")
    parser.add_argument("--workers", type=int, default=2, help="serve --workers (default 2)")
    parser.add_argument(
        "--timeout", type=float, default=300, help="seconds to wait for serve (default 300)"
    )
    parser.add_argument(
        "--worker-start-timeout",
        type=int,
        help="serve --worker-start-timeout (default: serve's, 90 s)",
    )
    parser.add_argument(
        "--import-runs",
        type=int,
        default=5,
        help="runs of each import-cost measurement, before the load (0: skip; default 5)",
    )
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    why = postgres_answers(args.postgres_url)
    if why is not None:
        print(f"PostgreSQL does not answer at {args.postgres_url}: {why}", file=sys.stderr)
        return 2
    figures: dict[str, Any] = {}
    if args.import_runs > 0:
        costs = import_costs(args.import_runs)
        figures["import_cpu_s"] = costs
        print(f"CPU seconds, best and median of {args.import_runs} runs (no load added):")
        for name, cost in costs.items():
            print(f"  {name:30} {cost['best_s']:.2f}  {cost['median_s']:.2f}")
    with tempfile.TemporaryDirectory(prefix="runtime-store-startup-") as directory:
        result = start_under_load(
            args.postgres_url,
            Path(directory),
            busy=args.busy,
            workers=args.workers,
            timeout=args.timeout,
            start_timeout=args.worker_start_timeout,
            mode=args.auth,
        )
    print(report(result))
    figures["start_up"] = {
        **asdict(result),
        "every_worker_served": result.every_worker_served,
        "replaced": result.replaced,
    }
    if args.json:
        print(json.dumps(figures))
    ok = result.readyz_after_s is not None and result.every_worker_served
    return 0 if ok and result.replaced == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
