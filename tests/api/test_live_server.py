"""The served app over a real socket: health, readiness and one round trip."""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from pathlib import Path

import httpx
import pytest

from runtime_store_client import HttpStore
from tests.conftest import LiveServer, start_server, stop_server
from tests.contract.builders import new_session, start_root


def test_live_server_is_healthy_ready_and_creates_a_session(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.base_url) as http:
        assert http.get("/healthz").json() == {"status": "ok"}
        assert http.get("/readyz").json()["status"] == "ready"
        created = http.post(
            "/v1/sessions", json={"session_id": "s-live", "created_at": "2026-11-30T01:02:03.456Z"}
        )
        assert created.status_code == 200
        assert created.json() == {
            "id": "s-live",
            "status": "active",
            "created_at": "2026-11-30T01:02:03.456Z",
        } | {"ended_at": None}
        assert created.headers["x-request-id"]


# --- clients that go away --------------------------------------------------------------


def _drop(port: int, path: str, *, read: bool) -> None:
    """Ask for ``path`` and go away: after the first bytes of the answer when ``read``,
    then with a TCP reset (``SO_LINGER`` 0), as a killed client does."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        if read:
            with contextlib.suppress(OSError):
                sock.recv(64)
        time.sleep(0.05)  # the request is inside its wait when the client leaves
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_no_task_is_left_pending_when_clients_go_away(
    request: pytest.FixtureRequest, database: str, tmp_path: Path
) -> None:
    # A helper task a request leaves pending is garbage collected later and logged at
    # ERROR ("Task was destroyed but it is pending!"): every one must be cancelled and
    # awaited on every exit path, a client that went away included.
    server = start_server(request.getfixturevalue(f"{database}_url"), tmp_path / "server.log")
    try:
        with HttpStore(server.base_url) as store:
            session_id = new_session(store).id
            run_id = start_root(store, session_id).run.run_id
        port = int(server.base_url.rsplit(":", 1)[1])
        for _ in range(15):
            _drop(port, f"/v1/runs/{run_id}/wait?timeout=1", read=False)
            _drop(port, f"/v1/runs/{run_id}/records/stream", read=True)
            _drop(port, f"/v1/sessions/{session_id}/records/stream", read=True)
            _drop(port, f"/v1/sessions/{session_id}/export", read=True)
            _drop(port, "/metrics", read=False)
        with httpx.Client(base_url=server.base_url) as http:
            for _ in range(200):  # allocations: the collector runs while logging still does
                assert http.get("/metrics").status_code == 200
    finally:
        stop_server(server)
    log = server.log()
    assert "Application shutdown complete" in log
    destroyed = [line for line in log.splitlines() if "Task was destroyed" in line]
    assert len(destroyed) == 0, "\n".join(destroyed[:5])
