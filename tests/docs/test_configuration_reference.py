"""Issue 48: docs/configuration.md is generated from the settings and the command line's
options, names every ``RUNTIME_STORE_*`` variable a user may set, and ``serve`` warns about
one that is no setting (the real command, in a subprocess)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.config_reference import (
    GROUP_TEXT,
    NOT_SETTINGS,
    OPTION_GROUPS,
    REGENERATE,
    configuration_markdown,
    unknown_variable_warnings,
    variables,
)
from app.settings import GROUPS, Settings, env_name, setting_group
from tests.conftest import start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "configuration.md"
#: A variable's name as code and docs write it (``RUNTIME_STORE_RETENTION_*`` is a family).
NAME = re.compile(r"RUNTIME_STORE_[A-Z0-9_]*[A-Z0-9]\b(?!\*)")
#: Where a variable can be read or told to a user.
SOURCES = ("app", "clients", "bench", "tests", "scripts", "docs", "Dockerfile", "README.md")
#: Not variables: a prefix a test matches (tests/observability/test_serve.py).
PREFIXES = {"RUNTIME_STORE_LOG"}


def test_the_committed_reference_matches_the_settings() -> None:
    assert REFERENCE.read_text() == configuration_markdown(), (
        f"docs/configuration.md is stale; regenerate it with: {REGENERATE}"
    )


def test_every_setting_has_a_group_and_a_description() -> None:
    assert set(GROUP_TEXT) == set(GROUPS)
    assert set(OPTION_GROUPS.values()) <= set(GROUPS)
    for name, info in Settings.model_fields.items():
        assert setting_group(name) in GROUPS
        assert (info.description or "").endswith("."), name


def _named_in_the_repository() -> set[str]:
    found: set[str] = set()
    for source in SOURCES:
        path = ROOT / source
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            if file == Path(__file__) or "_generated" in file.parts:
                continue  # this file misspells variables on purpose
            if file.suffix not in ("", ".py", ".md", ".sh"):
                continue
            if file.suffix == "" and file.parent.name not in ("scripts", ROOT.name):
                continue
            found |= set(NAME.findall(file.read_text(errors="replace")))
    return found - PREFIXES


def test_every_variable_the_code_reads_is_in_the_reference_or_not_a_setting() -> None:
    documented = {row.name for row in variables()}
    assert not documented & set(NOT_SETTINGS)
    named = _named_in_the_repository()
    # Names the code and docs use that nothing reads would be warned about: each is either
    # documented or a variable of the tests and benchmarks (no removed setting is named).
    assert named - documented - set(NOT_SETTINGS) == set()
    assert set(NOT_SETTINGS) <= named  # no stale exclusion
    assert {env_name(name) for name in Settings.model_fields} <= documented
    for name in ("RUNTIME_STORE_PORT", "RUNTIME_STORE_WORKERS", "RUNTIME_STORE_LOG_FORMAT"):
        assert name in documented
    assert "RUNTIME_STORE_TOKEN_KEY" in documented
    assert "RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN" in documented
    assert "RUNTIME_STORE_URL" in documented


def test_every_variable_of_the_tests_and_benchmarks_is_in_the_development_guide() -> None:
    guide = (ROOT / "docs" / "development.md").read_text()
    missing = [name for name in NOT_SETTINGS if f"`{name}" not in guide]
    assert missing == []


def test_the_reference_gives_each_variable_its_default_and_value() -> None:
    rows = {row.name: row for row in variables()}
    assert rows["RUNTIME_STORE_DATABASE_URL"].default == "`sqlite:///./runtime-store.db`"
    assert rows["RUNTIME_STORE_MAX_BODY_BYTES"].default == "`8388608` (8 MiB)"
    assert rows["RUNTIME_STORE_WEBHOOK_DELIVERY_RETENTION"].default == "`3d`"
    assert rows["RUNTIME_STORE_PORT"].default == "`8000`"
    assert rows["RUNTIME_STORE_TOKEN_KEY"].default == "unset"
    assert rows["RUNTIME_STORE_TAIL_HEARTBEAT_SECONDS"].value == "number > 0, ≤ 15"
    assert rows["RUNTIME_STORE_ACCESS_LOG"].meaning.endswith(
        "Also `serve --access-log/--no-access-log`."
    )


def test_unknown_variables_are_named_with_the_closest_setting() -> None:
    environ = {
        "RUNTIME_STORE_READ_DATABASE_URL": "postgresql://db2/rs",
        "RUNTIME_STORE_TOKEN_KEY": "set",
        "RUNTIME_STORE_TEST_POSTGRES_URL": "postgresql://test/rs",
        "RUNTIME_STORE_ZZZ": "1",
        "HOME": "/root",
    }
    assert unknown_variable_warnings(environ) == [
        "warning: RUNTIME_STORE_READ_DATABASE_URL is not a setting; did you mean "
        "RUNTIME_STORE_READ_DATABASE_URLS?",
        "warning: RUNTIME_STORE_ZZZ is not a setting; the settings are listed in "
        "docs/configuration.md",
    ]


def test_config_reference_writes_the_file(tmp_path: Path) -> None:
    written = tmp_path / "configuration.md"
    done = subprocess.run(
        [sys.executable, "-m", "app", "config-reference", "--output", str(written)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert written.read_text() == REFERENCE.read_text()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            "RUNTIME_STORE_READ_DATABASE_URL",
            "warning: RUNTIME_STORE_READ_DATABASE_URL is not a setting; did you mean "
            "RUNTIME_STORE_READ_DATABASE_URLS?",
        ),
        (
            "RUNTIME_STORE_MAX_BODY_BYTE",
            "warning: RUNTIME_STORE_MAX_BODY_BYTE is not a setting; did you mean "
            "RUNTIME_STORE_MAX_BODY_BYTES?",
        ),
    ],
)
def test_serve_warns_of_an_unknown_variable_and_serves(
    given: str, said: str, tmp_path: Path
) -> None:
    """The real ``serve``: one line on stderr naming the closest setting, and it serves."""
    from app.storage import upgrade_schema

    url = f"sqlite:///{tmp_path / 'warn.db'}"
    upgrade_schema(url)
    # The tests' own RUNTIME_STORE_* variables (NOT_SETTINGS) are passed on too: not warned.
    server = start_server(url, tmp_path / "serve.log", env={given: "x"})
    try:
        assert server.process.poll() is None  # it serves
    finally:
        stop_server(server)
    warnings = [line for line in server.log().splitlines() if "is not a setting" in line]
    assert warnings == [said]
