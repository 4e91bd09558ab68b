"""The hot routes answer exactly as FastAPI's routes do (``app/api/hot_routes.py``).

Two apps over two identical databases of one backend, one with the hot routes and one
without (``RUNTIME_STORE_HOT_ROUTES=off``), with tokens required, get the same requests in
the same order: the common cases the hot routes answer, and every edge they must leave to
FastAPI (bad JSON, another content type, a refused token, a record of another run, an odd
page size, an escaped ID). Each pair of answers must be equal: status, headers and body,
but for the request ID. The hot app must have answered the common cases itself, or the
comparison would prove nothing.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.types import ASGIApp, Receive, Scope, Send

from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage import create_engine
from app.storage.tokens import Tokens
from runtime_store_client import RunStatus
from tests.api.wire_builders import (
    T0_WIRE,
    append_body,
    cancellation_body,
    child_start_body,
    note,
    one_shot_body,
    one_shot_child_body,
    root_start_body,
    suspension_body,
    terminal_body,
    wire_record,
    wire_run,
)
from tests.contract.builders import run_start, started_record, uid
from tests.security import fresh_postgres_url, fresh_sqlite_url

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

KEY = "hot-routes-token-key-0123456789abcdef-0123"
WORKER = "rst_hot-routes-worker-token-0000000000000000000"
READER = "rst_hot-routes-reader-token-0000000000000000000"
ADMIN = "rst_hot-routes-admin-token-00000000000000000000"
IGNORED_HEADERS = {"x-request-id", "date"}
#: Body keys that differ between two databases by when they were written (store clock).
IGNORED_KEYS = {"request_id", "updated_at"}
#: Opaque cursors are sealed with each database's own key: compared by presence.
SEALED_KEYS = {"next_cursor"}


class Answered:
    """Outermost ASGI wrapper: which requests the hot routes answered themselves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.hot: list[bool] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http":
            self.hot.append(bool(scope.get("runtime_store.hot_route")))


@dataclass
class Side:
    client: TestClient
    answered: Answered


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: bytes | None = None
    content_type: str | None = "application/json"
    token: str | None = WORKER
    #: Whether the hot app must answer it itself (else it may or may not).
    hot: bool = False


def _side(url: str, *, hot_routes: bool, stack: ExitStack) -> Side:
    engine = create_engine(url)
    try:
        tokens = Tokens(engine, KEY)
        tokens.ensure("worker", Role.WORKER, WORKER)
        tokens.ensure("reader", Role.READER, READER)
        tokens.ensure("admin", Role.ADMIN, ADMIN)
    finally:
        engine.dispose()
    answered = Answered(
        create_app(Settings(database_url=url, token_key=SecretStr(KEY), hot_routes=hot_routes))
    )
    client = stack.enter_context(TestClient(answered, raise_server_exceptions=False))
    return Side(client, answered)


@pytest.fixture(params=["sqlite", "postgres"])
def sides(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Side, Side]]:
    with ExitStack() as stack:
        if request.param == "sqlite":
            urls = [fresh_sqlite_url(tmp_path), fresh_sqlite_url(tmp_path)]
        else:
            server: str = request.getfixturevalue("postgres_url")
            urls = [stack.enter_context(fresh_postgres_url(server)) for _ in range(2)]
        yield (
            _side(urls[0], hot_routes=True, stack=stack),
            _side(urls[1], hot_routes=False, stack=stack),
        )


def _answer(side: Side, call: Call) -> tuple[int, dict[str, str], Any]:
    headers = {}
    if call.content_type is not None:
        headers["content-type"] = call.content_type
    if call.token is not None:
        headers["authorization"] = f"Bearer {call.token}"
    response = side.client.request(call.method, call.path, content=call.body, headers=headers)
    kept = {k: v for k, v in response.headers.items() if k.lower() not in IGNORED_HEADERS}
    body: Any = response.content
    if response.content and response.headers.get("content-type", "").endswith("json"):
        body = _without_clock(response.json())
        kept.pop("content-length", None)  # the store clock's times are of one length
    return response.status_code, kept, body


