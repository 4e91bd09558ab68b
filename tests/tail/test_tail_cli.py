"""``runtime-store runs tail`` and ``sessions tail``: the real command, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from runtime_store_client import HttpStore, RunStatus
from tests.conftest import LiveServer
from tests.contract.builders import (
    all_records,
    at,
    new_session,
    record,
    start_root,
    terminal_record,
)


def tail_command(server: LiveServer, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", *args, "--url", server.base_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_runs_tail_prints_each_record_as_a_json_line_until_the_run_is_over(
    live_server: LiveServer,
) -> None:
    with HttpStore(live_server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        command = tail_command(live_server, "runs", "tail", run.run_id, "--json")
        for n in range(3):
            store.append_run_record(record(run, event_key=f"step-{n}", payload=b'{"n":1}'))
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
        out, err = command.communicate(timeout=30)
        expected = all_records(store, run.run_id)
    assert command.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(line["id"], line["event_key"], line["type"]) for line in lines] == [
        (r.id, r.event_key, r.type) for r in expected
    ]
    assert lines[1]["payload"] == '{"n":1}'
    assert err == "stream ended: reason finished, status completed\n"


def test_sessions_tail_prints_one_line_per_record_and_stops_at_purge(
    live_server: LiveServer,
) -> None:
    with HttpStore(live_server.base_url) as store:
        session_id = new_session(store).id
        run = start_root(store, session_id).run
        command = tail_command(live_server, "sessions", "tail", session_id)
        store.append_run_record(record(run, event_key="note", payload=b'{"text":"hello"}'))
        store.record_run_terminal(
            run.run_id, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED)
        )
        store.end_session(session_id, at(1000))
        assert command.stdout is not None
        # Printed as they arrive: the three lines come before the stream ends.
        printed = [command.stdout.readline() for _ in range(3)]
        store.purge_session(session_id)
        rest, err = command.communicate(timeout=30)
        out = "".join(printed) + rest
    assert command.returncode == 0, err
    lines = out.splitlines()
    assert [line.split("  ")[2:5] for line in lines] == [
        ["1", "run_started", "start"],
        ["2", "planner_note", "note"],
        ["3", "run_completed", "terminal"],
    ]
    assert all(line.split("  ")[1] == run.run_id for line in lines)
    assert lines[1].endswith('{"text":"hello"}')
    assert err == "stream ended: reason purged\n"


def test_tail_of_an_unknown_run_is_one_line_and_exit_1(live_server: LiveServer) -> None:
    command = tail_command(live_server, "runs", "tail", "no-such-run")
    out, err = command.communicate(timeout=30)
    assert command.returncode == 1
    assert out == ""
    assert err.startswith("error: run_not_found: ")
    assert err.count("\n") == 1
