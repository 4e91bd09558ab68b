"""``python -m bench.document RESULT.json``: a result file as the markdown of
docs/performance.md ("Last full run" and "Targets"), so the document shows a run's own
numbers, not hand-copied ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .report import CEILING, Row, number, table

BACKENDS = (CEILING, "sqlstore/postgres", "http/postgres", "sqlstore/sqlite", "http/sqlite")
CPU_PARTS = ("load", "service-postgres", "service-sqlite", "postgres")


def _rows(document: dict[str, Any]) -> list[Row]:
    return [Row(**row) for row in document["rows"]]


def _grid(rows: list[Row], workers: int) -> dict[tuple[str, str], Row]:
    return {(row.operation, row.backend): row for row in rows if row.workers == workers}


def summary(rows: list[Row], workers: int) -> str:
    """ops/s (and the ratio to the ceiling) of every grid operation at ``workers``."""
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
            if row is None:
                cells.append("-")
            elif backend == CEILING or row.ratio is None:
                cells.append(number(row.ops_per_s))
            else:
                cells.append(f"{number(row.ops_per_s)} ({row.ratio:.2f})")
        lines.append(f"| {operation} | " + " | ".join(cells) + " |")
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


def targets(document: dict[str, Any]) -> str:
    lines = ["| target | measured | |", "| --- | --- | --- |"]
    for target in document["targets"]:
        verdict = "met" if target["met"] else "**missed**"
        lines.append(f"| {target['name']} {target['goal']} | {target['measured']} | {verdict} |")
    return "\n".join(lines)


def render(path: Path) -> str:
    document = json.loads(path.read_text())
    rows = _rows(document)
    top = max(row.workers for row in rows)
    meta = document["meta"]
    memory = ", ".join(
        f"{entry['service']} {entry['role']} {entry['peak_rss_mb']:.0f} MB"
        for entry in document["memory"]
    )
    return "\n\n".join(
        [
            f"Result file `{path.name}`, commit `{str(meta.get('git_commit', '?'))[:7]}`, "
            f"{meta.get('elapsed_s', '?')} s.",
            f"Throughput at {top} workers (ops/s, ratio to the same run's psycopg ceiling):",
            summary(rows, top),
            f"CPU per `append_run_record` at {top} workers (ms of CPU per call, from "
            "`/proc`: the load process, each service's process tree, the PostgreSQL "
            "backends of the benchmark database):",
            cpu(rows, top, "append_run_record"),
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