def _without_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: bool(v) if k in SEALED_KEYS else _without_clock(v)
            for k, v in value.items()
            if k not in IGNORED_KEYS
        }
    if isinstance(value, list):
        return [_without_clock(item) for item in value]
    return value


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _lifecycle(session_id: str, *, hot: bool) -> list[Call]:
    """One request of every hot operation, in an order that succeeds: the first time they
    are FastAPI's (each operation's first request is), the second time the hot routes'."""
    root = run_start(session_id=session_id)
    child = run_start(session_id=session_id, parent_run_id=root.run_id)
    one_shot = run_start(session_id=session_id)
    one_shot_child = run_start(session_id=session_id, parent_run_id=root.run_id)
    alone = run_start()
    synchronous = {"run": wire_run(alone), "started": wire_record(started_record(alone))}
    session = f"/v1/sessions/{session_id}"
    run = f"/v1/runs/{root.run_id}"
    created = {"session_id": session_id, "created_at": T0_WIRE}

    def post(path: str, body: Any, token: str = ADMIN) -> Call:
        return Call("POST", path, _json(body), token=token, hot=hot)

    def get(path: str) -> Call:
        return Call("GET", path, content_type=None, token=READER, hot=hot)

    return [
        post("/v1/sessions", created),
        post("/v1/sessions", created),  # the same session again: its status
        get(session),
        get(f"{session}/status"),
        post("/v1/runs/root-starts", root_start_body(root), WORKER),
        post("/v1/runs/root-starts", root_start_body(root), WORKER),  # exact retry
        post("/v1/runs/child-starts", child_start_body(root, child), WORKER),
        post("/v1/runs/one-shot-starts", one_shot_body(one_shot), WORKER),
        post("/v1/runs/one-shot-child-starts", one_shot_child_body(root, one_shot_child), WORKER),
        post("/v1/runs/synchronous-starts", synchronous, WORKER),
        get(run),
        post(f"{run}/records", append_body(note(root, "n1")), WORKER),
        post(f"{run}/records/batch", {"records": [wire_record(note(root, "n2"))]}, WORKER),
        get(f"{run}/records"),
        get(f"{run}/transcript-records?through=3"),
        get(f"{run}/record?event_key=n1"),
        get(f"/v1/agents/{root.agent_id}/runs/{root.run_id}/memory"),
        get(f"{session}/records?limit=3"),
        post(f"{run}/cancellation", cancellation_body(root), WORKER),
        post(f"/v1/runs/{child.run_id}/suspension", suspension_body(child), WORKER),
        post(f"{run}/terminal", terminal_body(root, RunStatus.CANCELED), WORKER),
        post(f"{run}/terminal", terminal_body(root, RunStatus.COMPLETED), WORKER),  # conflict
        post(f"{session}/end", {"ended_at": T0_WIRE}),
        get(run),
    ]


