"""HttpStore beyond the contract suite: retries, problems, conversions, iteration."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from runtime_store_client import (
    EventConflictError,
    HttpStore,
    InvalidArgumentError,
    RunConflictError,
    StoreError,
    UnavailableError,
)
from tests.conftest import LiveServer, free_port, start_server, stop_server
from tests.contract.builders import (
    T0,
    all_records,
    canceled_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
)


class Counter:
    """Counts the requests an HttpStore sends (an httpx request hook)."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, request: httpx.Request) -> None:
        self.paths.append(request.url.path)

    def args(self) -> dict[str, Any]:
        return {"event_hooks": {"request": [self]}}


class DropFirstResponseTransport(httpx.HTTPTransport):
    """Sends the request to the real server, lets it commit, then loses the response.

    The client sees what it sees when a connection resets after the server answered.
    """

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.dropped: list[httpx.Response] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.url.path == self.path and not self.dropped:
            response.read()
            self.dropped.append(response)
            raise httpx.ReadError("connection reset after the server answered", request=request)
        return response


@pytest.fixture
def server(live_server: LiveServer) -> LiveServer:
    return live_server


def test_a_start_whose_response_was_lost_is_retried_as_an_exact_retry(server: LiveServer) -> None:
    transport = DropFirstResponseTransport("/v1/runs/root-starts")
    counter = Counter()
    with HttpStore(server.base_url, httpx_args={"transport": transport, **counter.args()}) as store:
        session = new_session(store)
        run = run_start(session_id=session.id)
        result = store.start_root_run(run, started_record(run), canceled_record(run))

        assert len(transport.dropped) == 1
        lost = json.loads(transport.dropped[0].content)
        assert lost["started"] == {"id": "1", "inserted": True, "session_status": "active"}
        assert counter.paths.count("/v1/runs/root-starts") == 2
        assert result.started.inserted is False
        assert result.started.id == lost["started"]["id"]
        assert [r.id for r in all_records(store, run.run_id)] == ["1"]


@pytest.fixture(scope="module")
def server_without_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A live server whose PostgreSQL does not answer: every store call is a 503."""
    log = tmp_path_factory.mktemp("logs") / "no-db.log"
    server = start_server("postgresql://postgres@127.0.0.1:9/none", log)
    yield server
    stop_server(server)


def test_503_is_retried_honouring_retry_after_then_raised(
    server_without_database: LiveServer,
) -> None:
    counter = Counter()
    with HttpStore(server_without_database.base_url, retries=2, httpx_args=counter.args()) as store:
        started = time.monotonic()
        with pytest.raises(UnavailableError) as info:
            store.load_run("run-1")
        elapsed = time.monotonic() - started
    assert len(counter.paths) == 3
    assert elapsed >= 2.0, "Retry-After: 1 must be waited before each of the 2 retries"
    assert (info.value.code, info.value.status, info.value.retry_after) == ("unavailable", 503, 1.0)


def test_retries_stop_at_the_overall_deadline(server_without_database: LiveServer) -> None:
    counter = Counter()
    with (
        # Each 503 asks for 1 s (Retry-After): a second attempt fits before 1.9 s as long as
        # the first answer takes under 0.9 s (a busy machine), and a third never does.
        HttpStore(
            server_without_database.base_url, retries=10, deadline=1.9, httpx_args=counter.args()
        ) as store,
        pytest.raises(UnavailableError),
    ):
        store.load_session_status("s-1")
    assert len(counter.paths) == 2


def test_a_refused_connection_is_unavailable_after_retries() -> None:
    counter = Counter()
    url = f"http://127.0.0.1:{free_port()}"
    with (
        HttpStore(url, retries=2, httpx_args=counter.args()) as store,
        pytest.raises(UnavailableError) as info,
    ):
        store.load_run("run-1")
    assert len(counter.paths) == 3
    assert info.value.status == 503
    assert isinstance(info.value.__cause__, httpx.ConnectError)


def test_contract_errors_are_never_retried(server: LiveServer) -> None:
    counter = Counter()
    with HttpStore(server.base_url, httpx_args=counter.args()) as store:
        session = new_session(store)
        first = start_root(store, session.id)
        changed = replace(first.run, agent_id="other-agent")
        counter.paths.clear()
        with pytest.raises(RunConflictError):
            store.start_root_run(changed, started_record(changed), canceled_record(changed))
    assert counter.paths == ["/v1/runs/root-starts"]


def test_problem_bodies_become_errors_with_code_message_status_and_ids(
    server: LiveServer,
) -> None:
    with HttpStore(server.base_url) as store:
        session = new_session(store)
        run = start_root(store, session.id).run
        store.append_run_record(record(run, event_key="e1", payload=b'{"a":1}'))
        with pytest.raises(EventConflictError) as info:
            store.append_run_record(record(run, event_key="e1", payload=b'{"a":2}'))
    error = info.value
    assert (error.code, error.status) == ("event_conflict", 409)
    assert (error.run_id, error.event_key) == (run.run_id, "e1")
    assert "e1" in error.message


def test_a_payload_that_is_not_utf8_is_refused_before_any_request(server: LiveServer) -> None:
    counter = Counter()
    with HttpStore(server.base_url, httpx_args=counter.args()) as store:
        run = run_start(session_id="s")
        with pytest.raises(InvalidArgumentError) as info:
            store.append_run_record(record(run, payload=b'{"a":"\xff"}'))
        with pytest.raises(InvalidArgumentError):
            store.append_run_record(record(run, timestamp=T0.replace(tzinfo=None)))
        with pytest.raises(InvalidArgumentError):
            store.load_run("")
    assert counter.paths == []
    assert info.value.status == 422


class _UnknownCodeHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(
            {"type": "x", "title": "Teapot", "status": 418, "detail": "short", "code": "brand_new"}
        ).encode()
        self.send_response(418)
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output quiet."""


def test_an_unknown_problem_code_becomes_a_plain_store_error() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _UnknownCodeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with (
            HttpStore(f"http://127.0.0.1:{httpd.server_address[1]}") as store,
            pytest.raises(StoreError) as info,
        ):
            store.load_run("run-1")
    finally:
        httpd.shutdown()
    assert type(info.value) is StoreError
    assert (info.value.code, info.value.status, info.value.message) == ("brand_new", 418, "short")


def test_iterators_follow_next_cursor_page_by_page(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        session = new_session(store)
        run = start_root(store, session.id).run
        for n in range(250):
            store.append_run_record(record(run, event_key=f"e{n}"))
        ids = [r.id for r in store.iter_run_records(run.run_id, limit=100)]
        assert ids == [str(n) for n in range(1, 252)]
        assert [r.id for r in store.iter_run_records(run.run_id, after="200")] == [
            str(n) for n in range(201, 252)
        ]
        session_ids = [
            (r.run_id, r.id) for r in store.iter_session_run_records(session.id, limit=7)
        ]
        assert session_ids == [(run.run_id, str(n)) for n in range(1, 252)]


def test_token_is_sent_as_a_bearer_header(server: LiveServer, tmp_path: Path) -> None:
    seen: list[str | None] = []

    def remember(request: httpx.Request) -> None:
        seen.append(request.headers.get("authorization"))

    with HttpStore(
        server.base_url, token="rs_test_token", httpx_args={"event_hooks": {"request": [remember]}}
    ) as store:
        new_session(store)
    assert seen == ["Bearer rs_test_token"]
