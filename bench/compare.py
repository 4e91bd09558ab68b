"""``python -m bench.compare OLD.json NEW.json``: throughput and p99 change per row."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .auth import mode_of

Key = tuple[str, str, int]


def _rows(path: Path) -> tuple[dict[str, Any], dict[Key, dict[str, Any]]]:
    document = json.loads(path.read_text())
    rows = {(row["operation"], row["backend"], row["workers"]): row for row in document["rows"]}
    return document["meta"], rows


def _change(old: float, new: float) -> str:
    return f"{(new - old) / old * 100:+.0f}%" if old else "-"


def compare(old_path: Path, new_path: Path) -> str:
    old_meta, old = _rows(old_path)
    new_meta, new = _rows(new_path)
    lines = [
        f"old: {old_path.name} (commit {old_meta.get('git_commit', '?')[:10]}, "
        f"auth {mode_of(old_meta)})",
        f"new: {new_path.name} (commit {new_meta.get('git_commit', '?')[:10]}, "
        f"auth {mode_of(new_meta)})",
        "",
        "| operation | backend | workers | ops/s old | ops/s new | change | p99 ms old | "
        "p99 ms new |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for key in [key for key in new if key in old]:
        before, after = old[key], new[key]
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {before['ops_per_s']:.0f} | "
            f"{after['ops_per_s']:.0f} | {_change(before['ops_per_s'], after['ops_per_s'])} | "
            f"{before['p99_ms']:.2f} | {after['p99_ms']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(compare(args.old, args.new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
