"""Issue 19, item 9: every answer of the service is a problem, even to a request that is not
HTTP (``curl -X FOO``) or whose body is not JSON."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.api.wire_builders import assert_problem
from tests.conftest import LiveServer


def _raw_answer(server: LiveServer, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Status line, headers and body of what the server answers ``request`` on a socket."""
    host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)
    }
    return status, headers, body


@pytest.mark.parametrize(
    "request_line",
    [b"FOO /v1/sessions HTTP/1.1", b"GET /v1/sessions HTTP/9.z", b"\x16\x03\x01 garbage"],
    ids=["unknown-method", "bad-version", "tls-hello"],
)
def test_a_request_that_is_not_http_is_a_bad_request_problem(
    sqlite_server: LiveServer, request_line: bytes
) -> None:
    status, headers, body = _raw_answer(
        sqlite_server, request_line + b"\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
    )
    assert status == "HTTP/1.1 400 Bad Request"
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    assert problem["code"] == "bad_request"
    assert problem["status"] == 400
    assert problem["type"] == "urn:runtime-store:problem:bad_request"
    assert problem["request_id"] == headers["x-request-id"]


def test_curl_x_foo_gets_a_problem(sqlite_server: LiveServer) -> None:
    response = httpx.request("FOO", f"{sqlite_server.base_url}/v1/sessions", timeout=10)
    assert_problem(response, 400, "bad_request")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml", None]
)
def test_a_body_that_is_not_json_is_unsupported_media_type_and_writes_nothing(
    api: TestClient, content_type: str | None
) -> None:
    body = json.dumps({"session_id": "s-415", "created_at": "2026-11-30T01:02:03.456Z"})
    headers = {} if content_type is None else {"content-type": content_type}
    response = api.post("/v1/sessions", content=body, headers=headers)
    assert_problem(response, 415, "unsupported_media_type")
    assert (content_type or "without a content-type") in response.json()["detail"]
    assert api.get("/v1/sessions/s-415").status_code == 404


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "application/x+json"]
)
def test_json_media_types_are_read_as_json(api: TestClient, content_type: str) -> None:
    body = json.dumps({"session_id": "s-json", "created_at": "2026-11-30T01:02:03.456Z"})
    response = api.post("/v1/sessions", content=body, headers={"content-type": content_type})
    assert response.status_code == 200, response.text
    assert response.json()["id"] == "s-json"


def test_malformed_json_and_no_body_are_still_invalid_argument(api: TestClient) -> None:
    response = api.post(
        "/v1/sessions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_problem(response, 422, "invalid_argument", errors=[("body.1", "json_invalid")])
    assert_problem(api.post("/v1/sessions"), 422, "invalid_argument", errors=[("body", "missing")])


def test_every_operation_with_a_body_declares_415(api: TestClient) -> None:
    document = api.get("/openapi.json").json()
    with_body = [
        operation
        for item in document["paths"].values()
        for operation in item.values()
        if "requestBody" in operation
    ]
    assert with_body
    for operation in with_body:
        assert "415" in operation["responses"], operation["operationId"]
