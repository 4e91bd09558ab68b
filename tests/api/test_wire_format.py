"""Wire forms of CONTRACT.md section 8: payload strings, base64 checkpoints, times, paging."""

from __future__ import annotations

import base64
import json

import pytest
from fastapi.testclient import TestClient

from runtime_store_client import RunStatus
from tests.api.wire_builders import (
    append,
    append_body,
    appended,
    assert_problem,
    cancellation_body,
    create_session,
    finish,
    note,
    ok,
    root_start_body,
    start_root,
    suspend,
    suspension_body,
    terminal_body,
    unchanged,
    wire_record,
)
from tests.contract.builders import checkpoint, run_start, started_record

# --- payloads --------------------------------------------------------------------------

PAYLOADS = {
    "escapes": r'{"name":"caf\u00e9","nul":"\u0000","quote":"\"","slash":"\/","tab":"\t"}',
    "whitespace": ' {\n\t"a" : [ 1 , 2.50 , 1e3 ] ,\r\n "b" : { } }\n',
    "numbers": '{"big":123456789012345678901234567890,"f":1.0E+2,"neg":-0,"tiny":5e-324}',
    "multibyte": '{"text":"café 日本語 Ωμέγα"}',
    "emoji": '{"emoji":"😀👍🏽","zwj":"👩\u200d💻","flag":"🇫🇷"}',
    "combining": '{"e":"e\u0301","escaped":"e\\u0301"}',
}


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_a_payload_string_round_trips_byte_for_byte_through_both_lists(
    api: TestClient, payload: str
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    rec = note(run, "note-1", payload=payload.encode("utf-8"))
    assert append(api, rec) == appended("2")

    run_records = ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"]
    session_records = ok(api.get("/v1/sessions/s-1/records"))["records"]
    assert run_records[1]["payload"] == payload
    assert session_records[1]["payload"] == payload
    assert run_records[1] == session_records[1] == wire_record(rec, record_id="2")
    # The same text again is an exact retry: the stored bytes equal the sent bytes.
    assert append(api, rec) == appended("2", inserted=False)


def test_an_escaped_lifecycle_payload_is_accepted_and_kept_escaped(api: TestClient) -> None:
    create_session(api, "s-1")
    run = run_start(session_id="s-1", labels={"site": "café"})
    body = root_start_body(run)
    escaped = r'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"caf\u00e9"}}'
    body["started"]["payload"] = escaped
    assert ok(api.post("/v1/runs/root-starts", json=body))["outcome"] == "proceed"
    assert ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"][0]["payload"] == escaped


def test_a_payload_string_holding_a_lone_surrogate_is_invalid(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = append_body(note(run, "note-1"))
    body["record"]["payload"] = '{"x":"\ud800"}'
    # json.dumps escapes the surrogate as \ud800, which decodes to a lone surrogate.
    content = json.dumps(body).encode("ascii")
    assert b"\\ud800" in content
    with unchanged(api, [run.run_id], "s-1"):
        response = api.post(
            f"/v1/runs/{run.run_id}/records",
            content=content,
            headers={"content-type": "application/json"},
        )
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.record.payload", "value_error")]
        )


# --- checkpoints -----------------------------------------------------------------------


def test_checkpoint_data_of_every_byte_value_round_trips_as_standard_base64(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    data = bytes(range(256))
    suspend(api, run, checkpoint(data=data))
    body = ok(api.get(f"/v1/runs/{run.run_id}/suspension"))
    assert body == {"id": "cp-1", "data": base64.b64encode(data).decode("ascii")}
    assert base64.b64decode(body["data"], validate=True) == data


@pytest.mark.parametrize(
    "data",
    ["AAFvcGFxdWX_", "AAFvcGFxdWX", "AAFv cGFxdWX/", "ÿÿÿÿ"],
    ids=["urlsafe-alphabet", "missing-padding", "inner-space", "non-ascii"],
)
def test_checkpoint_data_that_is_not_standard_base64_is_invalid(api: TestClient, data: str) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    body = suspension_body(run)
    body["checkpoint"]["data"] = data
    with unchanged(api, [run.run_id], "s-1"):
        response = api.post(f"/v1/runs/{run.run_id}/suspension", json=body)
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.checkpoint.data", "value_error")]
        )


# --- times -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "returned"),
    [
        ("2026-11-30T01:02:03.456Z", "2026-11-30T01:02:03.456Z"),
        ("2026-11-30T01:02:03.456+02:00", "2026-11-29T23:02:03.456Z"),
        ("2026-11-30T01:02:03.456-05:30", "2026-11-30T06:32:03.456Z"),
        ("2026-11-30T01:02:03.456000Z", "2026-11-30T01:02:03.456Z"),
        ("2026-11-30T01:02:03Z", "2026-11-30T01:02:03.000Z"),
        ("2026-11-30T01:02:03.4Z", "2026-11-30T01:02:03.400Z"),
    ],
)
def test_a_time_with_an_offset_and_at_most_milliseconds_is_returned_as_utc_z(
    api: TestClient, sent: str, returned: str
) -> None:
    response = api.post("/v1/sessions", json={"session_id": "s-1", "created_at": sent})
    assert ok(response)["created_at"] == returned
    assert ok(api.get("/v1/sessions/s-1"))["created_at"] == returned


