"""``python -m bench --side-by-side``: which cells it measures and how it lays them out
(``bench/side_by_side.py``), in each auth mode; the run itself is the grid's
(tests/test_bench_smoke.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import floor, side_by_side
from bench.__main__ import output_path, parse, sittings
from bench.auth import Auth
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


def test_tokens_are_required_by_default_and_both_runs_a_sitting_in_each_mode() -> None:
    config, _ = parse(["--side-by-side", "--quick"])
    assert config.auth == "tokens"
    assert [sitting.auth for sitting in sittings(config)] == ["tokens"]
    both, _ = parse(["--side-by-side", "--quick", "--auth", "both"])
    planned = sittings(both)
    assert [sitting.auth for sitting in planned] == ["tokens", "open"]
    # The same cells in each: only the mode differs.
    assert {(s.operations, s.backends, s.duration) for s in planned} == {
        (config.operations, config.backends, config.duration)
    }
    assert output_path(Path("out/run.json"), planned[1], several=True) == Path("out/run-open.json")
    assert output_path(Path("out/run.json"), planned[0], several=False) == Path("out/run.json")
    assert [s.auth for s in sittings(parse(["--auth", "open"])[0])] == ["open"]


def test_tokens_mode_serves_with_a_key_and_a_bootstrap_admin_token() -> None:
    tokens = Auth.of("tokens")
    env = {"RUNTIME_STORE_TOKEN_KEY": "inherited", "OTHER": "kept"}
    tokens.apply(env)
    assert env["RUNTIME_STORE_TOKEN_KEY"] == tokens.key != "inherited"
    assert env["RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN"] == tokens.admin_token
    assert tokens.admin_token.startswith("rst_")
    assert len(tokens.admin_token) == 4 + 43
    assert tokens.key not in repr(tokens)  # never printed
    assert tokens.admin_token not in repr(tokens)
    assert Auth.of("tokens").key != tokens.key  # random for each sitting
    # Open removes what the bench's own environment would otherwise hand down.
    Auth.of("open").apply(env)
    assert env == {"OTHER": "kept"}
    with pytest.raises(ValueError, match="unknown auth mode"):
        Auth.of("both")


def test_the_auth_table_sets_each_http_cell_with_tokens_beside_it_open() -> None:
    tokens = [
        row(floor.INSERT, floor.BACKEND, 16, 2000.0),
        row(side_by_side.APPEND, "sqlstore/postgres", 16, 1600.0),
        row(side_by_side.APPEND, "http/postgres", 16, 450.0),
        row(side_by_side.PAGE, "http/postgres", 16, 300.0),  # not measured open: left out
    ]
    opened = [
        row(floor.INSERT, floor.BACKEND, 16, 2500.0),
        row(side_by_side.APPEND, "sqlstore/postgres", 16, 1600.0),
        row(side_by_side.APPEND, "http/postgres", 16, 500.0),
    ]
    tokens[2].cpu_ms_per_op = {"service-postgres": 1.5}
    lines = side_by_side.auth_table(tokens, opened).splitlines()
    assert "tokens / open" in lines[0]
    assert len(lines) == 3  # the HTTP cell only: the others do not depend on the mode
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert cells[0].startswith("HTTP append")
    # Calls per second and the service's CPU per call, each with tokens / open.
    assert cells[1:] == ["16", "450", "500", "0.90", "1.50", "1.25", "1.20"]
