"""A real ``runtime-store serve`` bounds its connections (docs/reliability.md).

One server with small bounds (headers within 2 s, bodies within 2 s, 3 s of keep-alive, 50
connections) is flooded with more idle, slow-header and slow-body sockets than it holds.
It closes every one of them itself, refuses what is beyond the cap with a ``503`` problem
at once, keeps serving the connections it already holds, and serves a new client again
once the slow sockets are gone. Every wait has a generous bound; none measures speed.
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from app.serving import FD_HEADROOM, connection_cap
from tests.conftest import LiveServer, start_server, stop_server

HEADER_TIMEOUT_S = 2
BODY_TIMEOUT_S = 2
KEEP_ALIVE_S = 3
MAX_CONNECTIONS = 50
#: Generous bound on anything the server must do after one of the timeouts above.
CLOSE_WITHIN_S = 15

PROBLEM_JSON = "application/problem+json"


@pytest.fixture(scope="module")
def server(sqlite_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = {
        "RUNTIME_STORE_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT_S),
        "RUNTIME_STORE_BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT_S),
        "RUNTIME_STORE_KEEP_ALIVE_SECONDS": str(KEEP_ALIVE_S),
        "RUNTIME_STORE_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
    }
    log = tmp_path_factory.mktemp("logs") / "bounded-server.log"
    live = start_server(sqlite_url, log, env=env)
    yield live
    stop_server(live)
    assert "Traceback" not in live.log(), live.log()


def _address(server: LiveServer) -> tuple[str, int]:
    host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _open(server: LiveServer, count: int, sending: bytes = b"") -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(_address(server), timeout=5)
        if sending:
            sock.sendall(sending)
        sockets.append(sock)
    return sockets


def _read_until_closed(sockets: list[socket.socket], within: float) -> list[bytes]:
    """Everything the server sent on each socket until it closed it; fails if it does not
    close every socket ``within`` seconds."""
    received = dict.fromkeys(sockets, b"")
    selector = selectors.DefaultSelector()
    for sock in sockets:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, data=sock)
    deadline = time.monotonic() + within
    open_count = len(sockets)
    try:
        while open_count:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{open_count} of {len(sockets)} sockets still open"
            for key, _ in selector.select(remaining):
                ready: socket.socket = key.data
                try:
                    data = ready.recv(65536)
                except ConnectionResetError:
                    data = b""
                if data:
                    received[ready] += data
                    continue
                selector.unregister(ready)
                open_count -= 1
    finally:
        selector.close()
        for sock in sockets:
            sock.close()
    return [received[sock] for sock in sockets]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: dict[str, object]


def _parse(raw: bytes) -> Answer:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(int(status_line.split()[1]), headers, json.loads(body))


def _assert_problem(answer: Answer, status: int, code: str) -> None:
    assert answer.status == status, answer
    assert answer.headers["content-type"] == PROBLEM_JSON, answer
    assert answer.headers["connection"] == "close", answer
    assert answer.body["code"] == code, answer
    assert answer.body["status"] == status, answer
    assert answer.body["type"] == f"urn:runtime-store:problem:{code}", answer
    assert answer.body["request_id"] == answer.headers["x-request-id"], answer


def _served_again(server: LiveServer) -> httpx.Response:
    """A new client's ``/healthz``, retried while the server is still at its cap."""
    deadline = time.monotonic() + CLOSE_WITHIN_S
    while True:
        response = httpx.get(f"{server.base_url}/healthz", timeout=5)
        if response.status_code != 503 or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


