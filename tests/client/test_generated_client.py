"""The generated layer is exactly what the pinned generator makes of openapi.yaml."""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "clients/python/runtime_store_client/_generated"
REGENERATE = "./scripts/generate-client"


def _differences(left: Path, right: Path) -> list[str]:
    comparison = filecmp.dircmp(left, right, ignore=["__pycache__"])
    found = [f"only in committed: {name}" for name in comparison.left_only]
    found += [f"only in regenerated: {name}" for name in comparison.right_only]
    found += [f"differs: {name}" for name in comparison.diff_files]
    for name, sub in comparison.subdirs.items():
        found += [
            item.replace(": ", f": {name}/", 1)
            for item in _differences(Path(sub.left), Path(sub.right))
        ]
    # dircmp compares by stat signature first; compare contents to be sure.
    for name in comparison.same_files:
        if (left / name).read_bytes() != (right / name).read_bytes():
            found.append(f"differs: {name}")
    return found


def test_committed_generated_client_matches_openapi_yaml(tmp_path: Path) -> None:
    fresh = tmp_path / "_generated"
    subprocess.run([str(ROOT / "scripts/generate-client"), str(fresh)], check=True, cwd=ROOT)
    differences = _differences(GENERATED, fresh)
    assert not differences, (
        f"the generated client is stale; regenerate it with: {REGENERATE}\n"
        + "\n".join(differences)
    )
