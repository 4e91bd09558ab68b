"""The served app over a real socket: health, readiness and one round trip."""

from __future__ import annotations

import httpx

from tests.conftest import LiveServer


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
