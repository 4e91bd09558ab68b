"""Page latency of ``list_sessions`` and ``search_runs`` at two scales (CONTRACT.md 11.1).

Each scale gets fresh databases (PostgreSQL and SQLite), bulk-loaded with SQL: ``n`` runs
in ``n / 10`` sessions, 20 agents, 1 run in 20 failed and 1 in 3 completed, every tenth
run a child of the one before, every tenth run labelled ``team:search``. The in-process
``SqlStore`` then reads the first and the second page (limit 100) of each filter, one
reader at a time, every read once per round so drift hits every row alike. Rows are
``search <filter> @<scale> <page>``; ``growth`` compares the scales (target: the larger at
most 1.5 times the smaller at the median, the same range read at any size).
"""

from __future__ import annotations

import functools
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from app.storage.database.migrations import upgrade_schema
from runtime_store_client import RunStatus, SessionStatus

from . import servers
from .bulk import analyze
from .config import PAGE_SIZE
from .pages import scale_label
from .report import Row

BASE_MS: Final = 1_780_000_000_000
WARM_READS: Final = 3


def _series(engine: Engine, head: str, select: str, count: int) -> None:
    if engine.dialect.name == "postgresql":
        sql = f"{head} SELECT {select} FROM generate_series(1, :count) AS g(x)"
    else:
        sql = (
            "WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < :count) "
            f"{head} SELECT {select} FROM g"
        )
    with engine.begin() as conn:
        conn.execute(sa.text(sql), {"count": count, "base": BASE_MS})


def load(engine: Engine, runs: int) -> None:
    """``runs`` runs and ``runs // 10`` sessions, as described in the module docstring."""
    sessions = max(1, runs // 10)
    _series(
        engine,
        "INSERT INTO sessions (session_id, status, created_at_ms, record_count)",
        "'s' || x, CASE WHEN x % 2 = 0 THEN 'ended' ELSE 'active' END, :base + x, 0",
        sessions,
    )
    _series(
        engine,
        "INSERT INTO runs (run_id, agent_id, session_id, parent_run_id, status, start_outcome,"
        " started_at_ms, updated_at_ms, labels, cancellation_reason, record_count, start_key)",
        f"'r' || x, 'agent-' || (x % 20), 's' || (x % {sessions} + 1),"
        " CASE WHEN x % 10 = 0 THEN 'r' || (x - 1) ELSE '' END,"
        " CASE WHEN x % 20 = 0 THEN 'failed' WHEN x % 3 = 0 THEN 'completed'"
        " ELSE 'running' END, 'proceed', :base + x, :base + x,"
        " CASE WHEN x % 10 = 1 THEN '{\"team\":\"search\"}' ELSE '{}' END, '', 0, 'start'",
        runs,
    )
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO run_labels (run_id, key, value, started_at_ms) "
                "SELECT run_id, '\"team\"', '\"search\"', started_at_ms FROM runs "
                "WHERE labels <> '{}'"
            )
        )
    settle(engine)


def settle(engine: Engine) -> None:
    """PostgreSQL: ``VACUUM ANALYZE`` the fresh rows, as autovacuum soon would, and a
    checkpoint. Without them the first reads set hint bits (writes), and autovacuum and the
    checkpointer work through the million rows while the pages are timed, on the same two
    cores."""
    if engine.dialect.name != "postgresql":
        analyze(engine)
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM (ANALYZE)"))
        conn.execute(sa.text("CHECKPOINT"))  # its writes done before the timed reads


