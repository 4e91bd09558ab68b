"""The checkout's wheels and fresh venvs, made by the pinned uv as the scripts make them.

The development venv is uv's, without pip: tests that build or install packages use the uv
of ``scripts/uv.sh`` (``UV`` in the environment, else ``.venv-uv/bin/uv``, else ``uv`` on
``PATH``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def uv() -> str:
    """The uv binary the scripts use."""
    for candidate in (os.environ.get("UV"), str(ROOT / ".venv-uv" / "bin" / "uv")):
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which("uv")
    if found is None:
        pytest.fail("uv is missing: run a script of scripts/ once (scripts/uv.sh installs it)")
    return found


def uv_environment() -> dict[str, str]:
    """The environment uv runs in: this machine's Python, never a download."""
    return {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}


def build_wheel(project: Path, out: Path) -> Path:
    """The wheel of one project of the checkout (``ROOT`` or ``ROOT / "clients/python"``)."""
    subprocess.run(
        [uv(), "build", "--quiet", "--wheel", "--out-dir", str(out), str(project)],
        check=True,
        capture_output=True,
        env=uv_environment(),
        timeout=300,
    )
    name = "runtime_store_client" if project != ROOT else "runtime_store"
    (wheel,) = out.glob(f"{name}-*.whl")
    return wheel


def fresh_venv(path: Path) -> Path:
    """A new venv without pip (uv installs into it); its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def install(python: Path, *requirements: str) -> None:
    """``uv pip install`` into the venv of ``python``."""
    subprocess.run(
        [uv(), "pip", "install", "--quiet", "--python", str(python), *requirements],
        check=True,
        capture_output=True,
        env=uv_environment(),
        timeout=300,
    )
