"""``python -m bench.http_layers``: where the service's CPU per HTTP append or page goes.

``python -m bench --side-by-side`` gives the service's CPU per call; this splits it. It
starts ``runtime-store serve`` with its defaults but one worker, on a database of its own,
with tokens required (``--auth open``: without; ``bench/auth.py``), sends single appends (or
reads pages of 100 records, ``--operation page``) one after another through ``HttpStore``
with a worker token, and samples the worker with ``py-spy`` (``pip install py-spy``; it
reads the process's stacks from outside, so the service runs unchanged). Each sample of the
worker's event-loop thread (where every request runs) goes to the layer of its innermost
frame that names one; the layers' shares of the samples are scaled to the worker's CPU per
call, read from ``/proc``. A sample is wall-clock time in that code, a C call's wait for the
kernel included (the send of a statement to PostgreSQL shows as psycopg's).
``--serve-pythonpath`` serves another checkout (an older commit in a worktree) with the same
load and accounting: a before and after.

Layers: the store call (``app/storage``, ``app/domain``, SQLAlchemy, psycopg and the call's
wrapper), the route's own function and rendering, FastAPI and Starlette's request handling
(routing, dependencies, body validation, the response), the service's middlewares and
request observation (the access line included), uvicorn's HTTP protocol, and the rest
(the event loop's own code).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from runtime_store_client import HttpStore
from tests.contract.builders import T0, canceled_record, run_start, started_record

from . import auth
from .auth import Auth, Tokens
from .config import postgres_admin_url
from .servers import (
    create_postgres_database,
    drop_postgres_database,
    start_service,
    stop_service,
    tree_cpu_seconds,
)
from .workloads import ordinary

#: (layer, path fragments): a frame belongs to the first layer one of whose fragments its
#: file path holds; a sample to the layer of its innermost frame that belongs to one.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "store call",
        ("app/storage/", "app/domain/", "sqlalchemy/", "psycopg/", "store_calls.py", "greenlet"),
    ),
    ("route function and rendering", ("app/api/routes/", "app/api/render", "hot_routes")),
    ("FastAPI and Starlette request handling", ("fastapi/", "starlette/", "pydantic")),
    ("middlewares and observation", ("app/api/", "app/observability/", "logging/")),
    ("uvicorn HTTP protocol", ("uvicorn/protocols/", "uvicorn/middleware/", "app/serving/bounds")),
)
PAGE = 100
REST = "the rest (the event loop's own code)"


def layer_of(stack: list[str]) -> str:
    """The layer of a sample, from its frames (outermost first, as py-spy writes them)."""
    for frame in reversed(stack):
        for layer, fragments in LAYERS:
            if any(fragment in frame for fragment in fragments):
                return layer
    return REST


def read_samples(path: Path) -> collections.Counter[str]:
    """Samples per layer of the main thread (the event loop's, where requests run) from a
    py-spy ``--threads --format raw`` file (one stack and a count a line)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        thread, *frames = stack.split(";")
        if thread.endswith(": MainThread"):
            counts[layer_of(frames)] += int(count)
    return counts


def _worker_pid(root: int) -> int:
    """The uvicorn worker's PID: the service process itself, or its one child."""
    children = Path(f"/proc/{root}/task/{root}/children")
    found = children.read_text().split() if children.exists() else []
    return int(found[0]) if found else root


class Caller:
    """Single appends to one running run, or pages of its first 100 records, one after
    another, on a thread of their own."""

    def __init__(self, base_url: str, tokens: Tokens, operation: str) -> None:
        self.store = HttpStore(base_url, token=tokens.worker)
        self.run = run_start(run_id=f"layers-{os.getpid()}", session_id=f"layers-{os.getpid()}")
        with HttpStore(base_url, token=tokens.admin) as admin:
            admin.create_session(self.run.session_id, T0)  # an admin-only call
        self.store.start_root_run(self.run, started_record(self.run), canceled_record(self.run))
        self.operation = operation
        self.calls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        store, run = self.store, self.run
        for index in range(PAGE if self.operation == "page" else 0):
            store.append_run_record(ordinary(run, f"page-{index}"))
        while not self._stop.is_set():
            if self.operation == "page":
                store.list_run_records(run.run_id, "", PAGE)
            else:
                store.append_run_record(ordinary(run, f"e{self.calls}"))
            self.calls += 1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def measure(
    admin_url: str,
    operation: str,
    seconds: float,
    rate: int,
    serve_pythonpath: str | None,
    mode: str,
) -> tuple[float, int, collections.Counter[str]]:
    """(service CPU ms per call, calls, samples per layer) of one sampled stretch, the
    service serving in ``mode`` (``tokens`` or ``open``)."""
    database_url = create_postgres_database(admin_url)
    env: dict[str, str] = {}
    if serve_pythonpath:
        env["PYTHONPATH"] = serve_pythonpath
    with tempfile.TemporaryDirectory() as tmp:
        service = start_service(
            "layers", database_url, Path(tmp), workers=1, env=env, auth=Auth.of(mode)
        )
        try:
            caller = Caller(service.base_url, service.tokens, operation)
            caller.start()
            time.sleep(3.0)  # the page's records; warm: prepared statements, pool, caches
            pid = _worker_pid(service.process.pid)
            cpu_before, calls_before = tree_cpu_seconds(pid), caller.calls
            raw = Path(tmp) / "samples.txt"
            subprocess.run(
                [
                    _py_spy(),
                    "record",
                    "--pid",
                    str(pid),
                    "--duration",
                    str(int(seconds)),
                    "--rate",
                    str(rate),
                    "--format",
                    "raw",
                    "--output",
                    str(raw),
                    "--nonblocking",
                    "--threads",
                ],
                check=True,
                capture_output=True,
            )
            cpu_after, calls_after = tree_cpu_seconds(pid), caller.calls
            caller.stop()
            calls = calls_after - calls_before
            return (cpu_after - cpu_before) * 1000 / calls, calls, read_samples(raw)
        finally:
            stop_service(service)
            drop_postgres_database(admin_url, database_url)


def _py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise SystemExit("py-spy is not installed: pip install py-spy")
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--operation", choices=("append", "page"), default="append")
    parser.add_argument("--seconds", type=float, default=10.0, help="sampled seconds")
    parser.add_argument("--rate", type=int, default=250, help="samples per second")
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    parser.add_argument(
        "--serve-pythonpath", help="PYTHONPATH of the served process (another checkout)"
    )
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    cpu_ms, calls, samples = measure(
        args.postgres_url,
        args.operation,
        args.seconds,
        args.rate,
        args.serve_pythonpath,
        args.auth,
    )
    total = sum(samples.values())
    noun = "page" if args.operation == "page" else "append"
    print(
        f"auth {args.auth}: {calls} {noun}s, service CPU {cpu_ms:.3f} ms per {noun}; "
        f"{total} samples"
    )
    print(f"| layer | share of the samples | CPU ms per {noun} |")
    print("| --- | --: | --: |")
    for layer in [name for name, _ in LAYERS] + [REST]:
        share = samples[layer] / total if total else 0.0
        print(f"| {layer} | {share:.1%} | {share * cpu_ms:.3f} |")


if __name__ == "__main__":
    main()
