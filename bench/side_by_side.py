"""``python -m bench --side-by-side``: the HTTP path next to the in-process store and the raw
floor, in one sitting on PostgreSQL (issue 32).

The rows are the grid's own cells (same workloads, same drivers, same CPU accounting by
process), picked and laid out side by side: for each case and worker count the calls per
second, the p50, the ratio to the raw floor of its job measured in the same sitting (a batch
counts records), and the CPU milliseconds per call of each process: the load process (the
client of the HTTP rows; the in-process store and its threads for the ``SqlStore`` rows),
the ``runtime-store serve`` tree (started with its defaults, as a user starts it) and the
PostgreSQL backends of the benchmark's database.

With ``--auth both`` the sitting is measured once with tokens required and once open, one
after the other (each with its own floor, in its own table), and ``auth_table`` sets every
HTTP cell of the grid of one beside the other's: calls per second and the service's CPU per
call, and tokens / open of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import floor
from .config import Config
from .floor import FLOOR_JOBS
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


def _label(operation: str, backend: str) -> str:
    """A side-by-side case's label, else the grid's operation and backend."""
    case = next((c for c in CASES if (c.operation, c.backend) == (operation, backend)), None)
    return case.label if case else f"{operation} ({backend})"


def _over(tokens: float | None, opened: float | None) -> str:
    return f"{tokens / opened:.2f}" if tokens is not None and opened else "-"


def _service_cpu(row: Row) -> float | None:
    """The service's CPU ms per call of an ``http/<database>`` cell."""
    return (row.cpu_ms_per_op or {}).get(f"service-{row.backend.split('/', 1)[1]}")


def auth_table(tokens: Sequence[Row], opened: Sequence[Row]) -> str:
    """The HTTP cells of the grid measured with tokens required and open, side by side."""
    found = {(row.operation, row.backend, row.workers): row for row in opened}
    lines = [
        "| case | workers | calls/s tokens | calls/s open | tokens / open "
        "| service CPU ms/call tokens | open | tokens / open |",
        "| --- | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for row in tokens:
        other = found.get((row.operation, row.backend, row.workers))
        if other is None or row.operation not in FLOOR_JOBS or not row.backend.startswith("http/"):
            continue
        cpu, cpu_open = _service_cpu(row), _service_cpu(other)
        cells = [
            _label(row.operation, row.backend),
            str(row.workers),
            number(row.ops_per_s),
            number(other.ops_per_s),
            _over(row.ops_per_s, other.ops_per_s),
            "-" if cpu is None else f"{cpu:.2f}",
            "-" if cpu_open is None else f"{cpu_open:.2f}",
            _over(cpu, cpu_open),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
