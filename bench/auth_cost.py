"""``python -m bench.auth_cost``: what requiring tokens costs an HTTP append, in one sitting.

Two ``runtime-store serve`` processes with the service's defaults (workers as ``serve``
decides) on two new PostgreSQL databases: one with tokens required (the production shape;
the calls send a worker token), one open. Appends through one ``AsyncHttpStore`` at each
level of concurrent callers, the two modes measured **in pairs**, back to back (which goes
first alternating): on a shared machine whose speed drifts by half within minutes, only
neighbours in time compare. Prints, per level, the medians over the pairs of appends per
second and of the service's CPU per append (its process tree, from ``/proc``) in each mode,
the median of the pairs' ratios tokens / open, and whether the production shape's targets
hold: throughput with tokens at least 0.9 of open, CPU per append at most 1.1.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.storage import SqlStore, create_engine, upgrade_schema
from runtime_store_client import RunStart

from .auth import Auth
from .config import postgres_admin_url
from .drive import drive_http
from .servers import (
    Service,
    create_postgres_database,
    drop_postgres_database,
    start_service,
    stop_service,
    tree_cpu_seconds,
)
from .workloads import Call, Database, ordinary, start_in_new_session

MODES = ("tokens", "open")
#: The production shape's targets (issue "Production shape").
THROUGHPUT_TARGET = 0.9
CPU_TARGET = 1.1


@dataclass
class Sample:
    appends_per_second: float
    cpu_ms_per_append: float


def _runs(db: Database, mode: str, level: int, round_: int) -> list[RunStart]:
    """One new run per caller for this cell (each in a session of its own)."""
    cell = f"{mode}-r{round_}-l{level}"
    return [start_in_new_session(db, f"{cell}-s{k}", f"{cell}-{k}") for k in range(level)]


def _measure(
    service: Service, db: Database, mode: str, level: int, round_: int, seconds: float
) -> Sample:
    runs = _runs(db, mode, level, round_)

    def calls(worker: int, i: int) -> Call:
        return Call("append_run_record", (ordinary(runs[worker], f"n-{i}"),))

    before = tree_cpu_seconds(service.process.pid)
    # No warm-up of its own: the CPU is counted over every call made (``calls``).
    measured = drive_http(service.base_url, service.tokens.worker, calls, level, 0.5, seconds)
    used = tree_cpu_seconds(service.process.pid) - before
    if measured.errors:
        raise RuntimeError(f"{mode} at {level}: {measured.errors} errors: {measured.first_error}")
    return Sample(
        appends_per_second=len(measured.latencies) / measured.seconds,
        cpu_ms_per_append=used * 1000 / max(measured.calls, 1),
    )


def measure(
    admin_url: str,
    levels: list[int],
    rounds: int,
    seconds: float,
    serve_pythonpath: str = "",
    *,
    same: bool = False,
) -> dict[str, object]:
    """Each level's medians per mode and their ratios; ``serve_pythonpath`` serves another
    checkout (a before in a worktree); ``same`` serves both sides open (an A/A run: the
    harness's own noise)."""
    env = {"PYTHONPATH": serve_pythonpath} if serve_pythonpath else {}
    work = Path(tempfile.mkdtemp(prefix="bench-auth-"))
    urls = {mode: create_postgres_database(admin_url) for mode in MODES}
    engines = {mode: create_engine(url) for mode, url in urls.items()}
    services: dict[str, Service] = {}
    try:
        dbs = {}
        for mode, url in urls.items():
            upgrade_schema(url)
            name = url.rsplit("/", 1)[1]
            dbs[mode] = Database(name, url, engines[mode], SqlStore(engines[mode]), 0)
            services[mode] = start_service(
                f"auth-{mode}", url, work, env=env, auth=Auth.of("open" if same else mode)
            )
        samples: dict[tuple[str, int], list[Sample]] = {}
        for round_ in range(rounds):
            for level in levels:
                order = MODES if (round_ + level) % 2 == 0 else MODES[::-1]
                for mode in order:
                    sample = _measure(services[mode], dbs[mode], mode, level, round_, seconds)
                    samples.setdefault((mode, level), []).append(sample)
        return {**_summary(samples, levels), "same": same}
    finally:
        for service in services.values():
            stop_service(service)
        for engine in engines.values():
            engine.dispose()
        for url in urls.values():
            drop_postgres_database(admin_url, url)


def _summary(samples: dict[tuple[str, int], list[Sample]], levels: list[int]) -> dict[str, object]:
    rows = []
    for level in levels:
        tokens, opened = samples["tokens", level], samples["open", level]
        rows.append(
            {
                "callers": level,
                "appends_per_second": {
                    mode: statistics.median(s.appends_per_second for s in samples[mode, level])
                    for mode in MODES
                },
                "cpu_ms_per_append": {
                    mode: statistics.median(s.cpu_ms_per_append for s in samples[mode, level])
                    for mode in MODES
                },
                "throughput_ratio": statistics.median(
                    t.appends_per_second / o.appends_per_second
                    for t, o in zip(tokens, opened, strict=True)
                ),
                "cpu_ratio": statistics.median(
                    t.cpu_ms_per_append / o.cpu_ms_per_append
                    for t, o in zip(tokens, opened, strict=True)
                ),
                "pairs": len(tokens),
            }
        )
    return {"rows": rows}


def render(summary: dict[str, object]) -> str:
    heading = "HTTP appends, tokens required against open (medians over back-to-back pairs):"
    if summary.get("same"):
        heading = "A/A: both sides served open, labelled as tokens and open (the harness's noise):"
    lines = [
        heading,
        "",
        "| callers | appends/s tokens | open | tokens / open | service CPU ms/append tokens "
        "| open | tokens / open |",
        "| --: | --: | --: | --: | --: | --: | --: |",
    ]
    verdicts = []
    rows = summary["rows"]
    assert isinstance(rows, list)
    for row in rows:
        rate, cpu = row["appends_per_second"], row["cpu_ms_per_append"]
        lines.append(
            f"| {row['callers']} | {rate['tokens']:,.0f} | {rate['open']:,.0f} "
            f"| {row['throughput_ratio']:.2f} | {cpu['tokens']:.2f} | {cpu['open']:.2f} "
            f"| {row['cpu_ratio']:.2f} |"
        )
        verdicts.append(
            f"[{'met' if row['throughput_ratio'] >= THROUGHPUT_TARGET else 'MISSED'}] "
            f"{row['callers']} callers: appends with tokens / open {row['throughput_ratio']:.2f} "
            f"(target >= {THROUGHPUT_TARGET})"
        )
        verdicts.append(
            f"[{'met' if row['cpu_ratio'] <= CPU_TARGET else 'MISSED'}] "
            f"{row['callers']} callers: service CPU per append with tokens / open "
            f"{row['cpu_ratio']:.2f} (target <= {CPU_TARGET})"
        )
    return "\n".join([*lines, "", *verdicts])


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench.auth_cost", description=__doc__)
    parser.add_argument("--levels", default="1,4,16", help="concurrent callers, e.g. 1,4,16")
    parser.add_argument("--rounds", type=int, default=8, help="pairs of cells per level")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per cell")
    parser.add_argument("--postgres-url", default=postgres_admin_url())
    parser.add_argument(
        "--serve-pythonpath", default="", help="PYTHONPATH of the served processes (a before)"
    )
    parser.add_argument(
        "--same",
        action="store_true",
        help="serve both sides open (A/A): the ratios then show the harness's noise",
    )
    args = parser.parse_args(argv)
    levels = [int(level) for level in args.levels.split(",")]
    summary = measure(
        args.postgres_url,
        levels,
        args.rounds,
        args.seconds,
        args.serve_pythonpath,
        same=args.same,
    )
    print(render(summary))
    return summary


if __name__ == "__main__":
    main()
