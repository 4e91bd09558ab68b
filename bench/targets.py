"""The performance targets (docs/performance.md), judged on one run's results.

Throughput ratios are read at the largest worker level of the run (16 by default), page
growth between the smallest list size and each larger one, the purge on each HTTP backend,
and peak RSS for every process that serves requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .config import Config
from .floor import FLOOR_JOBS
from .pages import growth, scale_label
from .report import CEILING, Report, Row, number
from .search import growth as search_growth

RATIO_TARGETS = (
    ("append_run_record", "http/postgres", 0.5),
    ("start_root_run", "http/postgres", 0.5),
    ("append_run_record", "sqlstore/postgres", 0.8),
    # issue 18
    ("load_run", "sqlstore/postgres", 0.5),
)
#: Issue 18: (operation, backend, workers (``None``: the largest level), goal) against the
#: physical floor of the job in the same run (``floor.py``); a batch counts records.
FLOOR_TARGETS: tuple[tuple[str, str, int | None, float], ...] = (
    ("append_run_record", "sqlstore/postgres", None, 0.65),
    ("append_run_record", "http/postgres", None, 0.30),
    ("append_run_records (16 per call)", "http/postgres", None, 1.5),
    ("list_run_records", "sqlstore/postgres", None, 0.80),
    ("list_run_records", "http/postgres", 1, 0.40),
    ("list_run_records", "http/postgres", None, 0.60),
)
PAGE_GROWTH_MAX = 1.2
#: CONTRACT.md 11.1: a search page at 1M runs within 1.5x of 10k runs.
SEARCH_GROWTH_MAX = 1.5
PURGE_SECONDS_MAX = 5.0
PURGE_WRITER_P99_MS_MAX = 100.0
WORKER_RSS_MB_MAX = 150.0


@dataclass(frozen=True)
class Target:
    name: str
    goal: str
    measured: str
    met: bool

    def line(self) -> str:
        return (
            f"[{'met' if self.met else 'MISSED'}] {self.name}: {self.measured} (target {self.goal})"
        )


def _find(rows: Sequence[Row], operation: str, backend: str, workers: int) -> Row | None:
    for row in rows:
        if (row.operation, row.backend, row.workers) == (operation, backend, workers):
            return row
    return None


def ratio_target(
    rows: Sequence[Row], operation: str, backend: str, workers: int, goal: float
) -> Target:
    row = _find(rows, operation, backend, workers)
    name = f"{backend} {operation} at {workers} workers / psycopg ceiling"
    if row is None or row.ratio is None or row.ratio <= 0:
        return Target(name, f">= {goal}", "not measured", False)
    measured = (
        f"{row.ratio:.2f} ({number(row.ops_per_s)} vs {number(row.ops_per_s / row.ratio)} ops/s)"
    )
    return Target(name, f">= {goal}", measured, row.ratio >= goal)


def floor_target(
    rows: Sequence[Row], operation: str, backend: str, workers: int, goal: float
) -> Target:
    row = _find(rows, operation, backend, workers)
    job, per_call = FLOOR_JOBS[operation]
    unit = "records/s" if per_call > 1 else "ops/s"
    name = f"{backend} {operation} at {workers} workers / floor ({job})"
    if row is None or row.floor_ratio is None or row.floor_ratio <= 0:
        return Target(name, f">= {goal}", "not measured", False)
    done = row.ops_per_s * per_call
    measured = (
        f"{row.floor_ratio:.2f} ({number(done)} {unit} vs {number(done / row.floor_ratio)} ops/s)"
    )
    return Target(name, f">= {goal}", measured, row.floor_ratio >= goal)


def page_targets(rows: Sequence[Row], sizes: Sequence[int]) -> list[Target]:
    small = min(sizes)
    found = []
    for large in sorted(sizes)[1:]:
        for list_name in ("list_run_records", "list_session_run_records"):
            for backend in ("http/postgres", "http/sqlite"):
                worst = growth(rows, backend, list_name, small, large)
                found.append(
                    Target(
                        f"{backend} {list_name} page p50 at {scale_label(large)} / at "
                        f"{scale_label(small)} (worst of start, middle, end)",
                        f"<= {PAGE_GROWTH_MAX}",
                        f"{worst:.2f}",
                        worst <= PAGE_GROWTH_MAX,
                    )
                )
    return found


def search_targets(rows: Sequence[Row], sizes: Sequence[int]) -> list[Target]:
    small, large = min(sizes), max(sizes)
    return [
        Target(
            f"{backend} {name} p50 at {scale_label(large)} / at {scale_label(small)} runs",
            f"<= {SEARCH_GROWTH_MAX}",
            f"{ratio:.2f}",
            ratio <= SEARCH_GROWTH_MAX,
        )
        for (name, backend), ratio in sorted(search_growth(rows, small, large).items())
    ]


def purge_targets(report: Report) -> list[Target]:
    found = []
    for purge in report.purges:
        if purge["backend"] == CEILING:
            continue
        seconds, p99 = purge["purge_seconds"], purge["writer_p99_ms_during"]
        found.append(
            Target(
                f"{purge['backend']} purge of {scale_label(purge['records'])} records, "
                "other session's append p99 during it",
                f"< {PURGE_SECONDS_MAX:.0f} s, p99 < {PURGE_WRITER_P99_MS_MAX:.0f} ms",
                f"{seconds:.2f} s, p99 {p99:.1f} ms",
                seconds < PURGE_SECONDS_MAX
                and p99 < PURGE_WRITER_P99_MS_MAX
                and not purge["error"],
            )
        )
    return found


def memory_targets(report: Report) -> list[Target]:
    """Each uvicorn worker; the service process itself when it serves alone (1 worker)."""
    with_workers = {entry["service"] for entry in report.memory if entry["role"] == "worker"}
    found = []
    for entry in report.memory:
        serving = entry["role"] == "worker" or (
            entry["role"] == "service" and entry["service"] not in with_workers
        )
        if serving:
            found.append(
                Target(
                    f"{entry['service']} {entry['role']} (pid {entry['pid']}) peak RSS",
                    f"<= {WORKER_RSS_MB_MAX:.0f} MB",
                    f"{entry['peak_rss_mb']:.0f} MB",
                    entry["peak_rss_mb"] <= WORKER_RSS_MB_MAX,
                )
            )
    return found


def evaluate(report: Report, config: Config) -> list[Target]:
    """Every target the run measured; a focused run (``--only``, ``--backends``,
    ``--parts``) is judged on what it measured only."""
    top = max(config.levels)
    found = []
    if "grid" in config.parts:

        def measured(op: str, backend: str) -> bool:
            return (not config.operations or op in config.operations) and (
                not config.backends or backend in config.backends
            )

        found += [
            ratio_target(report.rows, op, backend, top, goal)
            for op, backend, goal in RATIO_TARGETS
            if measured(op, backend)
        ]
        judged: set[str] = set()
        for op, backend, workers, goal in FLOOR_TARGETS:
            level = top if workers is None else workers
            if not measured(op, backend) or level not in config.levels:
                continue
            target = floor_target(report.rows, op, backend, level, goal)
            if target.name not in judged:
                judged.add(target.name)
                found.append(target)
    if "pages" in config.parts:
        found += page_targets(report.rows, config.page_sizes)
    if "purge" in config.parts:
        found += purge_targets(report)
    if "memory" in config.parts:
        found += memory_targets(report)
    if "search" in config.parts:
        found += search_targets(report.rows, config.search_sizes)
    return found
