"""The served app over a real socket (``runtime-store serve`` on 127.0.0.1), both backends."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from runtime_store_client import RunStatus
from tests.api.wire_builders import (
    T0_WIRE,
    append_body,
    appended,
    assert_problem,
    note,
    ok,
    root_start_body,
    terminal_body,
    unchanged,
    wire_record,
    wire_time,
)
from tests.conftest import LiveServer
from tests.contract.builders import at, run_start, started_record, terminal_record


@pytest.fixture
def http(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.base_url, timeout=10) as client:
        yield client


def test_a_session_lifecycle_over_a_real_socket_ends_in_session_purged(
    http: httpx.Client,
) -> None:
    created = http.post("/v1/sessions", json={"session_id": "s-live", "created_at": T0_WIRE})
    assert ok(created) == {
        "id": "s-live",
        "status": "active",
        "created_at": T0_WIRE,
        "ended_at": None,
    }

    run = run_start(session_id="s-live", labels={"site": "one"})
    started = http.post("/v1/runs/root-starts", json=root_start_body(run))
    assert ok(started) == {
        "outcome": "proceed",
        "run_status": "running",
        "started": appended("1"),
        "canceled": None,
    }

    rec = note(run, "note-1", payload='{"text":"café 😀","esc":"\\u00e9"}'.encode())
    assert ok(http.post(f"/v1/runs/{run.run_id}/records", json=append_body(rec))) == appended("2")

    expected_records = [
        wire_record(started_record(run), record_id="1"),
        wire_record(rec, record_id="2"),
    ]
    assert ok(http.get(f"/v1/runs/{run.run_id}/records")) == {
        "records": expected_records,
        "next_cursor": "",
    }
    assert ok(http.get("/v1/sessions/s-live/records")) == {
        "records": expected_records,
        "next_cursor": "",
    }

    finished = http.post(
        f"/v1/runs/{run.run_id}/terminal", json=terminal_body(run, RunStatus.COMPLETED)
    )
    assert ok(finished) == appended("3")
    assert ok(http.get(f"/v1/runs/{run.run_id}"))["status"] == "completed"

    ended_at = wire_time(at(60_000))
    assert ok(http.post("/v1/sessions/s-live/end", json={"ended_at": ended_at})) == {
        "id": "s-live",
        "status": "ended",
        "created_at": T0_WIRE,
        "ended_at": ended_at,
    }
    ok(http.delete("/v1/sessions/s-live"), 204)

    assert_problem(http.get("/v1/sessions/s-live"), 410, "session_purged", session_id="s-live")
    assert_problem(http.get(f"/v1/runs/{run.run_id}"), 410, "session_purged", run_id=run.run_id)
    again = http.post(
        f"/v1/runs/{run.run_id}/terminal",
        json={
            "status": "completed",
            "record": wire_record(terminal_record(run, RunStatus.COMPLETED)),
        },
    )
    assert_problem(again, 410, "session_purged", run_id=run.run_id)


def test_a_conflict_over_a_real_socket_is_a_409_problem(http: httpx.Client) -> None:
    ok(http.post("/v1/sessions", json={"session_id": "s-live", "created_at": T0_WIRE}))
    run = run_start(session_id="s-live")
    ok(http.post("/v1/runs/root-starts", json=root_start_body(run)))
    ok(http.post(f"/v1/runs/{run.run_id}/records", json=append_body(note(run, "note-1"))))

    changed = append_body(note(run, "note-1", payload=b'{"note":"changed"}'))
    with unchanged(http, [run.run_id], "s-live"):
        response = http.post(
            f"/v1/runs/{run.run_id}/records", json=changed, headers={"X-Request-ID": "live-409"}
        )
        body = assert_problem(
            response, 409, "event_conflict", run_id=run.run_id, event_key="note-1"
        )
    assert body["request_id"] == "live-409"


def test_an_invalid_request_over_a_real_socket_is_a_422_problem(http: httpx.Client) -> None:
    with unchanged(http, session_id="s-live"):
        response = http.post(
            "/v1/sessions",
            json={"session_id": "s-live", "created_at": "2026-11-30T01:02:03.4561Z", "x": 1},
        )
        assert_problem(
            response,
            422,
            "invalid_argument",
            errors=[("body.created_at", "value_error"), ("body.x", "extra_forbidden")],
        )
