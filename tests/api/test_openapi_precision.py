"""The OpenAPI document says what the service enforces, in terms code generators read.

Each rule here was once prose only (issue 45): required non-empty strings without
``minLength``, millisecond UTC times without a ``pattern``, memory event types without an
``enum``, the event streams as one plain string (which schemathesis judges event by event,
so every event failed; tests/security/test_fuzz.py now fuzzes the streams too), and a long
webhook URL refused for the wrong reason. The document only *describes* these rules: the
store still refuses with its own ``invalid_argument`` message, which is checked here too.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.domain.webhooks import MAX_URL_CHARS
from runtime_store_client import MEMORY_EVENT_TYPES
from runtime_store_client.times import TIME_PATTERN, TimeError, parse_rfc3339
from tests.api.test_openapi_document import document
from tests.api.wire_builders import (
    assert_problem,
    cancellation_body,
    child_start_body,
    create_session,
    root_start_body,
    start_root,
    suspension_body,
    unchanged,
)
from tests.contract.builders import checkpoint, run_start


def schema(name: str) -> dict[str, Any]:
    found: dict[str, Any] = document()["components"]["schemas"][name]
    return found


def request_schema(path: str) -> dict[str, Any]:
    """The body schema of ``POST path``, resolved one level."""
    content = document()["paths"][path]["post"]["requestBody"]["content"]
    ref: str = content["application/json"]["schema"]["$ref"]
    return schema(ref.rsplit("/", 1)[1])


# --- required non-empty strings --------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/runs/root-starts", "/v1/runs/child-starts"])
def test_the_session_of_a_root_or_child_start_is_a_required_non_empty_string(path: str) -> None:
    run_ref: str = request_schema(path)["properties"]["run"]["$ref"]
    run = schema(run_ref.rsplit("/", 1)[1])
    assert "session_id" in run["required"]
    assert run["properties"]["session_id"]["minLength"] == 1
    assert "default" not in run["properties"]["session_id"]


@pytest.mark.parametrize("path", ["/v1/runs/one-shot-starts", "/v1/runs/one-shot-child-starts"])
def test_sessionless_starts_keep_a_body_whose_session_may_be_empty(path: str) -> None:
    run_ref: str = request_schema(path)["properties"]["run"]["$ref"]
    run = schema(run_ref.rsplit("/", 1)[1])
    assert "session_id" not in run.get("required", [])
    assert "minLength" not in run["properties"]["session_id"]


def test_a_cancellation_reason_and_checkpoint_data_are_non_empty_in_the_document() -> None:
    assert schema("CancellationRequest")["properties"]["reason"]["minLength"] == 1
    assert schema("CheckpointBody")["properties"]["data"]["minLength"] == 1
    assert "reason" in schema("CancellationRequest")["required"]
    assert "data" in schema("CheckpointBody")["required"]


@pytest.mark.parametrize("missing", [False, True], ids=["empty", "missing"])
def test_a_root_or_child_start_without_its_session_keeps_the_stores_message(
    api: TestClient, missing: bool
) -> None:
    create_session(api, "s-1")
    parent = start_root(api, "s-1")
    child = run_start(run_id="child-1", session_id="s-1", parent_run_id=parent.run_id)
    bodies = {
        "/v1/runs/root-starts": root_start_body(run_start(run_id="root-2", session_id="s-1")),
        "/v1/runs/child-starts": child_start_body(parent, child),
    }
    for path, body in bodies.items():
        if missing:
            del body["run"]["session_id"]
        else:
            body["run"]["session_id"] = ""
        response = api.post(path, json=body)
        assert_problem(response, 422, "invalid_argument")
        assert response.json()["detail"] == "run.session_id is required", path


def test_an_empty_cancellation_reason_or_checkpoint_keeps_the_stores_message(
    api: TestClient,
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    with unchanged(api, [run.run_id], "s-1"):
        canceled = api.post(
            f"/v1/runs/{run.run_id}/cancellation", json=cancellation_body(run, reason="")
        )
        suspended = api.post(
            f"/v1/runs/{run.run_id}/suspension",
            json=suspension_body(run, checkpoint("cp-1", b"")),
        )
    assert_problem(canceled, 422, "invalid_argument")
    assert canceled.json()["detail"] == "reason is required"
    assert_problem(suspended, 422, "invalid_argument")
    assert suspended.json()["detail"] == "checkpoint.data is required"


# --- memory event types ----------------------------------------------------------------


def test_a_memory_event_type_is_an_enum_of_section_9s_types() -> None:
    assert schema("MemoryEventBody")["properties"]["type"]["enum"] == sorted(MEMORY_EVENT_TYPES)


def test_an_unknown_memory_event_type_keeps_the_stores_message(api: TestClient) -> None:
    event = {"type": "bogus", "timestamp": "2026-11-30T01:02:03.456Z"}
    response = api.post("/v1/agents/a-1/runs/r-1/memory", json={"events": [event]})
    assert_problem(response, 422, "invalid_argument")
    assert response.json()["detail"] == (
        f"events[0].type must be one of {sorted(MEMORY_EVENT_TYPES)}, not 'bogus'"
    )


# --- webhook URLs ----------------------------------------------------------------------


def test_a_webhook_url_longer_than_its_limit_is_refused_as_too_long(api: TestClient) -> None:
    url = "https://hooks.example.com/" + "a" * (10_000 - 26)
    response = api.post("/v1/webhooks", json={"url": url, "events": ["run.finished"]})
    assert_problem(response, 422, "invalid_argument")
    detail = response.json()["detail"]
    assert "spaces" not in detail
    assert f"at most {MAX_URL_CHARS}" in detail
    assert "10000 characters" in detail
    assert schema("CreateWebhookRequest")["properties"]["url"]["maxLength"] == MAX_URL_CHARS


def test_a_webhook_url_with_a_space_is_still_refused_for_its_space(api: TestClient) -> None:
    url = "https://hooks.example.com/a b"
    response = api.post("/v1/webhooks", json={"url": url, "events": ["run.finished"]})
    assert_problem(response, 422, "invalid_argument")
    assert "without spaces" in response.json()["detail"]


# --- event streams ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "ends"),
    [
        ("/v1/runs/{run_id}/records/stream", ["finished", "purged"]),
        ("/v1/sessions/{session_id}/records/stream", ["purged"]),
    ],
)
def test_an_event_stream_documents_each_event_it_sends(path: str, ends: list[str]) -> None:
    content = document()["paths"][path]["get"]["responses"]["200"]["content"]
    stream = content["text/event-stream"]
    # No plain string `schema`: tools before OpenAPI 3.2 read it as each event's schema.
    assert "schema" not in stream
    record, end = stream["itemSchema"]["oneOf"]
    assert record["properties"]["event"] == {"const": "record"}
    assert record["properties"]["data"]["contentSchema"] == {
        "$ref": "#/components/schemas/RecordBody"
    }
    assert end["properties"]["event"] == {"const": "end"}
    reasons = end["properties"]["data"]["contentSchema"]["oneOf"]
    assert [reason["properties"]["reason"]["const"] for reason in reasons] == ends


# --- times -----------------------------------------------------------------------------


@functools.cache
def _time_pattern() -> re.Pattern[str]:
    return re.compile(TIME_PATTERN)


def _time_schemas(node: object) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if node.get("format") == "date-time" else []
        return found + [s for value in node.values() for s in _time_schemas(value)]
    if isinstance(node, list):
        return [s for value in node for s in _time_schemas(value)]
    return []


def test_every_time_of_the_document_has_the_pattern_of_the_times_the_service_reads() -> None:
    times = _time_schemas(document())
    assert len(times) > 20
    for time in times:
        assert time["pattern"] == TIME_PATTERN, time


def _reads(text: str) -> bool:
    try:
        parse_rfc3339(text)
    except TimeError:
        return False
    return True


#: Near misses of the grammar: every field's digits (ASCII or not) and ranges, separators,
#: fractions and offsets.
_DIGIT = st.sampled_from("0123456789") | st.sampled_from("\u0660\u0661\u0669\uff19")
_NEAR_TIMES = st.builds(
    "{}-{}-{}{}{}:{}:{}{}{}".format,
    st.text(_DIGIT, min_size=3, max_size=5),
    st.text(_DIGIT, min_size=1, max_size=3),
    st.text(_DIGIT, min_size=1, max_size=3),
    st.sampled_from("Tt "),
    st.text(_DIGIT, min_size=1, max_size=3),
    st.text(_DIGIT, min_size=1, max_size=3),
    st.text(_DIGIT, min_size=1, max_size=3),
    st.just("") | st.text(_DIGIT, max_size=9).map(".{}".format),
    st.sampled_from(["Z", "z", ""])
    | st.builds(
        "{}{}:{}".format,
        st.sampled_from("+-"),
        st.text(_DIGIT, min_size=1, max_size=3),
        st.text(_DIGIT, min_size=1, max_size=3),
    ),
)


@settings(max_examples=400, deadline=None)
@given(_NEAR_TIMES)
@example("2026-11-30T01:02:03.456Z")
@example("2026-11-30t01:02:03.4560000z")
@example("2026-11-30T01:02:03.\u0664\u0665\u0666Z")  # Arabic-Indic digits: once read as 456
@example("2026-11-30T01:02:03+00:60")  # once read as +01:00
@example("2026-11-30T01:02:03+24:00")  # once a ValueError that is not a TimeError
@example("0000-01-01T00:00:00Z")
def test_the_time_pattern_accepts_exactly_the_times_the_service_reads(text: str) -> None:
    matched = _time_pattern().fullmatch(text) is not None
    read = _reads(text)
    if matched and not read:
        # What a pattern cannot say: a day past its month's end, and an instant that leaves
        # the years 0001-9999 in UTC; both are refused as TimeError all the same.
        with pytest.raises(TimeError, match=r"not a valid date|outside the years"):
            parse_rfc3339(text)
        return
    assert matched == read, text