@pytest.mark.parametrize(
    "sent",
    [
        "2026-11-30T01:02:03.4561Z",
        "2026-11-30T01:02:03.456001+02:00",
        "2026-11-30T01:02:03.456",
        "2026-11-30 01:02:03.456",
        "2026-11-30",
        "2026-13-30T01:02:03.456Z",
        "1796000523456",
    ],
    ids=[
        "sub-millisecond",
        "sub-millisecond-offset",
        "naive",
        "naive-space",
        "date-only",
        "bad-month",
        "epoch-string",
    ],
)
def test_a_time_that_is_naive_finer_than_milliseconds_or_malformed_is_invalid(
    api: TestClient, sent: str
) -> None:
    with unchanged(api, session_id="s-1"):
        response = api.post("/v1/sessions", json={"session_id": "s-1", "created_at": sent})
        assert_problem(
            response, 422, "invalid_argument", errors=[("body.created_at", "value_error")]
        )


def test_a_record_time_with_an_offset_is_the_same_record_as_its_utc_form(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    rec = note(run, "note-1")
    body = append_body(rec)
    body["record"]["timestamp"] = "2026-11-30T03:02:03.466+02:00"
    assert ok(api.post(f"/v1/runs/{run.run_id}/records", json=body)) == appended("2")
    listed = ok(api.get(f"/v1/runs/{run.run_id}/records"))["records"][1]
    assert listed["timestamp"] == "2026-11-30T01:02:03.466Z"
    assert listed == wire_record(rec, record_id="2")
    assert append(api, rec) == appended("2", inserted=False)


# --- paging ----------------------------------------------------------------------------


def test_run_records_page_by_limit_with_the_last_id_as_cursor(api: TestClient) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    notes = [note(run, f"note-{n}") for n in range(4)]
    for rec in notes:
        append(api, rec)
    expected = [wire_record(started_record(run), record_id="1")] + [
        wire_record(rec, record_id=str(n + 2)) for n, rec in enumerate(notes)
    ]
    url = f"/v1/runs/{run.run_id}/records"

    assert ok(api.get(url, params={"limit": 2})) == {"records": expected[0:2], "next_cursor": "2"}
    assert ok(api.get(url, params={"limit": 2, "cursor": "2"})) == {
        "records": expected[2:4],
        "next_cursor": "4",
    }
    assert ok(api.get(url, params={"limit": 2, "cursor": "4"})) == {
        "records": expected[4:5],
        "next_cursor": "",
    }
    assert ok(api.get(url, params={"cursor": "5"})) == {"records": [], "next_cursor": ""}
    assert ok(api.get(url, params={"limit": 100000})) == {"records": expected, "next_cursor": ""}


def test_session_records_page_in_commit_order_following_next_cursor(api: TestClient) -> None:
    create_session(api, "s-1")
    first = start_root(api, "s-1", run_id="run-a")
    second = start_root(api, "s-1", run_id="run-b")
    a1, b1, a2 = note(first, "a1"), note(second, "b1"), note(first, "a2")
    for rec in (a1, b1, a2):
        append(api, rec)
    expected = [
        wire_record(started_record(first), record_id="1"),
        wire_record(started_record(second), record_id="1"),
        wire_record(a1, record_id="2"),
        wire_record(b1, record_id="2"),
        wire_record(a2, record_id="3"),
    ]
    pages: list[list[object]] = []
    cursor = ""
    while True:
        body = ok(api.get("/v1/sessions/s-1/records", params={"limit": 2, "cursor": cursor}))
        pages.append(body["records"])
        if not body["next_cursor"]:
            break
        assert body["next_cursor"] != cursor
        cursor = body["next_cursor"]
    assert pages == [expected[0:2], expected[2:4], expected[4:5]]


def test_session_runs_filter_by_repeated_status_and_page(api: TestClient) -> None:
    create_session(api, "s-1")
    running = start_root(api, "s-1", run_id="run-a")
    completed = start_root(api, "s-1", run_id="run-b")
    suspended = start_root(api, "s-1", run_id="run-c")
    failed = start_root(api, "s-1", run_id="run-d")
    canceled = start_root(api, "s-1", run_id="run-e")
    finish(api, completed, RunStatus.COMPLETED)
    suspend(api, suspended)
    finish(api, failed, RunStatus.FAILED)
    ok(api.post(f"/v1/runs/{canceled.run_id}/cancellation", json=cancellation_body(canceled)))
    reason_body = terminal_body(canceled, RunStatus.CANCELED, reason="user_requested")
    ok(api.post(f"/v1/runs/{canceled.run_id}/terminal", json=reason_body))

    base = "/v1/sessions/s-1/runs?status=completed&status=suspended&status=failed"
    first = ok(api.get(f"{base}&limit=2"))
    assert [(run["run_id"], run["status"]) for run in first["runs"]] == [
        ("run-b", "completed"),
        ("run-c", "suspended"),
    ]
    assert first["next_cursor"]
    second = ok(api.get(f"{base}&limit=2&cursor={first['next_cursor']}"))
    assert [(run["run_id"], run["status"]) for run in second["runs"]] == [("run-d", "failed")]
    assert second["next_cursor"] == ""

    only_running = ok(api.get("/v1/sessions/s-1/runs?status=running"))
    assert [run["run_id"] for run in only_running["runs"]] == [running.run_id]
    every = ok(api.get("/v1/sessions/s-1/runs"))
    assert [run["run_id"] for run in every["runs"]] == [
        "run-a",
        "run-b",
        "run-c",
        "run-d",
        "run-e",
    ]
    assert every["runs"][4]["status"] == "canceled"


LISTS = ["/v1/runs/run-a/records", "/v1/sessions/s-1/records", "/v1/sessions/s-1/runs"]


@pytest.mark.parametrize("path", LISTS)
def test_a_garbage_cursor_is_invalid_on_every_list(api: TestClient, path: str) -> None:
    create_session(api, "s-1")
    start_root(api, "s-1", run_id="run-a")
    for cursor in ("garbage", "!!", "0", "99", "eyJ4IjoxfQ"):
        response = api.get(path, params={"cursor": cursor})
        assert_problem(response, 422, "invalid_argument")


@pytest.mark.parametrize("path", LISTS)
def test_a_limit_below_one_is_invalid_on_every_list(api: TestClient, path: str) -> None:
    create_session(api, "s-1")
    start_root(api, "s-1", run_id="run-a")
    for limit in ("0", "-1"):
        response = api.get(path, params={"limit": limit})
        assert_problem(
            response, 422, "invalid_argument", errors=[("query.limit", "greater_than_equal")]
        )
    response = api.get(path, params={"limit": "ten"})
    assert_problem(response, 422, "invalid_argument", errors=[("query.limit", "int_parsing")])


#: Python's int() and float() read these; a JSON number is none of them.
NOT_JSON_NUMBERS = ["1_0", "+1", " 1", "1 ", "01", "1.", ".5", "inf", "nan", "Infinity", "0x10"]


def _number_queries(api: TestClient) -> list[tuple[str, str]]:
    """``(path, name)`` of every integer or number query parameter the document lists."""
    found = []
    for path, operations in api.app.openapi()["paths"].items():  # type: ignore[attr-defined]
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if parameter["in"] == "query" and schema.get("type") in ("integer", "number"):
                    assert method == "get", (path, parameter["name"])
                    found.append((path.replace("{", "").replace("}", ""), parameter["name"]))
    return found


#: The seed lists' ``limit`` (CONTRACT.md 15.4): what is no integer of at least 1, in JSON
#: syntax, is ``invalid_transcript_position`` there, not a validation error.
SEED_LISTS = ("/v1/runs/run_id/seed/records", "/v1/runs/run_id/preparation/records")


def test_every_number_in_a_query_string_is_json_number_syntax(api: TestClient) -> None:
    queries = _number_queries(api)
    assert ("/v1/runs/run_id/wait", "timeout") in queries
    assert ("/v1/runs/run_id/records", "limit") in queries
    assert {(path, "limit") for path in SEED_LISTS} <= set(queries)
    # The required arguments of the reads that have some (then an unknown ID is 404).
    required = {"through": "1", "seed_end_id": "1", "end_id": "1"}
    for path, name in queries:
        kind = "float_parsing" if name == "timeout" else "int_parsing"  # as for "ten"
        for value in NOT_JSON_NUMBERS:
            response = api.get(path, params={**required, name: value})
            if path in SEED_LISTS:
                assert_problem(response, 422, "invalid_transcript_position", run_id="run_id")
            else:
                errors = [(f"query.{name}", kind)]
                assert_problem(response, 422, "invalid_argument", errors=errors)
        # A JSON number passes to the parameter's own checks (an unknown ID is then 404).
        assert api.get(path, params={**required, name: "1"}).status_code != 422


def test_an_unknown_status_filter_is_invalid(api: TestClient) -> None:
    create_session(api, "s-1")
    response = api.get("/v1/sessions/s-1/runs?status=running&status=paused")
    assert_problem(response, 422, "invalid_argument", errors=[("query.status.1", "enum")])