def test_idle_and_slow_header_sockets_beyond_the_cap_are_closed_without_an_answer(
    server: LiveServer,
) -> None:
    with httpx.Client(base_url=server.base_url, timeout=5) as established:
        assert established.get("/healthz").status_code == 200

        idle = _open(server, 30)
        slow_headers = _open(server, 30, b"GET /healthz HTTP/1.1\r\nHost: loc")
        # 61 connections: beyond the cap, a new client is refused at once, cleanly ...
        refused = httpx.get(f"{server.base_url}/healthz", timeout=5)
        assert refused.status_code == 503, refused.text
        assert refused.headers["content-type"] == PROBLEM_JSON
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["code"] == "unavailable"
        assert refused.json()["request_id"] == refused.headers["x-request-id"]
        # ... while the connection the server already held is served as before.
        assert established.get("/healthz").status_code == 200

    # The server closes every slow socket itself, and answers none of them.
    assert _read_until_closed(idle + slow_headers, within=CLOSE_WITHIN_S) == [b""] * 60
    assert _served_again(server).status_code == 200


def test_a_stalled_body_is_cut_with_a_408_problem_and_one_beyond_the_cap_refused(
    server: LiveServer,
) -> None:
    head = (
        b"POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    stalled = _open(server, 60, head + b'{"session_id": "s-')

    answers = [_parse(raw) for raw in _read_until_closed(stalled, within=CLOSE_WITHIN_S)]
    timed_out = [answer for answer in answers if answer.status == 408]
    refused = [answer for answer in answers if answer.status == 503]
    assert len(timed_out) + len(refused) == 60, [answer.status for answer in answers]
    assert 0 < len(timed_out) <= MAX_CONNECTIONS
    assert len(refused) >= 60 - MAX_CONNECTIONS
    for answer in timed_out:
        _assert_problem(answer, 408, "request_timeout")
    for answer in refused:
        _assert_problem(answer, 503, "unavailable")
        assert answer.headers["retry-after"] == "1"
    assert _served_again(server).status_code == 200


def test_a_body_that_arrives_in_time_is_served_though_it_came_in_parts(
    server: LiveServer,
) -> None:
    body = json.dumps({"session_id": "s-parts", "created_at": "2026-11-30T01:02:03.456Z"})
    head = (
        f"POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    (sock,) = _open(server, 1, head + body[:10].encode())
    time.sleep(BODY_TIMEOUT_S / 4)
    sock.sendall(body[10:].encode())
    (raw,) = _read_until_closed([sock], within=CLOSE_WITHIN_S)
    answer = _parse(raw)
    assert answer.status == 200, answer
    assert answer.body["id"] == "s-parts"


def test_an_idle_kept_alive_connection_is_closed_after_its_answer(server: LiveServer) -> None:
    (sock,) = _open(server, 1, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    (raw,) = _read_until_closed([sock], within=CLOSE_WITHIN_S)
    answer = _parse(raw)
    assert answer.status == 200
    assert answer.body == {"status": "ok"}
    assert "connection" not in answer.headers  # kept alive, then closed when idle


def test_a_later_request_that_stalls_in_its_headers_is_closed_without_an_answer(
    server: LiveServer,
) -> None:
    (sock,) = _open(server, 1, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    first = b""
    while not first.endswith(b'{"status":"ok"}'):
        data = sock.recv(65536)
        assert data, first
        first += data
    assert _parse(first).status == 200
    # Its first byte ends the keep-alive wait; the header deadline closes it from there.
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")
    assert _read_until_closed([sock], within=CLOSE_WITHIN_S) == [b""]


def test_the_cap_leaves_room_for_the_database_below_the_open_file_limit() -> None:
    assert connection_cap(1000, db_pool_size=10, file_limit=1_048_576) == 1000
    assert connection_cap(1000, db_pool_size=10, file_limit=1024) == 1024 - FD_HEADROOM - 14
    assert connection_cap(1000, db_pool_size=10, file_limit=100) == 1


def test_serve_reports_its_bounds(server: LiveServer) -> None:
    assert (
        f"per worker: at most {MAX_CONNECTIONS} connections; headers within "
        f"{HEADER_TIMEOUT_S} s, bodies within {BODY_TIMEOUT_S} s, idle connections kept "
        f"{KEEP_ALIVE_S} s"
    ) in server.log()
