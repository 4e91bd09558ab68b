"""``python -m bench --side-by-side``: which cells it measures and how it lays them out
(``bench/side_by_side.py``); the run itself is the grid's (tests/test_bench_smoke.py)."""

from __future__ import annotations

from bench import floor, side_by_side
from bench.__main__ import parse
from bench.report import Row, attach_ratios


def row(operation: str, backend: str, workers: int, ops_per_s: float) -> Row:
    found = Row(operation, backend, workers, 1, ops_per_s, 1.0, 2.0)
    found.cpu_ms_per_op = {"load": 0.5, "service-postgres": 1.25, "postgres": 0.3}
    return found


def test_side_by_side_measures_only_its_cells_and_quick_shortens_them() -> None:
    config, _ = parse(["--side-by-side", "--quick"])
    assert config.parts == ("grid",)
    assert config.operations == (side_by_side.APPEND, side_by_side.BATCH, side_by_side.PAGE)
    assert config.backends == ("sqlstore/postgres", "http/postgres")
    assert (config.duration, config.warmup) == (1.0, 0.3)
    full, _ = parse(["--side-by-side"])
    assert full.duration > config.duration
    assert side_by_side.asked(full)
    assert not side_by_side.asked(parse([])[0])  # the full run prints its own table only


def test_the_table_gives_each_case_its_floor_ratio_and_cpu_per_process() -> None:
    rows = [
        row(floor.INSERT, floor.BACKEND, 16, 2000.0),
        row(side_by_side.APPEND, "sqlstore/postgres", 16, 1600.0),
        row(side_by_side.APPEND, "http/postgres", 16, 500.0),
        row(side_by_side.BATCH, "http/postgres", 16, 250.0),
    ]
    attach_ratios(rows)
    lines = side_by_side.table(rows).splitlines()
    assert len(lines) == 2 + len(rows)
    assert lines[2].startswith("| raw floor: one-row INSERT")
    assert "| 1.00 |" in lines[2]
    append = next(line for line in lines if line.startswith("| HTTP append"))
    # The floor ratio, the ratio to SqlStore's cell, then the CPU of each process.
    assert append.split(" | ")[4:] == ["0.25", "0.31", "0.50", "1.25", "0.30 |"]
    in_process = next(line for line in lines if line.startswith("| `SqlStore` append"))
    assert in_process.split(" | ")[4:6] == ["0.80", "-"]
    batch = next(line for line in lines if line.startswith("| HTTP batch"))
    assert batch.split(" | ")[4:6] == ["2.00", "-"]  # records per second: 16 a call
