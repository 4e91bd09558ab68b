"""Issue 19, item 1: a database the command cannot use is one line and exit 2, never a
traceback. Those cases run the real ``runtime-store`` command in a subprocess (its ``main``
makes the line); the commands' own refusals run in this process."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.storage import upgrade_schema
from tests.conftest import free_port

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/x"


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["db", "check", "--database-url", UNREACHABLE], {}, "Connection refused"),
        (
            ["db", "check", "--database-url", "mysql://x"],
            {},
            "runtime-store speaks SQLite and PostgreSQL, not mysql://",
        ),
        (
            ["db", "check", "--database-url", "foo://x"],
            {},
            "--database-url=foo://x is not valid: runtime-store speaks SQLite and PostgreSQL",
        ),
        (
            ["db", "upgrade", "--database-url", "sqlite:////nonexist/dir/x.db"],
            {},
            "no directory /nonexist/dir for the SQLite file (--database-url)",
        ),
        (["tokens", "list"], {"RUNTIME_STORE_DATABASE_URL": UNREACHABLE}, "Connection refused"),
        (
            ["serve", "--port", str(free_port())],
            {"RUNTIME_STORE_DATABASE_URL": UNREACHABLE},
            "Connection refused",
        ),
    ],
    ids=["unreachable", "mysql", "unknown-scheme", "no-directory", "tokens", "serve"],
)
def test_an_unusable_database_is_one_line_and_exit_2(
    args: list[str], env: dict[str, str], says: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    assert says in lines[0]
    assert "Traceback" not in done.stderr


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def _run_here(*args: str, env: dict[str, str] | None = None) -> Done:
    """The command in this process (``CliRunner``: a second of imports saved per call),
    for refusals the command makes itself rather than ``main``."""
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return Done(result.exit_code, result.stdout, result.stderr)


def test_db_check_on_a_missing_sqlite_file_does_not_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    done = _run("db", "check", "--database-url", f"sqlite:///{missing}")
    assert done.returncode == 1
    assert "runtime-store db upgrade" in done.stderr
    assert not missing.exists()
    # A database that does not answer is named, and only its password hidden.
    unreachable = _run("db", "check", "--database-url", UNREACHABLE)
    assert f"the database {UNREACHABLE} cannot be used" in unreachable.stderr


def test_openapi_to_standard_output_with_a_dash(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "openapi", "--output", "-"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("openapi: 3.1.0")
    assert not (tmp_path / "-").exists()


def test_revoking_an_unknown_or_revoked_token_is_an_error(tmp_path: Path) -> None:
    env = {
        "RUNTIME_STORE_DATABASE_URL": f"sqlite:///{tmp_path / 'tokens.db'}",
        "RUNTIME_STORE_TOKEN_KEY": "k" * 32,
    }
    assert _run_here("db", "upgrade", env=env).returncode == 0
    assert (
        _run_here("tokens", "create", "--name", "ops", "--role", "admin", env=env).returncode == 0
    )
    first = _run_here("tokens", "revoke", "ops", env=env)
    assert (first.returncode, first.stdout.strip()) == (0, "revoked ops")
    assert first.stderr.strip() == f"database: sqlite:///{tmp_path / 'tokens.db'}"
    again = _run_here("tokens", "revoke", "ops", env=env)
    assert again.returncode == 1
    assert "already revoked" in again.stderr
    unknown = _run_here("tokens", "revoke", "nobody", env=env)
    assert unknown.returncode == 1
    assert "no token named 'nobody'" in unknown.stderr


def test_tokens_take_a_database_url_and_list_times_as_the_api_writes_them(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'tokens.db'}"
    env = {"RUNTIME_STORE_TOKEN_KEY": "k" * 32, "RUNTIME_STORE_DATABASE_URL": "sqlite://"}
    assert _run_here("db", "upgrade", "--database-url", url).returncode == 0
    created = _run_here("tokens", "create", "--name", "ci", "--database-url", url, env=env)
    assert created.returncode == 0, created.stderr
    listed = _run_here("tokens", "list", "--database-url", url, env=env)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.strip().splitlines()
    assert header.split() == ["NAME", "ROLE", "STATE", "CREATED", "REVOKED"]
    name, role, state, created_at = row.split()
    assert (name, role, state) == ("ci", "worker", "active")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created_at)


def test_serve_on_a_schema_newer_than_it_knows_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    upgrade_schema(url)
    with sqlite3.connect(tmp_path / "newer.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_later'")
    done = _run("serve", "--port", str(free_port()), env={"RUNTIME_STORE_DATABASE_URL": url})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    assert "newer than this runtime-store knows" in lines[0]
    assert "Traceback" not in done.stderr