def test_the_hot_routes_answer_every_request_as_fastapi_does(sides: tuple[Side, Side]) -> None:
    hot, plain = sides
    session_id = uid("sess")
    run, other, done = (run_start(session_id=session_id) for _ in range(3))
    first = append_body(note(run, "e1"))
    records = f"/v1/runs/{run.run_id}/records"
    batch = [append_body(note(run, f"b{i}"))["record"] for i in range(3)]
    transcript = f"/v1/runs/{run.run_id}/transcript-records"
    message = replace(note(run, "t1"), type="transcript_messages_appended", payload=b"[]")

    def read(path: str, *, hot: bool = True, token: str | None = READER) -> Call:
        return Call("GET", path, content_type=None, token=token, hot=hot)

    def admin(path: str, body: Any) -> Call:
        return Call("POST", path, _json(body), token=ADMIN, hot=True)

    calls = [
        *_lifecycle(uid("warm"), hot=False),  # every operation's first request is FastAPI's
        *_lifecycle(uid("sess"), hot=True),
        admin("/v1/sessions", {"session_id": session_id, "created_at": T0_WIRE}),
        *(admin("/v1/runs/root-starts", root_start_body(start)) for start in (run, other, done)),
        admin(f"/v1/runs/{done.run_id}/terminal", terminal_body(done, RunStatus.COMPLETED)),
        # The common cases, answered by the hot routes.
        Call("POST", records, _json(first), hot=True),
        Call("POST", records, _json(first), hot=True),  # exact retry
        Call(
            "POST",
            records,
            _json(append_body(replace(note(run, "e1"), payload=b"{}"))),
            hot=True,
        ),  # event_conflict, from the store
        Call(
            "POST",
            f"/v1/runs/{done.run_id}/records",
            _json(append_body(note(done, "late"))),
            hot=True,
        ),  # run_not_active
        Call(
            "POST",
            "/v1/runs/nobody/records",
            _json(append_body(replace(note(run, "x"), run_id="nobody"))),
            hot=True,
        ),
        Call("POST", f"/v1/runs/{other.run_id}/records", _json(first), hot=True),  # another run's
        Call("POST", f"{records}/batch", _json({"records": batch}), hot=True),
        Call("POST", f"{records}/batch", _json({"records": batch}), hot=True),
        Call("GET", records, token=READER, content_type=None, hot=True),
        Call("GET", f"{records}?limit=2", token=READER, content_type=None, hot=True),
        Call("GET", f"{records}?limit=2&cursor=2", token=READER, content_type=None, hot=True),
        Call("GET", f"{records}?cursor=not-a-cursor", content_type=None, hot=True),
        Call("GET", f"{records}?limit=2&limit=1", content_type=None, hot=True),
        Call("GET", "/v1/runs/nobody/records", content_type=None, hot=True),
        Call("POST", records, _json(append_body(message)), hot=True),  # record 6
        read(f"{transcript}?through=6"),
        read(f"{transcript}?through=6&limit=1"),
        read(f"{transcript}?through=6&after=6"),  # empty
        read(f"{transcript}?through=6&after=2"),  # not a transcript record
        read(f"{transcript}?through=99"),
        read(f"{transcript}?through=abc"),
        read(f"{transcript}?through=&after="),
        read(f"{transcript}?through=6&through=5"),
        read(f"{transcript}?through=6&limit=9999"),
        read("/v1/runs/nobody/transcript-records?through=1"),
        read(f"/v1/runs/{run.run_id}/record?event_key=t1"),
        read(f"/v1/runs/{run.run_id}/record?event_key=absent"),
        read(f"/v1/runs/{run.run_id}/record?event_key="),
        read(f"/v1/runs/{run.run_id}/record?event_key=%F0%9F%A6%8A&event_key=t1"),
        read("/v1/runs/nobody/record?event_key=t1"),
        read(f"/v1/agents/{run.agent_id}/runs/{run.run_id}/memory"),
        read(f"/v1/agents/{run.agent_id}/runs/nobody/memory"),
        read(f"/v1/agents/{run.agent_id}/runs/{run.run_id}/memory?extra=1"),
        Call("GET", "/v1/runs/nobody", content_type=None, hot=True),
        Call("GET", "/v1/sessions/nobody/status", content_type=None, hot=True),
        # Every edge is FastAPI's.
        Call("POST", records, b"{not json"),
        Call("POST", records, b""),
        Call("POST", records, _json({"record": {}})),
        Call("POST", records, _json(first), content_type="text/plain"),
        Call("POST", records, _json(first), content_type=None),
        Call("POST", records, _json(first), content_type="application/json; charset=utf-8"),
        Call("POST", records, _json(first), token=None),
        Call("POST", records, _json(first), token="rst_unknown"),
        Call("POST", records, _json(first), token=READER),
        Call("POST", records, b"[" * 300 + b"]" * 300),
        Call("POST", f"{records}/batch", _json({"records": []})),
        Call("POST", f"{records}/batch", _json({"records": [first["record"], {}]})),
        Call("POST", f"{records}/", _json(first)),
        Call(
            "POST",
            "/v1/runs/a%2Fb/records",
            _json(append_body(replace(note(run, "y"), run_id="a/b"))),
        ),
        Call("POST", "/v1/runs/root-starts", _json({"run": {}})),
        Call("POST", "/v1/sessions", _json({"session_id": ""})),
        Call("POST", f"/v1/sessions/{session_id}/end", _json({}), token=ADMIN),
        Call("GET", f"{records}?limit=0", content_type=None),
        Call("GET", f"{records}?limit=-1", content_type=None),
        Call("GET", f"{records}?limit=abc", content_type=None),
        Call("GET", f"{records}?limit=%205", content_type=None),
        Call("GET", f"{records}?limit=99999999999", content_type=None),
        Call("GET", records, content_type=None, token=None),
        read(transcript, hot=False),  # through is required
        read(f"{transcript}?through=6&limit=0", hot=False),
        read(f"{transcript}?through=6&limit=abc", hot=False),
        read(f"{transcript}?through=6&limit=01", hot=False),
        read(f"{transcript}?through=6", hot=False, token=None),
        read(f"/v1/runs/{run.run_id}/record", hot=False),  # event_key is required
        read(f"/v1/agents/{run.agent_id}/runs/{run.run_id}/memory", hot=False, token=None),
        read(f"/v1/agents/{run.agent_id}/runs/a%2Fb/memory", hot=False),
        Call("GET", f"/v1/runs/{run.run_id}", content_type=None, token="rst_unknown"),
        Call("PUT", records, _json(first)),
        Call("HEAD", records, content_type=None),
    ]
    for call in calls:
        assert _answer(hot, call) == _answer(plain, call), call
        if call.hot:
            assert hot.answered.hot[-1], f"the hot route did not answer {call}"
    assert sum(hot.answered.hot) >= 40, "the hot routes answered too few to compare"
    assert not any(plain.answered.hot), "the app without hot routes answered one"
