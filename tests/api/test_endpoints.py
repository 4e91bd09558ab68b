"""Every operation of the HTTP API answers its happy path with the exact contract JSON.

CONTRACT.md section 8: POST bodies hold the method's keyword arguments minus the path's,
results are the section 7 result types with the same field names, enums as strings.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from runtime_store_client import RunStatus
from tests.api.wire_builders import (
    T0_WIRE,
    append,
    append_body,
    appended,
    assert_times,
    cancellation_body,
    child_start_body,
    create_session,
    end_session,
    finish,
    note,
    ok,
    one_shot_body,
    one_shot_child_body,
    root_start_body,
    run_meta,
    start_one_shot,
    start_root,
    suspend,
    suspension_body,
    terminal_body,
    wire_checkpoint,
    wire_record,
    wire_time,
)
from tests.contract.builders import (
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
)

LATER = wire_time(at(1000))


def load_run(api: TestClient, run_id: str) -> dict[str, object]:
    body: dict[str, object] = ok(api.get(f"/v1/runs/{run_id}"))
    assert_times(body, "started_at", "updated_at")
    return body


# --- sessions --------------------------------------------------------------------------


def test_create_session_returns_the_new_active_session(api: TestClient) -> None:
    response = api.post("/v1/sessions", json={"session_id": "s-1", "created_at": T0_WIRE})
    assert ok(response) == {
        "id": "s-1",
        "status": "active",
        "created_at": T0_WIRE,
        "ended_at": None,
    }


def test_create_session_again_returns_the_stored_session_with_its_original_time(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    response = api.post("/v1/sessions", json={"session_id": "s-1", "created_at": LATER})
    assert ok(response) == {
        "id": "s-1",
        "status": "active",
        "created_at": T0_WIRE,
        "ended_at": None,
    }


def test_load_session_returns_the_session(api: TestClient) -> None:
    create_session(api, "s-1")
    assert ok(api.get("/v1/sessions/s-1")) == {
        "id": "s-1",
        "status": "active",
        "created_at": T0_WIRE,
        "ended_at": None,
    }


def test_end_session_ends_it_and_keeps_the_first_end_time(api: TestClient) -> None:
    create_session(api, "s-1")
    ended = {"id": "s-1", "status": "ended", "created_at": T0_WIRE, "ended_at": LATER}
    assert ok(api.post("/v1/sessions/s-1/end", json={"ended_at": LATER})) == ended
    again = api.post("/v1/sessions/s-1/end", json={"ended_at": wire_time(at(5000))})
    assert ok(again) == ended
    assert ok(api.get("/v1/sessions/s-1")) == ended


def test_load_session_status_answers_active_then_ended(api: TestClient) -> None:
    create_session(api, "s-1")
    assert ok(api.get("/v1/sessions/s-1/status")) == {"status": "active"}
    end_session(api, "s-1")
    assert ok(api.get("/v1/sessions/s-1/status")) == {"status": "ended"}


def test_purge_session_answers_204_and_leaves_a_tombstone(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    finish(api, run)
    end_session(api, "s-1")

    ok(api.delete("/v1/sessions/s-1"), 204)
    ok(api.delete("/v1/sessions/s-1"), 204)  # purging a purged session is a no-op

    assert api.get("/v1/sessions/s-1").json()["code"] == "session_purged"
    assert api.get(f"/v1/runs/{run.run_id}").json()["code"] == "session_purged"


def test_list_session_runs_returns_the_runs_with_their_meta(api: TestClient) -> None:
    create_session(api, "s-1")
    first = start_root(api, "s-1", run_id="run-a", labels={"site": "one"})
    second = start_root(api, "s-1", run_id="run-b")
    body = ok(api.get("/v1/sessions/s-1/runs"))
    assert body == {
        "runs": [
            run_meta(first, str(load_run(api, "run-a")["updated_at"])),
            run_meta(second, str(load_run(api, "run-b")["updated_at"])),
        ],
        "next_cursor": "",
    }


def test_list_session_run_records_returns_every_record_in_commit_order(api: TestClient) -> None:
    create_session(api, "s-1")
    first = start_root(api, "s-1", run_id="run-a")
    second = start_root(api, "s-1", run_id="run-b")
    note_a = note(first, "note-a")
    append(api, note_a)
    assert ok(api.get("/v1/sessions/s-1/records")) == {
        "records": [
            wire_record(started_record(first), record_id="1"),
            wire_record(started_record(second), record_id="1"),
            wire_record(note_a, record_id="2"),
        ],
        "next_cursor": "",
    }


# --- starts ----------------------------------------------------------------------------


def test_start_root_run_in_an_active_session_proceeds(api: TestClient) -> None:
    create_session(api, "s-1")
    run = run_start(session_id="s-1", labels={"site": "one"})
    response = api.post("/v1/runs/root-starts", json=root_start_body(run))
    assert ok(response) == {
        "outcome": "proceed",
        "run_status": "running",
        "started": appended("1"),
        "canceled": None,
    }
    meta = load_run(api, run.run_id)
    assert meta == run_meta(run, str(meta["updated_at"]))
    assert ok(api.get(f"/v1/runs/{run.run_id}/records")) == {
        "records": [wire_record(started_record(run), record_id="1")],
        "next_cursor": "",
    }


def test_start_root_run_exact_retry_returns_the_original_ids(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    response = api.post("/v1/runs/root-starts", json=root_start_body(run))
    assert ok(response) == {
        "outcome": "proceed",
        "run_status": "running",
        "started": appended("1", inserted=False),
        "canceled": None,
    }


@pytest.mark.parametrize("retry_labels", [None, {}, "absent"])
def test_start_root_run_treats_absent_null_and_empty_labels_as_equal(
    api: TestClient, retry_labels: object
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = root_start_body(run)
    if retry_labels == "absent":
        del body["run"]["labels"]
    else:
        body["run"]["labels"] = retry_labels
    assert ok(api.post("/v1/runs/root-starts", json=body))["started"] == appended(
        "1", inserted=False
    )
    assert ok(api.get(f"/v1/runs/{run.run_id}"))["labels"] == {}


def test_start_root_run_in_an_ended_session_stops_with_a_canceled_run(api: TestClient) -> None:
    create_session(api, "s-1")
    end_session(api, "s-1")
    run = run_start(session_id="s-1")
    response = api.post("/v1/runs/root-starts", json=root_start_body(run))
    assert ok(response) == {
        "outcome": "stop",
        "run_status": "canceled",
        "started": appended("1", session_status="ended"),
        "canceled": appended("2", session_status="ended"),
    }
    meta = load_run(api, run.run_id)
    assert meta == run_meta(
        run,
        str(meta["updated_at"]),
        status="canceled",
        start_outcome="stop",
        cancellation_reason="session_ended",
    )
    assert ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"] == [
        wire_record(started_record(run), record_id="1"),
        wire_record(canceled_record(run), record_id="2"),
    ]


def test_start_root_run_continuing_a_suspended_run_proceeds(api: TestClient) -> None:
    create_session(api, "s-1")
    predecessor = start_root(api, "s-1")
    suspend(api, predecessor)
    successor = run_start(session_id="s-1", predecessor_run_id=predecessor.run_id)
    response = api.post("/v1/runs/root-starts", json=root_start_body(successor))
    assert ok(response) == {
        "outcome": "proceed",
        "run_status": "running",
        "started": appended("1"),
        "canceled": None,
    }
    records = ok(api.get(f"/v1/runs/{successor.run_id}/records"))["records"]
    assert records == [wire_record(started_record(successor), record_id="1")]
    assert f'"PredecessorRunID":"{predecessor.run_id}"' in records[0]["payload"]


def test_start_child_run_links_on_the_parent_and_starts_the_child(api: TestClient) -> None:
    create_session(api, "s-1")
    parent = start_root(api, "s-1")
    child = run_start(session_id="s-1", parent_run_id=parent.run_id, agent_id="agent-2")
    response = api.post("/v1/runs/child-starts", json=child_start_body(parent, child))
    assert ok(response) == {
        "outcome": "proceed",
        "run_status": "running",
        "parent_record": appended("2"),
        "started": appended("1"),
        "canceled": None,
    }
    meta = load_run(api, child.run_id)
    assert meta == run_meta(child, str(meta["updated_at"]))
    assert ok(api.get(f"/v1/runs/{parent.run_id}/records"))["records"] == [
        wire_record(started_record(parent), record_id="1"),
        wire_record(link_record(parent, child), record_id="2"),
    ]
    assert ok(api.get(f"/v1/runs/{child.run_id}/records"))["records"] == [
        wire_record(started_record(child), record_id="1")
    ]


def test_start_one_shot_run_is_sessionless(api: TestClient) -> None:
    run = run_start(labels={"site": "one"})
    response = api.post("/v1/runs/one-shot-starts", json=one_shot_body(run))
    assert ok(response) == {"run_status": "running", "record": appended("1", session_status=None)}
    meta = load_run(api, run.run_id)
    assert meta == run_meta(run, str(meta["updated_at"]))
    assert meta["session_id"] == ""


def test_start_one_shot_child_run_links_on_the_sessionless_parent(api: TestClient) -> None:
    parent = start_one_shot(api)
    child = run_start(parent_run_id=parent.run_id)
    response = api.post("/v1/runs/one-shot-child-starts", json=one_shot_child_body(parent, child))
    assert ok(response) == {
        "run_status": "running",
        "parent_record": appended("2", session_status=None),
        "started": appended("1", session_status=None),
    }
    meta = load_run(api, child.run_id)
    assert meta == run_meta(child, str(meta["updated_at"]))
    assert ok(api.get(f"/v1/runs/{parent.run_id}/records"))["records"][1] == wire_record(
        link_record(parent, child), record_id="2"
    )


# --- records ---------------------------------------------------------------------------


def test_append_run_record_assigns_the_next_id_and_an_exact_retry_keeps_it(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    rec = note(run, "note-1")
    url = f"/v1/runs/{run.run_id}/records"
    assert ok(api.post(url, json=append_body(rec))) == appended("2")
    assert ok(api.post(url, json=append_body(rec))) == appended("2", inserted=False)


def test_append_run_record_ignores_an_id_sent_by_the_client(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    rec = note(run, "note-1")
    body = append_body(rec)
    body["record"]["id"] = "99"
    assert ok(api.post(f"/v1/runs/{run.run_id}/records", json=body)) == appended("2")
    assert ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"][1] == wire_record(
        rec, record_id="2"
    )


def test_list_run_records_returns_the_records_oldest_first(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    first, second = note(run, "note-1"), note(run, "note-2", payload=b'{"n":2}')
    append(api, first)
    append(api, second)
    assert ok(api.get(f"/v1/runs/{run.run_id}/records")) == {
        "records": [
            wire_record(started_record(run), record_id="1"),
            wire_record(first, record_id="2"),
            wire_record(second, record_id="3"),
        ],
        "next_cursor": "",
    }


# --- lifecycle -------------------------------------------------------------------------


def test_record_run_cancellation_stores_the_reason_and_keeps_the_run_running(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    response = api.post(f"/v1/runs/{run.run_id}/cancellation", json=cancellation_body(run))
    assert ok(response) == appended("2")
    meta = load_run(api, run.run_id)
    assert meta == run_meta(run, str(meta["updated_at"]), cancellation_reason="user_requested")
    assert ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"][1] == wire_record(
        cancellation_record(run), record_id="2"
    )


def test_record_run_suspension_stores_the_checkpoint_and_suspends(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    response = api.post(f"/v1/runs/{run.run_id}/suspension", json=suspension_body(run))
    assert ok(response) == appended("2")
    meta = load_run(api, run.run_id)
    assert meta == run_meta(run, str(meta["updated_at"]), status="suspended")
    assert ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"][1] == wire_record(
        suspended_record(run), record_id="2"
    )


def test_load_run_suspension_returns_the_checkpoint_as_base64(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    suspend(api, run)
    assert ok(api.get(f"/v1/runs/{run.run_id}/suspension")) == {
        "id": "cp-1",
        "data": "AAFvcGFxdWX/",
    }
    assert wire_checkpoint(checkpoint()) == {"id": "cp-1", "data": "AAFvcGFxdWX/"}


@pytest.mark.parametrize("status", [RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED])
def test_record_run_terminal_sets_the_final_status(api: TestClient, status: RunStatus) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1", labels={"site": "one"})
    response = api.post(f"/v1/runs/{run.run_id}/terminal", json=terminal_body(run, status))
    assert ok(response) == appended("2")
    meta = load_run(api, run.run_id)
    assert meta == run_meta(run, str(meta["updated_at"]), status=str(status))
    assert ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"][1] == wire_record(
        terminal_record(run, status), record_id="2"
    )


def test_repair_run_suspension_stores_then_confirms_then_reports_a_different_terminal(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    url = f"/v1/runs/{run.run_id}/suspension/repair"
    assert ok(api.post(url, json=suspension_body(run))) == {
        "outcome": "stored",
        "status": "suspended",
        "record": appended("2"),
    }
    assert ok(api.post(url, json=suspension_body(run))) == {
        "outcome": "already_stored",
        "status": "suspended",
        "record": appended("2", inserted=False),
    }
    done = start_root(api, "s-1")
    finish(api, done)
    response = api.post(f"/v1/runs/{done.run_id}/suspension/repair", json=suspension_body(done))
    assert ok(response) == {"outcome": "different_terminal", "status": "completed", "record": None}


def test_repair_run_terminal_stores_then_confirms_then_reports_a_different_terminal(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    url = f"/v1/runs/{run.run_id}/terminal/repair"
    body = terminal_body(run, RunStatus.COMPLETED)
    assert ok(api.post(url, json=body)) == {
        "outcome": "stored",
        "status": "completed",
        "record": appended("2"),
    }
    assert ok(api.post(url, json=body)) == {
        "outcome": "already_stored",
        "status": "completed",
        "record": appended("2", inserted=False),
    }
    failed = terminal_body(run, RunStatus.FAILED, event_key="terminal-2")
    assert ok(api.post(url, json=failed)) == {
        "outcome": "different_terminal",
        "status": "completed",
        "record": None,
    }


def test_load_run_returns_the_run_meta(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1", labels={"site": "one", "tier": "gold"})
    body = ok(api.get(f"/v1/runs/{run.run_id}"))
    assert_times(body, "updated_at")
    assert body == {
        "run_id": run.run_id,
        "agent_id": "agent-1",
        "session_id": "s-1",
        "parent_run_id": "",
        "status": "running",
        "start_outcome": "proceed",
        "started_at": T0_WIRE,
        "updated_at": body["updated_at"],
        "labels": {"site": "one", "tier": "gold"},
        "cancellation_reason": "",
        "successor_run_id": "",
        "start_kind": "engine",
        "seed_end_id": "",
    }


# --- memory ----------------------------------------------------------------------------


def test_append_memory_events_answers_204_and_load_memory_returns_them_in_order(
    api: TestClient,
) -> None:
    url = "/v1/agents/agent-1/runs/run-1/memory"
    events = [
        {
            "type": "user_message",
            "timestamp": T0_WIRE,
            "data": {"text": "héllo", "parts": [1, {"k": None}]},
            "labels": {"lang": "fr"},
        },
        {"type": "assistant_message", "timestamp": LATER},
    ]
    ok(api.post(url, json={"events": events}), 204)
    ok(api.post(url, json={"events": []}), 204)
    assert ok(api.get(url)) == {
        "agent_id": "agent-1",
        "run_id": "run-1",
        "events": [
            events[0],
            {"type": "assistant_message", "timestamp": LATER, "data": {}, "labels": {}},
        ],
    }
    other_agent = ok(api.get("/v1/agents/agent-2/runs/run-1/memory"))
    assert other_agent == {"agent_id": "agent-2", "run_id": "run-1", "events": []}


def test_memory_idempotency_key_reused_with_other_events_is_409_event_conflict(
    api: TestClient,
) -> None:
    url = "/v1/agents/agent-1/runs/run-idem/memory"
    first = {"events": [{"type": "user_message", "timestamp": T0_WIRE, "data": {"n": 1}}]}
    other = {"events": [{"type": "user_message", "timestamp": T0_WIRE, "data": {"n": 2}}]}
    headers = {"Idempotency-Key": "call-1"}
    ok(api.post(url, json=first, headers=headers), 204)
    ok(api.post(url, json=first, headers=headers), 204)
    refused = api.post(url, json=other, headers=headers)
    assert refused.status_code == 409
    assert refused.json()["code"] == "event_conflict"
    assert [e["data"] for e in ok(api.get(url))["events"]] == [{"n": 1}]


def test_load_memory_of_an_unknown_run_is_an_empty_snapshot(api: TestClient) -> None:
    assert ok(api.get("/v1/agents/agent-1/runs/nope/memory")) == {
        "agent_id": "agent-1",
        "run_id": "nope",
        "events": [],
    }