def reads(store: SqlStore, runs: int) -> dict[str, Callable[[str], Any]]:
    """Each filter of the table: a call from a cursor to its page."""
    parent = f"r{(runs // 2) // 10 * 10 - 1}"
    return {
        "list_sessions active": lambda c: store.list_sessions(
            statuses=[SessionStatus.ACTIVE], cursor=c, limit=PAGE_SIZE
        ),
        "search_runs (no filter)": lambda c: store.search_runs(cursor=c, limit=PAGE_SIZE),
        "search_runs status": lambda c: store.search_runs(
            statuses=[RunStatus.FAILED], cursor=c, limit=PAGE_SIZE
        ),
        "search_runs agent+status": lambda c: store.search_runs(
            agent_id="agent-7", statuses=[RunStatus.RUNNING], cursor=c, limit=PAGE_SIZE
        ),
        "search_runs label": lambda c: store.search_runs(
            labels={"team": "search"}, cursor=c, limit=PAGE_SIZE
        ),
        "search_runs parent": lambda c: store.search_runs(
            parent_run_id=parent, cursor=c, limit=PAGE_SIZE
        ),
    }


def _next_cursor(page: Any) -> str:
    return str(page.next_cursor)


def operation(name: str, runs: int, page: str) -> str:
    return f"search {name} @{scale_label(runs)} {page}"


def measure(backend: str, store: SqlStore, runs: int, repeats: int) -> list[Row]:
    """First and second page of every filter, ``repeats`` timed reads each."""
    calls: list[tuple[str, Callable[[], Any]]] = []
    for name, read in reads(store, runs).items():
        second = _next_cursor(read(""))
        calls.append((operation(name, runs, "first"), functools.partial(read, "")))
        if second:
            calls.append((operation(name, runs, "second"), functools.partial(read, second)))
    for _, call in calls:
        for _ in range(WARM_READS):
            call()
    latencies: dict[str, list[float]] = {name: [] for name, _ in calls}
    for _ in range(repeats):
        for name, call in calls:
            started = time.perf_counter()
            call()
            latencies[name].append(time.perf_counter() - started)
    return [Row.of(name, backend, 1, latencies[name], sum(latencies[name])) for name, _ in calls]


@contextmanager
def fresh_databases(admin_url: str) -> Iterator[dict[str, Engine]]:
    """A new PostgreSQL database and SQLite file, at head; both removed afterwards."""
    postgres_url = servers.create_postgres_database(admin_url)
    engines: dict[str, Engine] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="rs-bench-search-") as workdir:
            sqlite_url = f"sqlite:///{Path(workdir) / 'search.db'}"
            for name, url in (("postgres", postgres_url), ("sqlite", sqlite_url)):
                upgrade_schema(url)
                engines[name] = create_engine(url)
            try:
                yield engines
            finally:
                for engine in engines.values():
                    engine.dispose()
    finally:
        servers.drop_postgres_database(admin_url, postgres_url)


def run_search(
    admin_url: str, scales: Sequence[int], repeats: int, log: Callable[[str], None]
) -> list[Row]:
    rows: list[Row] = []
    for runs in scales:
        with fresh_databases(admin_url) as engines:
            for name, engine in engines.items():
                started = time.perf_counter()
                load(engine, runs)
                log(
                    f"loaded {scale_label(runs)} runs on {name} in "
                    f"{time.perf_counter() - started:.1f} s"
                )
                rows += measure(f"sqlstore/{name}", SqlStore(engine), runs, repeats)
    for row in rows:
        log(f"{row.operation:48} {row.backend:18} p50 {row.p50_ms:8.2f} ms")
    return rows


def growth(rows: Sequence[Row], small: int, large: int) -> dict[tuple[str, str], float]:
    """p50 at ``large`` / p50 at ``small`` of every (filter and page, backend)."""
    by_key = {(row.operation, row.backend): row for row in rows}
    ratios: dict[tuple[str, str], float] = {}
    for (name, backend), row in by_key.items():
        if f"@{scale_label(small)} " not in name:
            continue
        big = by_key.get(
            (name.replace(f"@{scale_label(small)} ", f"@{scale_label(large)} "), backend)
        )
        if big is not None and row.p50_ms > 0:
            label = name.replace(f" @{scale_label(small)}", "")
            ratios[(label, backend)] = big.p50_ms / row.p50_ms
    return ratios
