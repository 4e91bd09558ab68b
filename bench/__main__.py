"""``python -m bench``: measure runtime-store on this machine (docs/performance.md)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from . import auth, side_by_side
from .config import PARTS, Config, postgres_admin_url
from .report import Report
from .run import run
from .servers import postgres_answers
from .workloads import WORKLOADS


def _mode(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Config:
    """The configuration of the mode asked for (default, smoke, large, side by side)."""
    factory = Config.smoke if args.smoke else Config.large if args.large else Config.default
    config = factory(args.postgres_url, args.server_workers)
    if args.quick and not args.side_by_side:
        parser.error("--quick goes with --side-by-side")
    if args.side_by_side:
        config = side_by_side.configure(config, quick=args.quick)
    return config


def parse(argv: list[str]) -> tuple[Config, Path | None]:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--smoke", action="store_true", help="tiny scale, seconds (tests use it)")
    mode.add_argument("--large", action="store_true", help="also page through 10M records")
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="only the rows of the HTTP path next to SqlStore and the raw floor, on "
        "PostgreSQL (appends, batches of 16, pages of 100; a few minutes)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="with --side-by-side: shorter cells (~1.5 min)"
    )
    parser.add_argument("--duration", type=float, help="measured seconds per cell")
    parser.add_argument("--warmup", type=float, help="unmeasured seconds before each cell")
    parser.add_argument("--levels", help="concurrent workers, e.g. 1,4,16")
    parser.add_argument(
        "--server-workers",
        type=int,
        default=0,
        help="runtime-store serve --workers (default 0: as serve decides)",
    )
    parser.add_argument(
        "--postgres-url",
        default=postgres_admin_url(),
        help="server to create the benchmark database on "
        "(default: RUNTIME_STORE_BENCH_POSTGRES_URL, RUNTIME_STORE_TEST_POSTGRES_URL or local)",
    )
    parser.add_argument(
        "--only",
        help="grid operations to measure, comma-separated (e.g. append_run_record); "
        "implies --parts grid",
    )
    parser.add_argument(
        "--backends",
        help="grid backends to measure besides the ceiling, comma-separated "
        "(e.g. http/postgres,sqlstore/postgres)",
    )
    parser.add_argument(
        "--parts", help=f"parts to run, comma-separated (default all: {','.join(PARTS)})"
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="JSON results path (default bench/results/<time>-<auth>.json; with --auth both "
        "one file per mode, named <stem>-tokens and <stem>-open)",
    )
    auth.add_argument(parser, both=True)
    args = parser.parse_args(argv)
    config = replace(_mode(parser, args), auth=args.auth)
    if args.duration is not None:
        config = replace(config, duration=args.duration)
    if args.warmup is not None:
        config = replace(config, warmup=args.warmup)
    if args.levels:
        config = replace(config, levels=tuple(int(level) for level in args.levels.split(",")))
    if args.only:
        config = replace(config, operations=tuple(args.only.split(",")), parts=("grid",))
    if args.backends:
        config = replace(config, backends=tuple(args.backends.split(",")))
    if args.parts:
        parts = tuple(args.parts.split(","))
        if not set(parts) <= set(PARTS):
            parser.error(f"unknown parts in {parts}; known: {PARTS}")
        config = replace(config, parts=parts)
    known = {name for name, _ in WORKLOADS}
    unknown = [name for name in config.operations if name not in known]
    if unknown:
        parser.error(f"unknown operations {unknown}; known: {sorted(known)}")
    return config, args.output


def sittings(config: Config) -> list[Config]:
    """What one invocation runs: ``config``, or for ``--auth both`` a sitting in each mode."""
    if config.auth != "both":
        return [config]
    return [replace(config, auth=mode) for mode in auth.MODES]


def output_path(output: Path | None, config: Config, several: bool) -> Path | None:
    if output is None or not several:
        return output
    return output.with_name(f"{output.stem}-{config.auth}{output.suffix}")


def main(argv: list[str] | None = None) -> int:
    config, output = parse(sys.argv[1:] if argv is None else argv)
    problem = postgres_answers(config.postgres_url)
    if problem is not None:
        print(f"PostgreSQL does not answer at {config.postgres_url}: {problem}", file=sys.stderr)
        return 2
    planned = sittings(config)
    reports: dict[str, Report] = {}
    for sitting in planned:
        report, path = run(sitting, output_path(output, sitting, len(planned) > 1))
        reports[sitting.auth] = report
        print(report.text())
        if side_by_side.asked(sitting):
            print(
                f"\nside by side, {auth.describe(sitting.auth)}; ratios to the raw floor of "
                "the same sitting:\n"
            )
            print(side_by_side.table(report.rows))
        print(f"\nresults written to {path}")
    if len(reports) > 1:
        print(
            "\ntokens against open: HTTP cells of the grid, each mode a sitting of its own, "
            "one after the other:\n"
        )
        print(side_by_side.auth_table(reports["tokens"].rows, reports["open"].rows))
    errors = sum(row.errors for report in reports.values() for row in report.rows)
    if errors:
        print(f"{errors} operations failed: see the notes column", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
