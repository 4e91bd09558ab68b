"""Rows of the result table, their ratios to the psycopg ceiling, targets, and JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .auth import describe, mode_of
from .floor import BACKEND as FLOOR
from .floor import FLOOR_JOBS

if TYPE_CHECKING:
    from .targets import Target

CEILING = "psycopg/postgres"


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of ``values`` (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


@dataclass
class Row:
    """One line of the table: an operation on a backend at a number of workers."""

    operation: str
    backend: str
    workers: int
    ops: int
    ops_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int = 0
    note: str = ""
    ratio: float | None = None
    #: ops/s (records/s for a batch call) over the physical floor of the same job and
    #: workers in the same run (``floor.py``): what a user could do instead of calling us.
    floor_ratio: float | None = None
    #: CPU milliseconds per call of the load process, the service and PostgreSQL.
    cpu_ms_per_op: dict[str, float] | None = None
    #: Share of the machine's CPU time the hypervisor gave to others while the cell ran
    #: (``steal`` of ``/proc/stat``): a cell measured under steal reads slow and costly.
    steal_pct: float | None = None

    @staticmethod
    def of(
        operation: str,
        backend: str,
        workers: int,
        latencies: Sequence[float],
        seconds: float,
        *,
        errors: int = 0,
        note: str = "",
    ) -> Row:
        """From latencies in seconds; ``seconds`` is the measured window (or the total)."""
        return Row(
            operation=operation,
            backend=backend,
            workers=workers,
            ops=len(latencies),
            ops_per_s=len(latencies) / seconds if seconds > 0 else 0.0,
            p50_ms=percentile(latencies, 0.50) * 1000,
            p99_ms=percentile(latencies, 0.99) * 1000,
            errors=errors,
            note=note,
        )


def attach_ratios(rows: Sequence[Row]) -> None:
    """``ratio`` = ops/s over the psycopg ceiling's ops/s for the same operation and workers;
    ``floor_ratio`` = ops/s (records/s for a batch) over the floor of the operation's job
    (``floor.FLOOR_JOBS``) at the same workers."""
    ceiling = {(row.operation, row.workers): row for row in rows if row.backend == CEILING}
    floors = {(row.operation, row.workers): row for row in rows if row.backend == FLOOR}
    for row in rows:
        reference = ceiling.get((row.operation, row.workers))
        if reference is not None and reference.ops_per_s > 0:
            row.ratio = row.ops_per_s / reference.ops_per_s
        job, per_call = FLOOR_JOBS.get(row.operation, ("", 1))
        floor = floors.get((job, row.workers))
        if floor is not None and floor.ops_per_s > 0:
            row.floor_ratio = row.ops_per_s * per_call / floor.ops_per_s


def number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


#: Steal (percent of the machine's CPU time) from which a row is flagged in the table.
STEAL_FLAG_PCT = 5.0


def _steal(row: Row) -> str:
    steal = row.steal_pct
    return f"steal {steal:.0f} %" if steal is not None and steal >= STEAL_FLAG_PCT else ""


def table(rows: Sequence[Row]) -> str:
    """The fixed-width table printed at the end of a run (and pasted into the docs)."""
    header = (
        "operation",
        "backend",
        "workers",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "ratio",
        "floor",
        "notes",
    )
    lines = [
        (
            row.operation,
            row.backend,
            str(row.workers),
            number(row.ops_per_s),
            number(row.p50_ms),
            number(row.p99_ms),
            "-" if row.ratio is None else f"{row.ratio:.2f}",
            "-" if row.floor_ratio is None else f"{row.floor_ratio:.2f}",
            "; ".join(
                part
                for part in (f"{row.errors} errors" if row.errors else "", row.note, _steal(row))
                if part
            ),
        )
        for row in rows
    ]
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines, strict=True)]
    right = {2, 3, 4, 5, 6, 7}

    def render(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(width) if index in right else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(parts) + " |"

    separator = (
        "|"
        + "|".join(
            ("-" * (width + 1) + ":") if index in right else "-" * (width + 2)
            for index, width in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([render(header), separator, *(render(line) for line in lines)])


@dataclass
class Report:
    """Everything one run produced, as written to ``bench/results/<timestamp>.json``."""

    meta: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    purges: list[dict[str, Any]] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)

    def to_json(self) -> str:
        document = {
            "meta": self.meta,
            "rows": [asdict(row) for row in self.rows],
            "purges": self.purges,
            "memory": self.memory,
            "targets": [asdict(target) for target in self.targets],
        }
        return json.dumps(document, indent=2)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n")

    def text(self) -> str:
        """The table under a line naming how the services were served, then memory and
        targets."""
        blocks = [f"{describe(mode_of(self.meta))}:\n\n{table(self.rows)}"]
        if self.memory:
            blocks.append(
                "peak RSS (VmHWM): "
                + ", ".join(
                    f"{entry['service']} {entry['role']} {entry['peak_rss_mb']:.0f} MB"
                    for entry in self.memory
                )
            )
        if self.targets:
            blocks.append("\n".join(target.line() for target in self.targets))
        return "\n\n".join(blocks)
