"""Every error reachable over HTTP is an RFC 9457 problem with its contract code and status.

CONTRACT.md section 6: ``application/problem+json`` with ``type``, ``title``, ``status``,
``detail``, ``code``, ``request_id`` and, where relevant, ``run_id``, ``session_id``,
``event_key`` and ``errors``. Section 2.1: a rejected write changes nothing, which every
write test here checks through the GET endpoints.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from runtime_store_client import RunStatus
from tests.api.wire_builders import (
    T0_WIRE,
    Json,
    append,
    append_body,
    assert_problem,
    cancellation_body,
    child_start_body,
    create_session,
    end_session,
    finish,
    note,
    one_shot_child_body,
    root_start_body,
    start_one_shot,
    start_root,
    suspend,
    suspension_body,
    terminal_body,
    unchanged,
    wire_record,
)
from tests.contract.builders import checkpoint, record, run_start, started_record


def post(api: TestClient, path: str, body: Any) -> httpx.Response:
    response: httpx.Response = api.post(path, json=body)
    return response


# --- invalid_argument: request validation (422 with the field list) ---------------------


def test_a_time_with_sub_millisecond_precision_is_invalid_and_names_the_field(
    api: TestClient,
) -> None:
    with unchanged(api, session_id="s-1"):
        response = post(
            api, "/v1/sessions", {"session_id": "s-1", "created_at": "2026-11-30T01:02:03.4561Z"}
        )
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.created_at", "value_error")]
        )


def test_a_payload_that_is_not_a_string_is_invalid_and_names_the_field(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = append_body(note(run, "note-1"))
    body["record"]["payload"] = {"note": "thinking"}
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", body)
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.record.payload", "value_error")]
        )


def test_checkpoint_data_that_is_not_base64_is_invalid_and_names_the_field(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = suspension_body(run)
    body["checkpoint"]["data"] = "not base64!"
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/suspension", body)
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.checkpoint.data", "value_error")]
        )


def test_an_unknown_enum_value_is_invalid_and_names_the_field(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = terminal_body(run, RunStatus.COMPLETED)
    body["status"] = "done"
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/terminal", body)
        assert_problem(response, 422, "invalid_argument", errors=[("body.status", "enum")])


def test_a_missing_field_is_invalid_and_names_the_field(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = append_body(note(run, "note-1"))
    del body["record"]["event_key"]
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", body)
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.record.event_key", "missing")]
        )


def test_an_unknown_field_is_invalid_and_names_the_field(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = append_body(note(run, "note-1"))
    body["record"]["color"] = "red"
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", body)
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.record.color", "extra_forbidden")]
        )


def test_a_body_that_is_not_json_is_invalid(api: TestClient) -> None:
    with unchanged(api, session_id="s-1"):
        response = api.post(
            "/v1/sessions", content=b"{not json", headers={"content-type": "application/json"}
        )
        # The field names the body and the offset where decoding failed.
        assert_problem(response, 422, "invalid_argument", errors=[("body.1", "json_invalid")])


# --- invalid_argument: store validation --------------------------------------------------


def test_a_cursor_the_store_did_not_issue_is_invalid(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    response = api.get(f"/v1/runs/{run.run_id}/records", params={"cursor": "garbage"})
    assert_problem(response, 422, "invalid_argument")


def test_a_record_whose_run_differs_from_the_path_is_invalid(api: TestClient) -> None:
    create_session(api, "s-1")
    target = start_root(api, "s-1")
    other = start_root(api, "s-1")
    with unchanged(api, [target.run_id, other.run_id], "s-1"):
        response = post(api, f"/v1/runs/{target.run_id}/records", append_body(note(other, "n")))
        assert_problem(response, 422, "invalid_argument", run_id=target.run_id)


def test_a_lifecycle_record_type_through_append_is_invalid(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    rec = record(run, event_key="sneaky", type="run_completed", payload=b'{"status":"success"}')
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", append_body(rec))
        body = assert_problem(response, 422, "invalid_argument")
        assert "lifecycle" in body["detail"]


def test_a_start_record_that_does_not_match_the_start_is_invalid(api: TestClient) -> None:
    create_session(api, "s-1")
    run = run_start(session_id="s-1", labels={"site": "one"})
    body = root_start_body(run)
    body["started"]["payload"] = '{"ParentRunID":"","PredecessorRunID":"","Labels":null}'
    with unchanged(api, [run.run_id], "s-1"):
        assert_problem(post(api, "/v1/runs/root-starts", body), 422, "invalid_argument")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("event_key", ""),
        ("type", ""),
        ("agent_id", ""),
        ("payload", ""),
        ("payload", "not json"),
        ("payload", "{} {}"),
        ("payload", '{"a":1,}'),
        ("timestamp", "0001-01-01T00:00:00.000Z"),
    ],
    ids=[
        "empty-event-key",
        "empty-type",
        "empty-agent",
        "empty-payload",
        "payload-not-json",
        "payload-two-values",
        "payload-trailing-comma",
        "zero-timestamp",
    ],
)
def test_a_record_breaking_a_record_rule_is_invalid(
    api: TestClient, field: str, value: str
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = append_body(note(run, "note-1"))
    body["record"][field] = value
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", body)
        assert_problem(response, 422, "invalid_argument")


def test_a_memory_append_with_an_unknown_event_type_is_invalid_and_appends_nothing(
    api: TestClient,
) -> None:
    url = "/v1/agents/agent-1/runs/run-1/memory"
    assert (
        api.post(url, json={"events": [{"type": "thinking", "timestamp": T0_WIRE}]}).status_code
        == 204
    )
    before = api.get(url).json()
    events = [
        {"type": "user_message", "timestamp": T0_WIRE},
        {"type": "shouting", "timestamp": T0_WIRE},
    ]
    assert_problem(post(api, url, {"events": events}), 422, "invalid_argument")
    assert api.get(url).json() == before


# --- 404 -------------------------------------------------------------------------------


def test_an_unknown_session_is_session_not_found(api: TestClient) -> None:
    assert_problem(api.get("/v1/sessions/nope"), 404, "session_not_found", session_id="nope")
    assert_problem(api.get("/v1/sessions/nope/status"), 404, "session_not_found", session_id="nope")
    assert_problem(api.get("/v1/sessions/nope/runs"), 404, "session_not_found", session_id="nope")
    assert_problem(
        api.get("/v1/sessions/nope/records"), 404, "session_not_found", session_id="nope"
    )


def test_ending_or_purging_an_unknown_session_is_session_not_found(api: TestClient) -> None:
    with unchanged(api, session_id="nope"):
        response = post(api, "/v1/sessions/nope/end", {"ended_at": T0_WIRE})
        assert_problem(response, 404, "session_not_found", session_id="nope")
        response = api.delete("/v1/sessions/nope")
        assert_problem(response, 404, "session_not_found", session_id="nope")


def test_a_root_start_in_an_unknown_session_is_session_not_found(api: TestClient) -> None:
    run = run_start(session_id="nope")
    with unchanged(api, [run.run_id], "nope"):
        response = post(api, "/v1/runs/root-starts", root_start_body(run))
        assert_problem(response, 404, "session_not_found", session_id="nope")


def test_an_unknown_run_is_run_not_found(api: TestClient) -> None:
    assert_problem(api.get("/v1/runs/nope"), 404, "run_not_found", run_id="nope")
    assert_problem(api.get("/v1/runs/nope/records"), 404, "run_not_found", run_id="nope")
    assert_problem(api.get("/v1/runs/nope/suspension"), 404, "run_not_found", run_id="nope")


def test_a_write_to_an_unknown_run_is_run_not_found(api: TestClient) -> None:
    run = run_start(session_id="s-1", run_id="nope")
    create_session(api, "s-1")
    with unchanged(api, ["nope"], "s-1"):
        response = post(api, "/v1/runs/nope/records", append_body(note(run, "n")))
        assert_problem(response, 404, "run_not_found", run_id="nope")
        response = post(api, "/v1/runs/nope/terminal", terminal_body(run, RunStatus.COMPLETED))
        assert_problem(response, 404, "run_not_found", run_id="nope")


def test_a_child_start_under_an_unknown_parent_is_run_not_found(api: TestClient) -> None:
    create_session(api, "s-1")
    parent = run_start(session_id="s-1", run_id="ghost")
    child = run_start(session_id="s-1", parent_run_id="ghost")
    with unchanged(api, ["ghost", child.run_id], "s-1"):
        response = post(api, "/v1/runs/child-starts", child_start_body(parent, child))
        assert_problem(response, 404, "run_not_found", run_id="ghost")


def test_a_run_without_a_checkpoint_is_run_suspension_not_found(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    response = api.get(f"/v1/runs/{run.run_id}/suspension")
    assert_problem(response, 404, "run_suspension_not_found", run_id=run.run_id)


# --- 410 -------------------------------------------------------------------------------


def purged_session_with_a_run(api: TestClient) -> str:
    create_session(api, "s-1")
    run = start_root(api, "s-1", run_id="run-1")
    finish(api, run)
    end_session(api, "s-1")
    assert api.delete("/v1/sessions/s-1").status_code == 204
    return run.run_id


def test_reading_a_purged_session_or_its_run_is_session_purged(api: TestClient) -> None:
    run_id = purged_session_with_a_run(api)
    for path in ("", "/status", "/runs", "/records"):
        response = api.get(f"/v1/sessions/s-1{path}")
        assert_problem(response, 410, "session_purged", session_id="s-1")
    for path in ("", "/records", "/suspension"):
        response = api.get(f"/v1/runs/{run_id}{path}")
        assert_problem(response, 410, "session_purged", run_id=run_id)


def test_writing_to_a_purged_session_or_its_run_is_session_purged(api: TestClient) -> None:
    run_id = purged_session_with_a_run(api)
    run = run_start(session_id="s-1", run_id=run_id)
    with unchanged(api, [run_id], "s-1"):
        response = post(api, "/v1/sessions", {"session_id": "s-1", "created_at": T0_WIRE})
        assert_problem(response, 410, "session_purged", session_id="s-1")
        response = post(api, "/v1/sessions/s-1/end", {"ended_at": T0_WIRE})
        assert_problem(response, 410, "session_purged", session_id="s-1")
        response = post(api, f"/v1/runs/{run_id}/records", append_body(note(run, "late")))
        assert_problem(response, 410, "session_purged", run_id=run_id)
        response = post(api, "/v1/runs/root-starts", root_start_body(run))
        assert_problem(response, 410, "session_purged", session_id="s-1", run_id=run_id)


# --- 409: session state -----------------------------------------------------------------


def test_creating_an_ended_session_is_session_ended(api: TestClient) -> None:
    create_session(api, "s-1")
    end_session(api, "s-1")
    with unchanged(api, session_id="s-1"):
        response = post(api, "/v1/sessions", {"session_id": "s-1", "created_at": T0_WIRE})
        assert_problem(response, 409, "session_ended", session_id="s-1")


def test_purging_an_active_session_is_session_active(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    with unchanged(api, [run.run_id], "s-1"):
        response = api.delete("/v1/sessions/s-1")
        assert_problem(response, 409, "session_active", session_id="s-1")


def test_purging_a_session_with_a_running_run_is_session_has_active_runs(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    end_session(api, "s-1")
    with unchanged(api, [run.run_id], "s-1"):
        response = api.delete("/v1/sessions/s-1")
        assert_problem(
            response, 409, "session_has_active_runs", session_id="s-1", run_id=run.run_id
        )


# --- 409: run conflicts -----------------------------------------------------------------


def test_a_changed_start_retry_is_run_conflict(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1", labels={"site": "one"})
    changed = run_start(session_id="s-1", run_id=run.run_id, labels={"site": "two"})
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, "/v1/runs/root-starts", root_start_body(changed))
        assert_problem(response, 409, "run_conflict", run_id=run.run_id)


def test_a_second_terminal_with_another_status_is_run_terminal_conflict(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    finish(api, run, RunStatus.COMPLETED)
    body = terminal_body(run, RunStatus.FAILED, event_key="terminal-2")
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/terminal", body)
        assert_problem(response, 409, "run_terminal_conflict", run_id=run.run_id)


def test_a_second_cancellation_with_another_reason_is_run_cancellation_conflict(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    assert post(api, f"/v1/runs/{run.run_id}/cancellation", cancellation_body(run)).is_success
    body = cancellation_body(run, "operator_stop", event_key="cancel-2")
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/cancellation", body)
        assert_problem(response, 409, "run_cancellation_conflict", run_id=run.run_id)


def test_a_suspension_with_other_checkpoint_bytes_is_run_suspension_conflict(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    suspend(api, run)
    body = suspension_body(run, checkpoint(data=b"other bytes"))
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/suspension", body)
        assert_problem(response, 409, "run_suspension_conflict", run_id=run.run_id)


def test_appending_to_a_finished_run_is_run_not_active(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    finish(api, run)
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", append_body(note(run, "late")))
        assert_problem(response, 409, "run_not_active", run_id=run.run_id)


def test_a_child_start_under_a_finished_parent_is_run_not_active(api: TestClient) -> None:
    create_session(api, "s-1")
    parent = start_root(api, "s-1")
    finish(api, parent)
    child = run_start(session_id="s-1", parent_run_id=parent.run_id)
    with unchanged(api, [parent.run_id, child.run_id], "s-1"):
        response = post(api, "/v1/runs/child-starts", child_start_body(parent, child))
        assert_problem(response, 409, "run_not_active", run_id=parent.run_id)


def test_a_sessionless_child_of_a_session_run_is_run_session_mismatch(api: TestClient) -> None:
    create_session(api, "s-1")
    parent = start_root(api, "s-1")
    child = run_start(parent_run_id=parent.run_id)
    with unchanged(api, [parent.run_id, child.run_id], "s-1"):
        response = post(api, "/v1/runs/one-shot-child-starts", one_shot_child_body(parent, child))
        assert_problem(response, 409, "run_session_mismatch", run_id=child.run_id)


def test_a_record_of_another_agent_is_run_record_owner_mismatch(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = append_body(note(run, "note-1"))
    body["record"]["agent_id"] = "intruder"
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", body)
        assert_problem(
            response, 409, "run_record_owner_mismatch", run_id=run.run_id, event_key="note-1"
        )


def test_a_record_of_another_session_is_run_record_owner_mismatch(api: TestClient) -> None:
    run = start_one_shot(api)
    body = append_body(note(run, "note-1"))
    body["record"]["session_id"] = "s-other"
    with unchanged(api, [run.run_id]):
        response = post(api, f"/v1/runs/{run.run_id}/records", body)
        assert_problem(
            response, 409, "run_record_owner_mismatch", run_id=run.run_id, event_key="note-1"
        )


def test_the_same_event_key_with_other_content_is_event_conflict(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    append(api, note(run, "note-1"))
    changed = append_body(note(run, "note-1", payload=b'{"note":"changed"}'))
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, f"/v1/runs/{run.run_id}/records", changed)
        assert_problem(response, 409, "event_conflict", run_id=run.run_id, event_key="note-1")


def test_a_start_reusing_a_stored_key_with_other_content_is_event_conflict(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body: Json = root_start_body(run)
    body["started"] = wire_record(started_record(run))
    body["started"]["turn_id"] = "turn-9"
    with unchanged(api, [run.run_id], "s-1"):
        response = post(api, "/v1/runs/root-starts", body)
        assert_problem(response, 409, "event_conflict", run_id=run.run_id, event_key="start")


# --- routing ---------------------------------------------------------------------------


def test_an_unknown_route_is_a_404_problem(api: TestClient) -> None:
    assert_problem(api.get("/v1/nowhere"), 404, "not_found")


def test_a_wrong_method_is_a_405_problem_naming_the_allowed_methods(api: TestClient) -> None:
    response = api.put("/v1/sessions", json={})
    assert_problem(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, POST"


# --- request IDs -----------------------------------------------------------------------


def test_a_sane_incoming_request_id_is_echoed_in_the_header_and_the_problem(
    api: TestClient,
) -> None:
    response = api.get("/v1/sessions/nope", headers={"X-Request-ID": "req-42.a:b_c"})
    assert response.headers["x-request-id"] == "req-42.a:b_c"
    assert assert_problem(response, 404, "session_not_found", session_id="nope")["request_id"] == (
        "req-42.a:b_c"
    )


def test_an_insane_incoming_request_id_is_replaced(api: TestClient) -> None:
    for bad in ("has spaces", "x" * 65, "semi;colon"):
        response = api.get("/v1/sessions/nope", headers={"X-Request-ID": bad})
        body = assert_problem(response, 404, "session_not_found", session_id="nope")
        assert body["request_id"] != bad


def test_successful_responses_carry_a_request_id_too(api: TestClient) -> None:
    response = api.post("/v1/sessions", json={"session_id": "s-1", "created_at": T0_WIRE})
    assert response.status_code == 200
    assert response.headers["x-request-id"]
    echoed = api.get("/v1/sessions/s-1", headers={"X-Request-ID": "abc"})
    assert echoed.headers["x-request-id"] == "abc"
