"""The calls a runtime makes most are matched first, and that changes no request's route.

``create_app`` puts the routes of ``FIRST_MATCHED`` (a run's appends and pages) before
every other route, so a request to them tries one or two paths instead of a few dozen.
A route matched earlier takes over a request only when another route also matches its
path; none does, whatever the IDs in the path are (an ID may look like a literal segment
of another route: ``root-starts``, ``records``, ``batch``).
"""

from __future__ import annotations

import re
from itertools import product

import fastapi.routing

from app.main import FIRST_MATCHED, create_app
from app.settings import Settings

#: IDs to put in a path's parameters: ordinary ones and literal segments of other routes.
SAMPLE_IDS = ("run-1", "root-starts", "records", "batch", "stream", "transcript")


def test_no_other_route_matches_a_path_of_the_routes_matched_first() -> None:
    app = create_app(Settings(database_url="sqlite:///:memory:"))
    routes = list(getattr(fastapi.routing, "iter_route_contexts", iter)(app.routes))
    first = [
        route
        for route in app.routes
        if isinstance(route, fastapi.routing.APIRoute) and route.endpoint in FIRST_MATCHED
    ]
    assert [route.endpoint for route in first] == list(FIRST_MATCHED)
    assert app.routes[: len(first)] == first
    for route in first:
        names = re.findall(r"{(\w+)}", route.path)
        for values in product(SAMPLE_IDS, repeat=len(names)):
            path = route.path
            for name, value in zip(names, values, strict=True):
                path = path.replace(f"{{{name}}}", value)
            matching = {
                getattr(other, "path", None)
                for other in routes
                if getattr(other, "path_regex", None) is not None and other.path_regex.match(path)
            }
            assert matching == {route.path}, path


def test_the_document_lists_the_paths_in_the_routers_order() -> None:
    """Matching order is not document order: the first path is still the sessions'."""
    app = create_app(Settings(database_url="sqlite:///:memory:"))
    assert next(iter(app.openapi()["paths"])) == "/v1/sessions"
