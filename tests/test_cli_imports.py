"""Issue 29, item 1: the commands that only talk HTTP, and every ``--help``, start without
the service's heavy packages: neither SQLAlchemy, Alembic nor FastAPI is imported (they
cost seconds of CPU on a loaded machine). Each case runs the real command in a fresh
interpreter and lists the modules it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app.operator_cli import RunStatusOption, SessionStatusOption
from runtime_store_client import RunStatus, SessionStatus

#: Never needed by a command that talks HTTP, nor to build the commands' help.
HEAVY = ("sqlalchemy", "alembic", "fastapi", "psycopg", "app.storage", "app.main")

#: Runs the ``runtime-store`` command with the given arguments, then prints the top-level
#: packages and the ``app`` modules it imported, whatever its exit.
_DRIVER = """
import json, sys
sys.argv = ["runtime-store", *sys.argv[1:]]
try:
    from app.cli import main
    main()
except SystemExit:
    pass
finally:
    names = {name.split(".")[0] for name in sys.modules}
    names |= {name for name in sys.modules if name.startswith("app.")}
    print("\\nMODULES " + json.dumps(sorted(names)))
"""


def _imported(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args],
        # Nothing answers on port 1: an operator command fails fast, after its imports.
        env={**os.environ, "RUNTIME_STORE_URL": "http://127.0.0.1:1", "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    marker = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    assert marker, done.stdout + done.stderr
    return set(json.loads(marker[-1].removeprefix("MODULES ")))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["sessions", "--help"],
        ["runs", "--help"],
        ["sessions", "list", "--help"],
        ["serve", "--help"],
        ["db", "--help"],
    ],
    ids=" ".join,
)
def test_help_imports_no_heavy_package_nor_the_client(args: list[str]) -> None:
    imported = _imported(*args)
    assert not imported & {*HEAVY, "runtime_store_client", "rich", "httpx"}, sorted(imported)


@pytest.mark.parametrize(
    "args",
    [["sessions", "list"], ["runs", "list", "--status", "failed"], ["runs", "show", "r-1"]],
    ids=" ".join,
)
def test_commands_that_talk_http_import_neither_sqlalchemy_alembic_nor_fastapi(
    args: list[str],
) -> None:
    imported = _imported(*args)
    assert "runtime_store_client" in imported  # the command did run: it tried the service
    assert not imported & set(HEAVY), sorted(imported)


def test_the_status_options_are_the_clients_statuses() -> None:
    """The options' own enums (the client is not imported to build the commands)."""
    assert [status.value for status in SessionStatusOption] == [s.value for s in SessionStatus]
    assert [status.value for status in RunStatusOption] == [s.value for s in RunStatus]
