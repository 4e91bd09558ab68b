"""``python -m bench --side-by-side``: the HTTP path next to the in-process store and the raw
floor, in one sitting on PostgreSQL (issue 32).

The rows are the grid's own cells (same workloads, same drivers, same CPU accounting by
process), picked and laid out side by side: for each case and worker count the calls per
second, the p50, the ratio to the raw floor of its job measured in the same sitting (a batch
counts records), and the CPU milliseconds per call of each process: the load process (the
client of the HTTP rows; the in-process store and its threads for the ``SqlStore`` rows),
the ``runtime-store serve`` tree (started with its defaults, as a user starts it) and the
PostgreSQL backends of the benchmark's database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import floor
from .config import Config
from .report import Row, number

APPEND = "append_run_record"
BATCH = "append_run_records (16 per call)"
PAGE = "list_run_records"


@dataclass(frozen=True)
class Case:
    label: str
    operation: str
    backend: str


CASES = (
    Case("raw floor: one-row INSERT … RETURNING transaction", floor.INSERT, floor.BACKEND),
    Case("raw floor: latest-100 SELECT", floor.SELECT, floor.BACKEND),
    Case("`SqlStore` append", APPEND, "sqlstore/postgres"),
    Case("`SqlStore` page of 100", PAGE, "sqlstore/postgres"),
    Case("`SqlStore` batch of 16 (records/s)", BATCH, "sqlstore/postgres"),
    Case("HTTP append (`AsyncHttpStore` → `serve`)", APPEND, "http/postgres"),
    Case("HTTP page of 100", PAGE, "http/postgres"),
    Case("HTTP batch of 16 (records/s)", BATCH, "http/postgres"),
)

#: Processes whose CPU the table shows, by the key ``Benchmark.cpu`` gives them.
CPU_COLUMNS = (("load", "client/load"), ("service-postgres", "service"), ("postgres", "PostgreSQL"))


OPERATIONS = (APPEND, BATCH, PAGE)
IN_PROCESS, HTTP = "sqlstore/postgres", "http/postgres"
BACKENDS = (IN_PROCESS, HTTP)


def configure(config: Config, *, quick: bool) -> Config:
    """The grid cells of the side-by-side rows only; ``quick``: shorter cells (about a
    minute and a half in all instead of three)."""
    config = replace(config, parts=("grid",), operations=OPERATIONS, backends=BACKENDS)
    return replace(config, duration=1.0, warmup=0.3) if quick else config


def asked(config: Config) -> bool:
    """Whether ``config`` is a side-by-side run (its table is printed after the grid's)."""
    return (config.parts, config.operations, config.backends) == (("grid",), OPERATIONS, BACKENDS)


def _cpu(row: Row) -> list[str]:
    used = row.cpu_ms_per_op or {}
    return [f"{used[key]:.2f}" if key in used else "-" for key, _ in CPU_COLUMNS]


def _to_in_process(row: Row, in_process: Row | None) -> str:
    """An HTTP cell's calls per second over the same cell's in ``SqlStore``: what the
    HTTP path keeps of the in-process store, whatever floor the ratios are taken to."""
    if in_process is None or not in_process.ops_per_s:
        return "-"
    return f"{row.ops_per_s / in_process.ops_per_s:.2f}"


def table(rows: Sequence[Row]) -> str:
    """The side-by-side rows as a markdown table (the floor ratio of a floor row is 1)."""
    found = {(row.operation, row.backend, row.workers): row for row in rows}
    levels = sorted({row.workers for row in rows})
    cpu_header = " | ".join(f"CPU ms/call {name}" for _, name in CPU_COLUMNS)
    lines = [
        f"| case | workers | calls/s | p50 ms | ratio to the raw floor | ratio to `SqlStore` "
        f"| {cpu_header} |",
        "| --- | --: | --: | --: | --: | --: |" + " --: |" * len(CPU_COLUMNS),
    ]
    for case in CASES:
        for workers in levels:
            row = found.get((case.operation, case.backend, workers))
            if row is None:
                continue
            ratio = 1.0 if case.backend == floor.BACKEND else row.floor_ratio
            in_process = found.get((case.operation, IN_PROCESS, workers))
            cells = [
                case.label,
                str(workers),
                number(row.ops_per_s),
                f"{row.p50_ms:.2f}",
                "-" if ratio is None else f"{ratio:.2f}",
                _to_in_process(row, in_process) if case.backend == HTTP else "-",
                *_cpu(row),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
