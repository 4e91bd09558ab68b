"""What the results were measured on: machine, versions, commit, configuration."""

from __future__ import annotations

import os
import platform
import subprocess
import timeit
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import servers
from .config import Config

REPO = Path(__file__).resolve().parent.parent


def describe_machine(postgres_url: str, config: Config, services: dict[str, int]) -> dict[str, Any]:
    """The ``meta`` of a result file; ``services`` maps each service to its worker count."""
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    total_kb = next((int(line.split()[1]) for line in meminfo if line.startswith("MemTotal")), 0)
    return {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain")),
        "nproc": os.cpu_count(),
        "memory_gib": round(total_kb / 1024 / 1024, 1),
        "cpu": _cpu_model(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "postgresql": servers.postgres_settings(
            postgres_url,
            "server_version",
            "autovacuum",
            "shared_buffers",
            "synchronous_commit",
            "max_connections",
        ),
        "services": services,
        "load_average_at_start": os.getloadavg(),
        "cpu_probe_ms_at_start": cpu_probe_ms(),
        "config": asdict(config),
    }


def cpu_probe_ms() -> float:
    """Milliseconds one core takes for a fixed piece of pure Python (best of five): this
    virtual machine's cores run at different speeds from hour to hour (a busy host, not
    always visible as steal), and every figure of a run moves with them. About 2.4 ms on
    this machine at its usual speed."""
    return round(min(timeit.repeat("sum(range(200_000))", number=1, repeat=5)) * 1000, 2)


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()
