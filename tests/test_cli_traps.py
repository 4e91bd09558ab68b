"""Issue 48: the command line's traps, each one line that names the fix, run as a user runs
them (the real ``runtime-store`` command in a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.storage import upgrade_schema
from runtime_store_client import HttpStore
from tests.conftest import LiveServer, free_port, start_server, stop_server
from tests.contract.builders import new_session, start_root

EVENTS = "run.finished, run.suspended, session.ended, session.purged"
TOKEN_KEY = "cli-traps-test-key-0123456789abcdef"


def runtime_store(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_STORE_")}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env={**inherited, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_webhooks_create_with_the_webhook_as_url_names_the_argument() -> None:
    """``--url`` is the service's, as for every operator command: the natural mistake is one
    line with the command to type instead, nothing sent anywhere."""
    done = runtime_store(
        "webhooks", "create", "--url", "https://hooks.example/rs", "--event", "run.finished"
    )
    assert one_line(done, 2) == (
        "error: --url names the service, not the webhook: give the webhook's URL as the "
        "argument: runtime-store webhooks create https://hooks.example/rs --event run.finished "
        "(and the service's as --url or RUNTIME_STORE_URL if it is not http://127.0.0.1:8000)"
    )
    done = runtime_store("webhooks", "create", "--event", "run.finished")
    assert "give the webhook's URL as the argument" in one_line(done, 2)


@pytest.mark.parametrize(
    ("events", "said"),
    [
        (["--event", "run.finished", "--event", "run.done"], "'run.done' is not a webhook event"),
        ([], "name at least one"),
    ],
    ids=["unknown", "none"],
)
def test_webhook_events_are_listed_when_one_is_wrong_or_missing(
    events: list[str], said: str
) -> None:
    done = runtime_store("webhooks", "create", "https://hooks.example/rs", *events)
    assert one_line(done, 2) == f"error: --event: {said}; the events are {EVENTS}"


@pytest.mark.parametrize("command", [["db", "check"], ["tokens", "list"]], ids=" ".join)
def test_a_file_path_as_database_url_names_its_sqlite_url(
    command: list[str], tmp_path: Path
) -> None:
    done = runtime_store(*command, "--database-url", "./runtime-store.db", cwd=tmp_path)
    assert one_line(done, 2) == (
        "error: --database-url=./runtime-store.db is not valid: it is not a database URL (no "
        "scheme://): for the SQLite file ./runtime-store.db, write sqlite:///./runtime-store.db"
    )
    done = runtime_store(
        *command, cwd=tmp_path, env={"RUNTIME_STORE_DATABASE_URL": "/var/lib/rs.db"}
    )
    assert one_line(done, 2).endswith("write sqlite:////var/lib/rs.db")
    assert list(tmp_path.iterdir()) == []


def test_a_service_that_cannot_be_reached_names_url_and_its_variable() -> None:
    port = free_port()
    done = runtime_store("runs", "list", env={"RUNTIME_STORE_URL": f"http://127.0.0.1:{port}"})
    line = one_line(done, 3)
    assert line.startswith(f"error: cannot reach http://127.0.0.1:{port} (ConnectError")
    assert line.endswith("is the service running there? Point --url or RUNTIME_STORE_URL at it")
    assert done.stdout == ""


def test_a_missing_or_unknown_token_names_token_and_its_variable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'auth.db'}"
    upgrade_schema(url)
    server = start_server(url, tmp_path / "auth.log", env={"RUNTIME_STORE_TOKEN_KEY": TOKEN_KEY})
    try:
        done = runtime_store("sessions", "list", "--url", server.base_url)
        assert one_line(done, 1) == (
            "error: unauthenticated: a bearer token is required: pass --token or set "
            "RUNTIME_STORE_TOKEN (`runtime-store tokens create` makes one)"
        )
        done = runtime_store(
            "whoami", "--url", server.base_url, env={"RUNTIME_STORE_TOKEN": "rst_" + "x" * 40}
        )
        line = one_line(done, 1)
        assert line.startswith("error: unauthenticated: ")
        assert line.endswith(
            f"the token of --token or RUNTIME_STORE_TOKEN is not an active token of "
            f"{server.base_url}"
        )
    finally:
        stop_server(server)


def test_runs_wait_says_on_stderr_that_it_timed_out(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        run = start_root(store, new_session(store).id).run
    done = runtime_store(
        "runs", "wait", run.run_id, "--timeout", "0.5", "--url", live_server.base_url
    )
    assert one_line(done, 4) == (
        f"timed out: run {run.run_id} is still running, not finished, after 0.5 s; wait "
        "longer with --timeout"
    )
    assert json.loads(done.stdout)["status"] == "running"  # the meta, as before


def test_tokens_list_has_a_header_and_says_when_there_are_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tokens.db'}"
    upgrade_schema(url)
    env = {"RUNTIME_STORE_DATABASE_URL": url, "RUNTIME_STORE_TOKEN_KEY": TOKEN_KEY}
    empty = runtime_store("tokens", "list", env=env)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout == "no tokens: create one with `runtime-store tokens create --name NAME`\n"
    assert runtime_store("tokens", "create", "--name", "ops", env=env).returncode == 0
    listed = runtime_store("tokens", "list", env=env)
    header, row = listed.stdout.strip().splitlines()
    assert header.split() == ["NAME", "ROLE", "STATE", "CREATED", "REVOKED"]
    assert row.split()[:3] == ["ops", "worker", "active"]
    (document,) = [
        json.loads(line)
        for line in runtime_store("tokens", "list", "--json", env=env).stdout.splitlines()
    ]
    assert (document["name"], document["state"], document["revoked_at"]) == ("ops", "active", None)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["sessions", "list", "--status", "ended"], "no sessions"),
        (["runs", "list", "--agent", "nobody"], "no runs"),
        (["webhooks", "list"], "no webhooks"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else "",
)
def test_an_empty_list_says_so_rather_than_a_header_alone(
    live_server: LiveServer, args: list[str], said: str
) -> None:
    done = runtime_store(*args, "--url", live_server.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{said}\n"
    json_lines = runtime_store(*args, "--json", "--url", live_server.base_url)
    assert (json_lines.returncode, json_lines.stdout) == (0, "")
