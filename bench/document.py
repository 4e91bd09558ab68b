"""``python -m bench.document RESULT.json``: a result file as markdown tables (the floor,
throughput and CPU per call, every row, peak RSS and the targets judged), so a document
quotes a run's own numbers, not hand-copied ones (docs/performance.md, "Targets").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .auth import describe, mode_of
from .floor import BACKEND as FLOOR
from .floor import FLOOR_JOBS
from .report import CEILING, Row, number, table

BACKENDS = (CEILING, "sqlstore/postgres", "http/postgres", "sqlstore/sqlite", "http/sqlite")
CPU_PARTS = ("load", "service-postgres", "service-sqlite", "postgres")


def _machine_speed(meta: dict[str, Any]) -> str:
    """The CPU probe and the steal of the run, when recorded (``bench/machine.py``)."""
    parts = []
    if "cpu_probe_ms_at_start" in meta:
        after = meta.get("cpu_probe_ms_after", {})
        probes = [f"{meta['cpu_probe_ms_at_start']} at the start"] + [
            f"{value} after {part}" for part, value in after.items()
        ]
        parts.append(f"CPU probe (ms, lower is faster): {', '.join(probes)}")
    if "steal_pct" in meta:
        parts.append(f"steal over the run {meta['steal_pct']} %")
    return f" {'; '.join(parts)}." if parts else ""


def _rows(document: dict[str, Any]) -> list[Row]:
    return [Row(**row) for row in document["rows"]]


def _grid(rows: list[Row], workers: int) -> dict[tuple[str, str], Row]:
    return {(row.operation, row.backend): row for row in rows if row.workers == workers}


def _ratios(row: Row, backend: str) -> str:
    """``ops/s (ceiling ratio · floor ratio)``; the ceiling has only its floor ratio."""
    ratios = []
    if backend != CEILING and row.ratio is not None:
        ratios.append(f"{row.ratio:.2f}")
    if row.floor_ratio is not None:
        ratios.append(f"f {row.floor_ratio:.2f}")
    return f"{number(row.ops_per_s)} ({' · '.join(ratios)})" if ratios else number(row.ops_per_s)


def summary(rows: list[Row], workers: int) -> str:
    """ops/s, the ratio to the ceiling and the ratio to the floor of every grid operation
    at ``workers``."""
    grid = _grid(rows, workers)
    operations = list(dict.fromkeys(op for op, backend in grid if backend == CEILING))
    lines = [
        "| operation | " + " | ".join(BACKENDS) + " |",
        "| --- | " + " | ".join("--:" for _ in BACKENDS) + " |",
    ]
    for operation in operations:
        cells = []
        for backend in BACKENDS:
            row = grid.get((operation, backend))
            cells.append("-" if row is None else _ratios(row, backend))
        lines.append(f"| {operation} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def floors(rows: list[Row]) -> str:
    """The floor rows (``floor.py``): ops/s and p50 at every worker count."""
    found = [row for row in rows if row.backend == FLOOR]
    levels = sorted({row.workers for row in found})
    jobs = list(dict.fromkeys(row.operation for row in found))
    by_key = {(row.operation, row.workers): row for row in found}
    lines = [
        "| floor job | " + " | ".join(f"{level} workers" for level in levels) + " |",
        "| --- | " + " | ".join("--:" for _ in levels) + " |",
    ]
    for job in jobs:
        cells = []
        for level in levels:
            row = by_key.get((job, level))
            cells.append(
                "-" if row is None else f"{number(row.ops_per_s)} ops/s, p50 {row.p50_ms:.2f} ms"
            )
        lines.append(f"| {job} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cpu(rows: list[Row], workers: int, operation: str) -> str:
    """CPU milliseconds per call of each process group, for one operation at ``workers``."""
    grid = _grid(rows, workers)
    lines = [
        "| backend | ops/s | " + " | ".join(CPU_PARTS) + " | total |",
        "| --- | --: | " + " | ".join("--:" for _ in CPU_PARTS) + " | --: |",
    ]
    for backend in BACKENDS:
        row = grid.get((operation, backend))
        if row is None or row.cpu_ms_per_op is None:
            continue
        used = {part: row.cpu_ms_per_op.get(part, 0.0) for part in CPU_PARTS}
        cells = [f"{ms:.2f}" if ms >= 0.005 else "-" for ms in used.values()]
        lines.append(
            f"| {backend} | {number(row.ops_per_s)} | "
            + " | ".join(cells)
            + f" | {sum(used.values()):.2f} |"
        )
    return "\n".join(lines)


def cpu_by_operation(rows: list[Row], workers: int, backends: tuple[str, ...]) -> str:
    """CPU milliseconds per call of the client (load process), the service and PostgreSQL,
    for every grid operation of each of ``backends`` at ``workers``."""
    grid = _grid(rows, workers)
    operations = list(dict.fromkeys(op for op, backend in grid if backend == CEILING))
    lines = [
        "| operation | backend | ops/s | client (load) | service | postgres | total |",
        "| --- | --- | --: | --: | --: | --: | --: |",
    ]
    for operation in operations:
        for backend in backends:
            row = grid.get((operation, backend))
            if row is None or row.cpu_ms_per_op is None:
                continue
            used = row.cpu_ms_per_op
            database = backend.rsplit("/", 1)[-1]
            client = used.get("load", 0.0)
            service = used.get(f"service-{database}", 0.0) if backend.startswith("http/") else 0.0
            postgres = used.get("postgres", 0.0)
            lines.append(
                f"| {operation} | {backend} | {number(row.ops_per_s)} | {client:.2f} | "
                f"{service:.2f} | {postgres:.2f} | {client + service + postgres:.2f} |"
            )
    return "\n".join(lines)


def targets(document: dict[str, Any]) -> str:
    lines = ["| target | measured | |", "| --- | --- | --- |"]
    for target in document["targets"]:
        verdict = "met" if target["met"] else "**missed**"
        lines.append(f"| {target['name']} {target['goal']} | {target['measured']} | {verdict} |")
    return "\n".join(lines)


def render(path: Path) -> str:
    document = json.loads(path.read_text())
    rows = _rows(document)
    # The grid's largest worker count (other parts have rows with more subscribers).
    top = max((row.workers for row in rows if row.operation in FLOOR_JOBS), default=1)
    meta = document["meta"]
    memory = ", ".join(
        f"{entry['service']} {entry['role']} {entry['peak_rss_mb']:.0f} MB"
        for entry in document["memory"]
    )
    return "\n\n".join(
        [
            f"Result file `{path.name}`, commit `{str(meta.get('git_commit', '?'))[:7]}`, "
            f"{meta.get('elapsed_s', '?')} s, {describe(mode_of(meta))}.{_machine_speed(meta)}",
            "The physical floor of each job (`bench/floor.py`: psycopg, one connection per "
            "worker, same run):",
            floors(rows),
            f"Throughput at {top} workers (ops/s; in brackets the ratio to the same run's "
            "psycopg ceiling, then `f` the ratio to the floor of the job: inserts for writes, "
            "the latest-100 select for reads; records/s for the batch row):",
            summary(rows, top),
            f"CPU per `append_run_record` at {top} workers (ms of CPU per call, from "
            "`/proc`: the load process, each service's process tree, the PostgreSQL "
            "backends of the benchmark database):",
            cpu(rows, top, "append_run_record"),
            f"CPU per call of every operation at {top} workers, PostgreSQL (ms: the load "
            "process, which is the client or the in-process store; the service's process "
            "tree; the PostgreSQL backends):",
            cpu_by_operation(rows, top, (CEILING, "sqlstore/postgres", "http/postgres")),
            "The whole table:",
            table(rows),
            f"Peak RSS (VmHWM): {memory}." if memory else "",
            "Targets:",
            targets(document),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.document", description=__doc__)
    parser.add_argument("result", type=Path, help="a bench/results/*.json file")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(render(args.result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
