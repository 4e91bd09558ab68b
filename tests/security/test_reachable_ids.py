"""CONTRACT.md 2.9: every accepted identifier is reachable over HTTP.

An ID may hold ``/``, ``?``, ``#``, ``%``, spaces or any Unicode; in a path it travels
percent-encoded in its own segment and names exactly that ID: ``GET /v1/sessions/a%2Fstatus``
is the session ``a/status``, never the status of session ``a``. Path and query text that is
not UTF-8 once percent-decoded is ``invalid_argument``, never replaced by U+FFFD. Every test
runs against a live ``runtime-store serve`` on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import io

import fastapi.routing
import httpx
import pytest

from app.api.middleware.exact_path import exact_segment
from app.main import create_app
from app.settings import Settings
from runtime_store_client import (
    AsyncHttpStore,
    HttpStore,
    MemoryEvent,
    RunNotFoundError,
    RunStatus,
    SessionNotFoundError,
    SessionPurgedError,
    SessionStatus,
)
from tests.api.wire_builders import T0_WIRE, assert_problem, one_shot_body, root_start_body
from tests.conftest import LiveServer
from tests.contract.builders import (
    T0,
    at,
    canceled_record,
    record,
    run_start,
    started_record,
    terminal_record,
)

SESSION = "a/b c?d#e%f"
RUN = "x/y"
AGENT = "ag/ent é"


def _create(http: httpx.Client, session_id: str) -> None:
    response = http.post("/v1/sessions", json={"session_id": session_id, "created_at": T0_WIRE})
    assert response.status_code == 200, response.text


def test_2_9_ids_with_reserved_characters_are_reachable_through_http_store(
    live_server: LiveServer,
) -> None:
    run = run_start(run_id=RUN, agent_id=AGENT, session_id=SESSION)
    note = record(run, event_key="k/1?#%", payload=b'{"n":1}')
    with HttpStore(live_server.base_url) as store:
        assert store.create_session(SESSION, T0).id == SESSION
        assert store.load_session(SESSION).id == SESSION
        assert store.load_session_status(SESSION) is SessionStatus.ACTIVE
        store.start_root_run(run, started_record(run), canceled_record(run))
        assert store.append_run_record(note).inserted
        assert store.load_run(RUN).run_id == RUN
        assert [r.run_id for r in store.list_session_runs(SESSION).runs] == [RUN]
        assert [r.event_key for r in store.list_run_records(RUN).records][-1] == "k/1?#%"
        assert [r.run_id for r in store.list_session_run_records(SESSION).records] == [RUN] * 2
        store.append_memory_events(AGENT, RUN, [MemoryEvent(type="planner_note", timestamp=T0)])
        snapshot = store.load_memory(AGENT, RUN)
        assert (snapshot.agent_id, snapshot.run_id, len(snapshot.events)) == (AGENT, RUN, 1)
        store.record_run_terminal(
            RUN, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
        with store.tail_run_records(RUN) as tail:  # a finished run's stream ends
            assert [r.type for r in tail][-1] == "run_completed"
        assert store.end_session(SESSION, at(50)).id == SESSION
        exported = io.BytesIO()
        store.export_session(SESSION, exported)
        assert SESSION.encode() in exported.getvalue()
        store.purge_session(SESSION)
        with pytest.raises(SessionPurgedError):
            store.load_session(SESSION)
        with pytest.raises(SessionPurgedError):
            store.load_run(RUN)


def test_2_9_ids_with_reserved_characters_are_reachable_through_async_http_store(
    live_server: LiveServer,
) -> None:
    run = run_start(run_id=RUN, agent_id=AGENT, session_id=SESSION)

    async def scenario() -> None:
        async with AsyncHttpStore(live_server.base_url) as store:
            await store.create_session(SESSION, T0)
            await store.start_root_run(run, started_record(run), canceled_record(run))
            assert (await store.load_session(SESSION)).id == SESSION
            assert (await store.load_run(RUN)).run_id == RUN
            assert [r.run_id for r in (await store.list_session_runs(SESSION)).runs] == [RUN]
            assert len((await store.list_run_records(RUN)).records) == 1
            exported = io.BytesIO()
            await store.export_session(SESSION, exported)
            assert SESSION.encode() in exported.getvalue()

    asyncio.run(scenario())


def test_2_9_an_encoded_slash_names_the_whole_session_id_not_a_subresource(
    live_server: LiveServer,
) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        _create(http, "a")
        # Only session "a" exists: "a%2Fstatus" is the unknown session "a/status".
        assert_problem(
            http.get("/v1/sessions/a%2Fstatus"), 404, "session_not_found", session_id="a/status"
        )
        _create(http, "a/status")
        session = http.get("/v1/sessions/a%2Fstatus")
        assert session.status_code == 200, session.text
        assert session.json()["id"] == "a/status"
        status = http.get("/v1/sessions/a%2Fstatus/status")
        assert (status.status_code, status.json()) == (200, {"status": "active"})
        # Lower-case escapes name the same ID.
        assert http.get("/v1/sessions/a%2fstatus").json()["id"] == "a/status"


def test_2_9_an_encoded_slash_names_the_whole_run_id_not_a_subresource(
    live_server: LiveServer,
) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        _create(http, "s")
        run = run_start(run_id="r", session_id="s")
        started = http.post("/v1/runs/root-starts", json=root_start_body(run))
        assert started.status_code == 200, started.text
        # Run "r" exists and has records; "r%2Frecords" is the unknown run "r/records".
        assert_problem(http.get("/v1/runs/r%2Frecords"), 404, "run_not_found", run_id="r/records")
        assert_problem(
            http.get("/v1/runs/r%2Fsuspension"), 404, "run_not_found", run_id="r/suspension"
        )


def test_2_9_a_percent_in_an_id_is_not_decoded_twice(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        _create(http, "%41%2F")  # sent as %2541%252F
        assert http.get("/v1/sessions/%2541%252F").json()["id"] == "%41%2F"
        assert_problem(http.get("/v1/sessions/A%2F"), 404, "session_not_found", session_id="A/")


@pytest.mark.parametrize(
    "path",
    ["/v1/sessions/%ED%A0%80", "/v1/sessions/%ff", "/v1/runs/%C3", "/v1/sessions/a%80/status"],
)
def test_2_9_a_path_that_is_not_utf8_is_invalid_argument_not_replaced(
    live_server: LiveServer, path: str
) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        # The IDs the server would have made of it with U+FFFD exist: they must not answer.
        for replaced in ("\ufffd", "\ufffd\ufffd\ufffd", "a\ufffd"):
            _create(http, replaced)
        started = http.post(
            "/v1/runs/one-shot-starts", json=one_shot_body(run_start(run_id="\ufffd"))
        )
        assert started.status_code == 200, started.text
        problem = assert_problem(http.get(path), 422, "invalid_argument")
        assert "UTF-8" in problem["detail"]


@pytest.mark.parametrize(
    "query", ["cursor=%ff", "session_id=%ED%A0%80", "agent_id=%ff", "agent_id=a%80b", "%ff=1"]
)
def test_2_9_a_query_that_is_not_utf8_is_invalid_argument_not_replaced(
    live_server: LiveServer, query: str
) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        problem = assert_problem(http.get(f"/v1/runs?{query}"), 422, "invalid_argument")
        assert "query" in problem["detail"]


def test_2_9_the_console_shows_a_session_whose_id_holds_a_slash(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        _create(http, "c/status")
        page = http.get("/console/fragments/session", params={"session_id": "c/status"})
        assert page.status_code == 200, page.text
        assert "c/status" in page.text
        assert 'data-problem="' not in page.text


def test_2_9_every_path_parameter_of_the_api_is_an_exact_segment() -> None:
    """A route whose path parameter were a plain ``str`` would get an ID with ``%2F`` and
    ``%25`` still escaped: every one must use a type of app/api/deps.py."""
    app = create_app(Settings(database_url="sqlite://"))
    api_paths = set(app.openapi()["paths"])
    # FastAPI keeps included routers whole (iter_route_contexts); an older one copied their
    # routes into app.routes.
    route_contexts = getattr(fastapi.routing, "iter_route_contexts", iter)
    checked = []
    for route in route_contexts(app.routes):
        path = getattr(route, "path", None)
        dependant = getattr(getattr(route, "original_route", route), "dependant", None)
        if dependant is None or path not in api_paths:
            continue
        for param in dependant.path_params:
            metadata = param.field_info.metadata
            assert any(getattr(m, "func", None) is exact_segment for m in metadata), (
                path,
                param.name,
            )
            checked.append((path, param.name))
    assert ("/v1/sessions/{session_id}", "session_id") in checked
    assert ("/v1/agents/{agent_id}/runs/{run_id}/memory", "agent_id") in checked
    assert len(checked) >= 20


def test_2_9_http_store_errors_name_the_exact_id(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        with pytest.raises(SessionNotFoundError) as missing_session:
            store.load_session(SESSION)
        with pytest.raises(RunNotFoundError) as missing_run:
            store.load_run(RUN)
    assert missing_session.value.session_id == SESSION
    assert missing_run.value.run_id == RUN
