"""``python -m bench.frameworks`` runs end to end at tiny scale and reports every pair
(never any timing): the peers and both adapters, through the service and in process."""

from __future__ import annotations

import pytest

from bench import frameworks


def test_the_framework_figures_run(postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    del postgres_url  # PostgreSQL answers (or the test skips, as the others on it)
    frameworks.main(["--iterations", "3"])
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split(":")[0] for row in rows] == [
        "LangGraph put + get_tuple",
    ] * 3 + ["Agents add_items + get_items(100)"] * 3
    assert len(rows) == 6
