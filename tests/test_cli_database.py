"""Issue 33, item 2: the commands that open the database directly (``db``, ``tokens``,
``retention``) name the database they opened with its password hidden, never create a
SQLite file by accident, and give the advice that fits what they found. Each case runs the
real ``runtime-store`` command in a subprocess, from a directory that holds no database
(as an operator outside the repository root would)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from app.cli import cli
from app.storage.database.migrations import alembic_config, head_revision, upgrade_schema

KEY = "cli-database-test-key-0123456789abcdef"

#: Every command that opens the database directly and needs its current schema, with the
#: exit status it gives when it cannot use it.
COMMANDS = [
    (["db", "check"], 1),
    (["db", "verify"], 2),
    (["tokens", "list"], 2),
    (["tokens", "create", "--name", "ops"], 2),
    (["tokens", "revoke", "ops"], 2),
    (["retention", "run", "--dry-run"], 2),
]
IDS = [" ".join(args) for args, _ in COMMANDS]


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Done:
    """The command in this process (``CliRunner``: seconds saved per case), from ``cwd``,
    with no ``RUNTIME_STORE_*`` variable but the token key, an age and ``env``."""
    variables: dict[str, str | None] = {
        name: None for name in os.environ if name.startswith("RUNTIME_STORE_")
    }
    variables |= {
        "RUNTIME_STORE_TOKEN_KEY": KEY,
        "RUNTIME_STORE_RETENTION_ENDED_SESSIONS": "30d",
        **(env or {}),
    }
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(cli, args, env=variables)
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def run_main(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real ``runtime-store`` command, whose ``main`` turns database errors into a line."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_STORE_")}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=cwd,
        env={
            **base,
            "RUNTIME_STORE_TOKEN_KEY": KEY,
            "RUNTIME_STORE_RETENTION_ENDED_SESSIONS": "30d",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_error_line(done: Done | subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=IDS)
def test_a_missing_sqlite_file_is_one_line_naming_its_path_and_is_never_created(
    args: list[str], code: int, tmp_path: Path
) -> None:
    """With no URL set, the default file is relative to the working directory."""
    line = one_error_line(run(args, tmp_path), code)
    if args == ["tokens", "list"]:  # once through the real command too
        assert one_error_line(run_main(args, tmp_path), code) == line
    assert f"no SQLite database at {tmp_path / 'runtime-store.db'}" in line
    assert "RUNTIME_STORE_DATABASE_URL is not set" in line
    assert "RUNTIME_STORE_DATABASE_URL or --database-url" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=IDS)
def test_a_missing_file_named_by_the_variable_or_the_option_says_where_it_came_from(
    args: list[str], code: int, tmp_path: Path
) -> None:
    missing = tmp_path / "elsewhere" / "store.db"
    by_env = run(args, tmp_path, {"RUNTIME_STORE_DATABASE_URL": f"sqlite:///{missing}"})
    assert f"at {missing} (RUNTIME_STORE_DATABASE_URL)" in one_error_line(by_env, code)
    by_option = run([*args, "--database-url", f"sqlite:///{missing}"], tmp_path)
    assert f"at {missing} (--database-url)" in one_error_line(by_option, code)
    assert not missing.parent.exists()


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=IDS)
def test_an_empty_database_is_told_to_run_db_upgrade(
    args: list[str], code: int, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()  # a zero-byte file is an empty SQLite database
    line = one_error_line(run([*args, "--database-url", f"sqlite:///{empty}"], tmp_path), code)
    assert f"sqlite:///{empty} is empty" in line
    assert "`runtime-store db upgrade`" in line


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=IDS)
def test_a_file_that_is_not_a_sqlite_database_is_said_so(
    args: list[str], code: int, tmp_path: Path
) -> None:
    text = tmp_path / "notes.db"
    text.write_text("these are notes, not a database\n" * 10)
    line = one_error_line(run([*args, "--database-url", f"sqlite:///{text}"], tmp_path), code)
    assert f"{text} is not a SQLite database file" in line
    assert text.read_text().startswith("these are notes")


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=IDS)
def test_another_applications_database_is_not_a_runtime_store_database(
    args: list[str], code: int, tmp_path: Path
) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    line = one_error_line(run([*args, "--database-url", f"sqlite:///{other}"], tmp_path), code)
    assert "is not a runtime-store database (its tables: invoices)" in line


def test_db_upgrade_refuses_to_add_tables_to_another_applications_sqlite_file(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    line = one_error_line(
        run(["db", "upgrade", "--database-url", f"sqlite:///{other}"], tmp_path), 2
    )
    assert "is not a runtime-store database" in line
    with sqlite3.connect(other) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["invoices"]


def test_a_schema_behind_head_is_told_to_upgrade_and_a_newer_one_to_use_its_version(
    tmp_path: Path,
) -> None:
    from alembic import command

    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    upgrade_schema(url)
    command.downgrade(alembic_config(url), "0015")
    behind = one_error_line(run(["tokens", "list", "--database-url", url], tmp_path), 2)
    assert f"has schema 0015, this runtime-store needs {head_revision()}" in behind
    assert "run `runtime-store db upgrade`" in behind

    upgrade_schema(url)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
    newer = one_error_line(run(["db", "check", "--database-url", url], tmp_path), 1)
    assert "has schema 0099_from_the_future, newer than this runtime-store knows" in newer
    refused = one_error_line(run(["db", "upgrade", "--database-url", url], tmp_path), 2)
    assert "use the runtime-store version that wrote it" in refused


def test_db_upgrade_says_it_creates_a_new_file_and_every_command_names_the_database(
    tmp_path: Path,
) -> None:
    env = {"RUNTIME_STORE_DATABASE_URL": "sqlite:///./store.db"}
    created = run(["db", "upgrade"], tmp_path, env)
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == f"schema at {head_revision()}"
    shown = f"sqlite:///{tmp_path / 'store.db'}"  # relative paths made absolute
    assert created.stderr.splitlines() == [
        f"created a new SQLite database at {tmp_path / 'store.db'}",
        f"database: {shown}",
    ]
    for args, _ in COMMANDS:
        done = run(args, tmp_path, env)
        assert done.stderr.splitlines()[0] == f"database: {shown}", (args, done.stderr)
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("args", [["db", "verify"], ["tokens", "list"]], ids=" ".join)
def test_a_database_that_does_not_answer_is_named_with_its_password_hidden(
    args: list[str], tmp_path: Path
) -> None:
    url = "postgresql://postgres:s3cret-pass@127.0.0.1:1/x"
    done = run_main([*args, "--database-url", url], tmp_path)
    line = one_error_line(done, 2)
    assert "the database postgresql://postgres:***@127.0.0.1:1/x cannot be used" in line
    assert "s3cret-pass" not in done.stderr


def test_a_postgresql_database_is_named_with_its_password_hidden(
    postgres_url: str, tmp_path: Path
) -> None:
    with_password = sa.make_url(postgres_url).set(password="ignored-by-trust")
    url = with_password.render_as_string(hide_password=False)
    done = run(["db", "check", "--database-url", url], tmp_path)
    assert done.returncode == 0, done.stderr
    hidden = with_password.render_as_string(hide_password=True)
    assert done.stderr.splitlines() == [f"database: {hidden}"]
    assert "ignored-by-trust" not in done.stderr + done.stdout
