"""What the focused two-way comparisons share (``start_paths``, ``terminal_paths``,
``store_drivers``): a migrated scratch PostgreSQL database for the measurement, and the
table of each cell's rounds, side by side per way."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from rich.console import Console
from rich.table import Table

from app.storage.database.migrations import upgrade_schema

from .servers import create_postgres_database, drop_postgres_database

T = TypeVar("T")
#: One cell's rounds: (calls per second, CPU ms per call) each.
Rounds = list[tuple[float, float]]


def on_scratch_database(admin_url: str, measure: Callable[[str], T]) -> tuple[T, str]:
    """``measure(database_url)`` on a new migrated database, dropped afterwards (also on
    failure); with the UTC time it started."""
    database_url = create_postgres_database(admin_url)
    try:
        upgrade_schema(database_url)
        started = time.strftime("%H:%M UTC", time.gmtime())
        return measure(database_url), started
    finally:
        drop_postgres_database(admin_url, database_url)


def print_ways(
    title: str,
    labels: Sequence[str],
    rows: Sequence[tuple[Sequence[str], Sequence[Rounds]]],
    ways: Sequence[str],
    unit: str = "calls",
) -> None:
    """One row per cell: its labels, then each way's rates and CPU, round by round."""
    table = Table(title=title)
    for label in labels:
        table.add_column(label)
    for way in ways:
        table.add_column(f"{way}: {unit}/s, each round", justify="right")
        table.add_column(f"{way}: CPU ms per call", justify="right")
    for row_labels, per_way in rows:
        cells: list[str] = []
        for rounds in per_way:
            cells.append(" / ".join(f"{rate:,.0f}" for rate, _ in rounds))
            cells.append(" / ".join(f"{cpu:.2f}" for _, cpu in rounds))
        table.add_row(*row_labels, *cells)
    Console(width=160).print(table)
