"""What one benchmark run measures, and how long it may take."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"

#: Bytes of every appended record's payload (JSON text).
PAYLOAD_BYTES = 1024
#: What a run measures, in order (``--parts`` picks some).
PARTS = (
    "grid",
    "pages",
    "purge",
    "memory",
    "search",
    "tail",
    "console",
    "observability",
    "lifecycle",
    "delivery",
)
#: Page size of every list operation.
PAGE_SIZE = 100


def postgres_admin_url() -> str:
    """The PostgreSQL server the benchmark creates its database on."""
    return os.environ.get(
        "RUNTIME_STORE_BENCH_POSTGRES_URL",
        os.environ.get("RUNTIME_STORE_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL),
    )


@dataclass(frozen=True)
class Config:
    """Scales and durations; ``default()``, ``smoke()`` and ``large()`` are the three modes."""

    mode: str
    #: Measured seconds of every (operation, backend, workers) cell, after ``warmup``.
    duration: float
    warmup: float
    #: Concurrent workers of the throughput grid.
    levels: tuple[int, ...]
    #: Records of the run and session whose pages the page-latency test reads.
    page_sizes: tuple[int, ...]
    #: Timed reads of each page position (start, middle, end).
    page_repeats: int
    #: Records of the purged session: ``purge_runs`` runs of ``purge_records // purge_runs``.
    purge_records: int
    purge_runs: int
    #: Records of the run (and session) the list workloads page through.
    list_records: int
    #: ``runtime-store serve --workers`` (0: as ``serve`` decides).
    server_workers: int
    postgres_url: str
    #: Upper bound on terminal writes per second, to size the pool of running runs.
    terminal_rate_cap: int = 6000
    #: Operations of the grid to measure (empty: all); a focused run for before/after figures.
    operations: tuple[str, ...] = ()
    #: Backends of the grid to measure besides the ceiling (empty: all).
    backends: tuple[str, ...] = ()
    #: Parts of the run: the throughput grid, page latency, purge, memory, search, …
    parts: tuple[str, ...] = PARTS
    #: Runs of the databases the search pages read (11.1), smallest first.
    search_sizes: tuple[int, ...] = (10_000, 1_000_000)
    #: Records whose commit-to-delivery time the live-tail part measures (11.3).
    tail_records: int = 200
    #: Records of the session exported and imported (11.4).
    transfer_records: int = 1_000_000
    #: Ended sessions a retention sweep purges (11.4), and the records of each.
    retention_sessions: int = 10_000
    retention_records: int = 100
    #: How every service of the run authenticates (``bench/auth.py``): ``tokens`` (required,
    #: as production serves) or ``open``; ``both``: ``python -m bench`` measures the run
    #: once in each mode and compares them.
    auth: str = "tokens"

    @staticmethod
    def default(postgres_url: str, server_workers: int = 0) -> Config:
        return Config(
            mode="default",
            duration=2.0,
            warmup=0.5,
            levels=(1, 4, 16),
            page_sizes=(10_000, 1_000_000),
            page_repeats=30,
            purge_records=100_000,
            purge_runs=100,
            list_records=1_000,
            server_workers=server_workers,
            postgres_url=postgres_url,
        )

    @staticmethod
    def smoke(postgres_url: str, server_workers: int = 0) -> Config:
        return Config(
            mode="smoke",
            duration=0.15,
            warmup=0.05,
            levels=(1,),
            page_sizes=(100, 300),
            search_sizes=(100, 300),
            tail_records=20,
            transfer_records=500,
            retention_sessions=20,
            retention_records=20,
            page_repeats=3,
            purge_records=300,
            purge_runs=10,
            list_records=300,
            server_workers=server_workers,
            postgres_url=postgres_url,
            terminal_rate_cap=3000,
        )

    @staticmethod
    def large(postgres_url: str, server_workers: int = 0) -> Config:
        base = Config.default(postgres_url, server_workers)
        return replace(base, mode="large", page_sizes=(10_000, 1_000_000, 10_000_000))
