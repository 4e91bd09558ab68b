"""``runtime-store sessions|runs …`` against a live service, with the real client."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.domain.tokens import Role
from app.operator_cli import EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE, parse_when
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from app.storage.database.migrations import upgrade_schema
from runtime_store_client import HttpStore, RunStatus
from tests.conftest import LiveServer, free_port, start_server, stop_server
from tests.contract.builders import (
    canceled_record,
    record,
    run_start,
    started_record,
    terminal_record,
)

runner = CliRunner()
TOKEN_KEY = "operator-cli-test-key-0123456789abcdef"


def run_cli(server: LiveServer | None, *args: str) -> tuple[int, str, str]:
    url = server.base_url if server else f"http://127.0.0.1:{free_port()}"
    result = runner.invoke(cli, [*args, "--url", url])
    return result.exit_code, result.stdout, result.stderr


def _seed(server: LiveServer) -> dict[str, str]:
    """Two sessions (one ended), a failed run of the last minute with a label, a running
    one, and a record."""
    now = datetime.now(UTC).replace(microsecond=0)
    with HttpStore(server.base_url) as store:
        store.create_session("sess-old", now - timedelta(hours=3))
        store.create_session("sess-new", now - timedelta(minutes=1))
        store.end_session("sess-old", now - timedelta(hours=2))
        failed = run_start(session_id="sess-new", started_at=now, labels={"team": "search"})
        store.start_root_run(failed, started_record(failed), canceled_record(failed))
        store.append_run_record(record(failed, event_key="note", payload=b'{"step":1}'))
        store.record_run_terminal(
            failed.run_id, RunStatus.FAILED, terminal_record(failed, RunStatus.FAILED)
        )
        running = run_start(session_id="sess-new", started_at=now - timedelta(hours=5))
        store.start_root_run(running, started_record(running), canceled_record(running))
    return {"failed": failed.run_id, "running": running.run_id}


def test_sessions_list_prints_a_table_and_json_lines_newest_first(
    live_server: LiveServer,
) -> None:
    _seed(live_server)
    code, out, _ = run_cli(live_server, "sessions", "list")
    assert code == 0
    assert out.index("sess-new") < out.index("sess-old")
    assert "SESSION" in out
    code, out, _ = run_cli(live_server, "sessions", "list", "--json", "--status", "ended")
    assert code == 0
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["sess-old"]


def test_one_page_by_default_and_every_page_with_all(live_server: LiveServer) -> None:
    _seed(live_server)
    code, out, err = run_cli(live_server, "sessions", "list", "--json", "--limit", "1")
    assert code == 0
    assert len(out.splitlines()) == 1
    assert "--cursor" in err
    code, out, _ = run_cli(live_server, "sessions", "list", "--json", "--limit", "1", "--all")
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["sess-new", "sess-old"]


def test_runs_list_finds_the_failed_runs_of_the_last_hour(live_server: LiveServer) -> None:
    ids = _seed(live_server)
    code, out, _ = run_cli(
        live_server, "runs", "list", "--status", "failed", "--started-after", "1h", "--json"
    )
    assert code == 0
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == [ids["failed"]]
    code, out, _ = run_cli(live_server, "runs", "list", "--label", "team:search", "--json")
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == [ids["failed"]]
    code, out, _ = run_cli(live_server, "runs", "list", "--session", "sess-new")
    assert ids["failed"] in out
    assert ids["running"] in out


def test_runs_show_and_records(live_server: LiveServer) -> None:
    ids = _seed(live_server)
    code, out, _ = run_cli(live_server, "runs", "show", ids["failed"], "--json")
    assert code == 0
    assert json.loads(out)["status"] == "failed"
    assert json.loads(out)["start_kind"] == "engine"
    code, out, _ = run_cli(live_server, "runs", "show", ids["failed"])
    assert re.search(r"start_kind\s+engine", out)
    code, out, _ = run_cli(live_server, "runs", "records", ids["failed"], "--json")
    assert [json.loads(line)["type"] for line in out.splitlines()] == [
        "run_started",
        "planner_note",
        "run_completed",
    ]
    code, out, _ = run_cli(live_server, "runs", "records", ids["failed"])
    assert '{"step":1}' in out


def test_runs_records_type_shows_only_records_of_the_types_named(live_server: LiveServer) -> None:
    ids = _seed(live_server)
    code, out, _ = run_cli(
        live_server, "runs", "records", ids["failed"], "--type", "planner_note", "--json"
    )
    assert code == 0
    assert [json.loads(line)["type"] for line in out.splitlines()] == ["planner_note"]
    code, out, _ = run_cli(
        live_server,
        "runs",
        "records",
        ids["failed"],
        "--type",
        "run_started",
        "--type",
        "run_completed",
        "--json",
    )
    assert [json.loads(line)["type"] for line in out.splitlines()] == [
        "run_started",
        "run_completed",
    ]
    code, out, _ = run_cli(live_server, "runs", "records", ids["failed"], "--type", "nothing")
    assert code == 0
    assert out.strip() == "no records"


def test_sessions_show_end_and_purge(live_server: LiveServer) -> None:
    ids = _seed(live_server)
    code, out, _ = run_cli(live_server, "sessions", "show", "sess-new", "--json")
    assert code == 0
    shown = json.loads(out)
    assert shown["status"] == "active"
    assert {run["run_id"] for run in shown["runs"]} == set(ids.values())
    code, out, _ = run_cli(live_server, "sessions", "end", "sess-old")
    assert code == 0
    assert "ended" in out
    code, _, err = run_cli(live_server, "sessions", "purge", "sess-old")
    assert code == EXIT_USAGE
    assert "--yes" in err
    code, out, _ = run_cli(live_server, "sessions", "purge", "sess-old", "--yes")
    assert (code, out.strip()) == (0, "session sess-old purged")
    code, _, err = run_cli(live_server, "sessions", "show", "sess-old")
    assert code == EXIT_REFUSED
    assert err.startswith("error: session_purged")


@pytest.mark.parametrize(
    ("args", "code", "starts"),
    [
        (["sessions", "show", "nope"], EXIT_REFUSED, "error: session_not_found"),
        (["runs", "show", "nope"], EXIT_REFUSED, "error: run_not_found"),
        (["sessions", "purge", "sess-new", "--yes"], EXIT_REFUSED, "error: session_active"),
        (["runs", "list", "--label", "nocolon"], EXIT_USAGE, "error: --label"),
        (["runs", "list", "--started-after", "yesterday"], EXIT_USAGE, "error: --started-after"),
        (["runs", "list", "--cursor", "forged"], EXIT_REFUSED, "error: invalid_argument"),
    ],
)
def test_every_failure_is_one_line_and_a_non_zero_exit(
    live_server: LiveServer, args: list[str], code: int, starts: str
) -> None:
    _seed(live_server)
    exit_code, out, err = run_cli(live_server, *args)
    assert exit_code == code
    assert err.startswith(starts)
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in out + err


def test_an_unreachable_service_is_one_line_and_exit_3() -> None:
    code, out, err = run_cli(None, "sessions", "list")
    assert code == EXIT_UNREACHABLE
    assert err.startswith("error: cannot reach http://127.0.0.1:")
    assert len(err.strip().splitlines()) == 1
    assert out == ""


def test_an_age_is_that_long_before_now_to_the_millisecond() -> None:
    before = datetime.now(UTC)
    when = parse_when("90m", "--x")
    assert when is not None
    assert timedelta(minutes=89) < before - when < timedelta(minutes=91)
    assert when.microsecond % 1000 == 0
    assert parse_when("2026-11-30T01:02:03.456Z", "--x") == datetime(
        2026, 11, 30, 1, 2, 3, 456000, tzinfo=UTC
    )


def test_a_missing_or_weak_token_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """401 without a token, 403 for a reader that tries to purge."""
    url = f"sqlite:///{tmp_path / 'auth.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        reader = Tokens(engine, TOKEN_KEY).create("reader", Role.READER)
    finally:
        engine.dispose()
    server = start_server(url, tmp_path / "auth.log", env={"RUNTIME_STORE_TOKEN_KEY": TOKEN_KEY})
    try:
        code, _, err = run_cli(server, "sessions", "list")
        assert code == EXIT_REFUSED
        assert err.startswith("error: unauthenticated")
        assert len(err.strip().splitlines()) == 1
        code, out, _ = run_cli(server, "sessions", "list", "--token", reader, "--json")
        assert (code, out) == (0, "")
        code, _, err = run_cli(server, "sessions", "purge", "s-1", "--yes", "--token", reader)
        assert code == EXIT_REFUSED
        assert err.startswith("error: permission_denied")
        # The token is valid: it is told which role the command needs, not that it is none.
        assert "needs a token of the admin role" in err
        assert "not an active token" not in err
    finally:
        stop_server(server)


def test_a_label_key_asked_twice_matches_nothing_as_the_api_answers(
    live_server: LiveServer,
) -> None:
    ids = _seed(live_server)
    code, out, _ = run_cli(live_server, "runs", "list", "--label", "team:search", "--json")
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == [ids["failed"]]
    args = ("runs", "list", "--label", "team:search", "--label", "team:other", "--json")
    code, out, _ = run_cli(live_server, *args)
    assert (code, out) == (0, "")
    api = httpx.get(
        f"{live_server.base_url}/v1/runs",
        params=[("label", "team:search"), ("label", "team:other")],
    )
    assert api.json()["runs"] == []


def test_labels_print_as_key_colon_value_the_notation_used_everywhere_else(
    live_server: LiveServer,
) -> None:
    """``--label team:search`` finds the run, the API and the console write ``team:search``:
    the table and ``runs show`` print it so, never ``team=search``."""
    ids = _seed(live_server)
    code, out, _ = run_cli(live_server, "runs", "list", "--label", "team:search")
    assert code == 0
    assert "team:search" in out
    code, out, _ = run_cli(live_server, "runs", "show", ids["failed"])
    assert code == 0
    assert re.search(r"labels\s+team:search", out)
    assert "team=search" not in out
