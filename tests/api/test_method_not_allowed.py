"""A method a path does not serve is a 405 problem whose ``Allow`` names every method it does.

A path served by two routes (``GET`` and ``POST`` of a run's memory, ``GET`` and ``DELETE``
of a session) used to name only the first route's method: Starlette's router stops at the
first route whose path matches.
"""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.api.wire_builders import assert_problem


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/agents/agent-1/runs/run-1/memory", "GET, POST"),
        ("DELETE", "/v1/agents/agent-1/runs/run-1/memory", "GET, POST"),
        ("PUT", "/v1/sessions/s-1", "DELETE, GET"),
        ("POST", "/v1/sessions/s-1", "DELETE, GET"),
        ("PATCH", "/v1/runs/run-1/suspension", "GET, POST"),
        ("PUT", "/v1/runs/run-1/records", "GET, POST"),
        ("GET", "/v1/runs/run-1/cancellation", "POST"),
        # GET /v1/runs/root-starts is the run "root-starts": GET /v1/runs/{run_id} serves it.
        ("PUT", "/v1/runs/root-starts", "GET, POST"),
        # Likewise the session "import" (every accepted ID is reachable, CONTRACT.md 2.9):
        # its GET and DELETE are served, so Allow names them, though the document lists
        # only POST under /v1/sessions/import (schemathesis' allow_header_conformance,
        # which compares with that one template, calls them undocumented; issue 45).
        ("OPTIONS", "/v1/sessions/import", "DELETE, GET, POST"),
        ("DELETE", "/v1/sessions/s-1/end", "POST"),
    ],
)
def test_a_wrong_method_names_every_method_of_the_path(
    api: TestClient, method: str, path: str, allowed: str
) -> None:
    response = api.request(method, path)
    assert_problem(response, 405, "method_not_allowed")
    assert response.headers["allow"] == allowed


def test_head_is_allowed_only_where_it_is_served(api: TestClient) -> None:
    # FastAPI's routes serve GET without HEAD, so HEAD is refused and not listed ...
    head = api.head("/v1/sessions/s-1")
    assert head.status_code == 405
    assert head.headers["allow"] == "DELETE, GET"
    # ... while Starlette's own routes (the OpenAPI document) serve and list it.
    assert api.head("/openapi.json").status_code == 200
    post = api.post("/openapi.json")
    assert_problem(post, 405, "method_not_allowed")
    assert post.headers["allow"] == "GET, HEAD"


def test_every_documented_path_lists_the_documented_methods_that_serve_it(
    api: TestClient,
) -> None:
    """The ``Allow`` of every path of the OpenAPI document is what the document says serves
    it: the methods of its own template and of every other template it matches (the path
    ``/v1/runs/root-starts`` is also ``/v1/runs/{run_id}``)."""
    paths: dict[str, dict[str, object]] = api.app.openapi()["paths"]  # type: ignore[attr-defined]
    assert paths
    # The templates hold letters, digits, "/", "-" and "_" besides their parameters.
    patterns = {template: re.compile(re.sub(r"\{[^}]+\}", "[^/]+", template)) for template in paths}
    for template in paths:
        path = re.sub(r"\{[^}]+\}", "x-1", template)
        documented = sorted(
            {
                method.upper()
                for other, operations in paths.items()
                if patterns[other].fullmatch(path)
                for method in operations
            }
        )
        response = api.request("PATCH", path)
        assert_problem(response, 405, "method_not_allowed")
        assert response.headers["allow"] == ", ".join(documented), template


def test_the_root_leads_to_the_docs(api: TestClient) -> None:
    response = api.get("/", follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == "/docs"
