"""Issue 33, item 3: a body that is not JSON is answered as a JSON parser would say it:
what was expected, at which line and column, never only the offset (``body.20``)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.api.wire_builders import assert_problem

CASES = [
    ('{"session_id": "s-1" "created_at": "2026-11-30T01:02:03.456Z"}', "Expecting ',' delimiter"),
    ('{\n  "session_id": "s-1",\n  "created_at": }', "Expecting value"),
    ("{'session_id': 's-1'}", "Expecting property name enclosed in double quotes"),
    ('{"session_id": "s-1"', "Expecting ',' delimiter"),
]


@pytest.mark.parametrize(("body", "expected"), CASES, ids=["comma", "line-3", "quotes", "cut"])
def test_a_body_that_is_not_json_names_what_was_expected_at_its_line_and_column(
    api: TestClient, body: str, expected: str
) -> None:
    with pytest.raises(json.JSONDecodeError) as parsed:
        json.loads(body)  # the reference: Python's own parser on the same text
    where = f"at line {parsed.value.lineno} column {parsed.value.colno}"
    response = api.post(
        "/v1/sessions", content=body.encode(), headers={"content-type": "application/json"}
    )
    problem = response.json()
    assert (response.status_code, problem["code"]) == (422, "invalid_argument")
    assert problem["detail"] == f"body is not valid JSON: {expected} {where}"
    assert [error["type"] for error in problem["errors"]] == ["json_invalid"]


def test_the_line_and_column_of_a_later_line_count_from_that_line(api: TestClient) -> None:
    response = api.post(
        "/v1/sessions",
        content=b'{\n  "session_id": "s-1",\n  "created_at": }',
        headers={"content-type": "application/json"},
    )
    assert (
        response.json()["detail"] == "body is not valid JSON: Expecting value at line 3 column 17"
    )


def test_a_valid_json_body_of_the_wrong_shape_still_names_its_fields(api: TestClient) -> None:
    response = api.post("/v1/sessions", json={"session_id": "s-1"})
    problem = assert_problem(
        response, 422, "invalid_argument", errors=[("body.created_at", "missing")]
    )
    assert problem["detail"] == "invalid request: body.created_at"
