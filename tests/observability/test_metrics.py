"""``GET /metrics`` of one process (``create_app``): what each request, record, problem,
transaction, pool checkout and purge adds, and who may read it.

Values are process-wide, so every test compares two scrapes of its own app.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy.engine import Engine
from starlette.testclient import TestClient

from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from runtime_store_client import RunStatus
from tests.api.conftest import client_for
from tests.api.wire_builders import (
    append_body,
    create_session,
    end_session,
    finish,
    note,
    ok,
    start_root,
)
from tests.observability import Samples
from tests.security import fresh_sqlite_url

REQUESTS = "runtime_store_http_requests_total"
OUTCOMES = "runtime_store_outcomes_total"
LATENCY_COUNT = "runtime_store_http_request_duration_seconds_count"


def scrape(http: httpx.Client) -> Samples:
    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return Samples.parse(response.text)


def _url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


IN_USE, OVERFLOW = "runtime_store_db_pool_in_use", "runtime_store_db_pool_overflow"


def _scrape_when_in_use(http: TestClient, in_use: int) -> Samples:
    """A scrape whose in-use gauge reads ``in_use``, waiting out a moment when a background
    thread (SQLite's import sweep) holds a connection of its own; the last scrape if none
    does within two seconds."""
    samples = scrape(http)
    for _ in range(100):
        if samples.get(IN_USE) == in_use:
            break
        time.sleep(0.02)
        samples = scrape(http)
    return samples


def test_metrics_count_requests_record_outcomes_and_problems_by_operation(engine: Engine) -> None:
    # No webhook dispatcher: its polls would hold a connection of their own at a scrape.
    app = create_app(Settings(database_url=_url(engine), webhook_dispatch=False))
    with TestClient(app, raise_server_exceptions=False) as http:
        session_id = create_session(http)
        run = start_root(http, session_id)
        before = scrape(http)
        path = f"/v1/runs/{run.run_id}/records"
        for key in ("a", "b", "c"):
            ok(http.post(path, json=append_body(note(run, key))))
        ok(http.post(path, json=append_body(note(run, "a"))))  # an exact retry
        changed = note(run, "a", payload=b'{"changed":true}')
        assert http.post(path, json=append_body(changed)).status_code == 409
        batch = {"records": [append_body(note(run, k))["record"] for k in ("b", "d")]}
        ok(http.post(f"{path}/batch", json=batch))
        assert http.get("/v1/runs/no-such-run").status_code == 404
        after = scrape(http)
        # Every request gave its connection back (a background sweep may hold one briefly).
        settled = _scrape_when_in_use(http, 0)

    moved = after.minus(before)
    expected = [
        (REQUESTS, {"operation": "append-run-record", "status": "2xx"}, 4),
        (REQUESTS, {"operation": "append-run-record", "status": "4xx"}, 1),
        (REQUESTS, {"operation": "append-run-records", "status": "2xx"}, 1),
        (REQUESTS, {"operation": "load-run", "status": "4xx"}, 1),
        (REQUESTS, {"operation": "metrics", "status": "2xx"}, 1),  # the first scrape
        (OUTCOMES, {"operation": "append-run-record", "outcome": "inserted"}, 3),
        (OUTCOMES, {"operation": "append-run-record", "outcome": "exact_retry"}, 1),
        (OUTCOMES, {"operation": "append-run-record", "outcome": "event_conflict"}, 1),
        (OUTCOMES, {"operation": "append-run-records", "outcome": "inserted"}, 1),
        (OUTCOMES, {"operation": "append-run-records", "outcome": "exact_retry"}, 1),
        (OUTCOMES, {"operation": "load-run", "outcome": "run_not_found"}, 1),
        (LATENCY_COUNT, {"operation": "append-run-record"}, 5),
        (LATENCY_COUNT, {"operation": "append-run-records"}, 1),
        (LATENCY_COUNT, {"operation": "load-run"}, 1),
        (LATENCY_COUNT, {"operation": "metrics"}, 1),
    ]
    for name, labels, count in expected:
        assert moved.pop((name, frozenset(labels.items())), 0) == count, (name, labels)
    # Nothing else counted requests or outcomes; the writes and reads took transactions.
    assert not [key for key in moved if key[0] in (REQUESTS, OUTCOMES, LATENCY_COUNT)], moved
    writes = ("runtime_store_db_transaction_duration_seconds_count", frozenset({("mode", "write")}))
    assert moved[writes] >= 6
    assert settled.get(IN_USE) == 0


def test_a_path_no_route_serves_is_counted_under_one_fixed_label(engine: Engine) -> None:
    secret_looking = f"rst_{uuid.uuid4().hex}"
    with client_for(_url(engine)) as http:
        before = scrape(http)
        assert http.get(f"/v1/nothing/{secret_looking}").status_code == 404
        assert http.post(f"/{secret_looking}", json={}).status_code == 404
        text = http.get("/metrics").text
    moved = Samples.parse(text).minus(before)
    assert moved[(REQUESTS, frozenset({("operation", "other"), ("status", "4xx")}))] == 2
    assert secret_looking not in text
    operations = Samples.parse(text).label_values("operation")
    assert all(operation == "other" or "/" not in operation for operation in operations)


def test_pool_gauges_follow_checkouts_beyond_the_pool_size(sqlite_url: str) -> None:
    # No webhook dispatcher: its polls would check out connections of their own.
    app = create_app(Settings(database_url=sqlite_url, db_pool_size=1, webhook_dispatch=False))
    with TestClient(app) as http:
        before = _scrape_when_in_use(http, 0)
        engine: Engine = app.state.engine
        with engine.connect(), engine.connect():  # the pool's one, then one of overflow
            during = _scrape_when_in_use(http, 2)
        after = _scrape_when_in_use(http, 0)
    assert before.get(IN_USE) == 0
    assert during.get(IN_USE) == 2
    assert during.get(OVERFLOW) - before.get(OVERFLOW) == pytest.approx(1)
    assert after.get(IN_USE) == 0
    assert after.get(OVERFLOW) == before.get(OVERFLOW)
    assert before.get("runtime_store_db_pool_size") >= 1
    assert before.get("runtime_store_db_pool_max_overflow") >= 4


def test_transaction_retries_and_the_unavailable_answer_are_counted() -> None:
    unreachable = "postgresql://nobody@127.0.0.1:9/nothing"
    # No webhook dispatcher: its polls of the same database would be counted too.
    settings = Settings(database_url=unreachable, webhook_dispatch=False)
    with TestClient(create_app(settings)) as http:
        before = scrape(http)
        body = {"session_id": "s1", "created_at": "2026-11-30T01:02:03.456Z"}
        response = http.post("/v1/sessions", json=body)
        after = scrape(http)
    assert response.status_code == 503, response.text
    moved = after.minus(before)
    retries = ("runtime_store_db_transaction_retries_total", frozenset({("reason", "transient")}))
    assert moved[retries] == 4  # five attempts
    assert moved[("runtime_store_db_transactions_unavailable_total", frozenset())] == 1
    outcome = frozenset({("operation", "create-session"), ("outcome", "unavailable")})
    assert moved[(OUTCOMES, outcome)] == 1


def test_purged_rows_are_counted_by_table(engine: Engine) -> None:
    with client_for(_url(engine)) as http:
        session_id = create_session(http)
        run = start_root(http, session_id)
        for key in ("a", "b"):
            ok(http.post(f"/v1/runs/{run.run_id}/records", json=append_body(note(run, key))))
        finish(http, run, RunStatus.COMPLETED)
        end_session(http, session_id)
        before = scrape(http)
        assert http.delete(f"/v1/sessions/{session_id}").status_code in (200, 204)
        after = scrape(http)
    purged = ("runtime_store_purged_rows_total", frozenset({("table", "run_records")}))
    assert after.minus(before)[purged] == 4  # started, two notes, completed


def test_build_info_names_the_running_version(sqlite_url: str) -> None:
    with client_for(sqlite_url) as http:
        samples = scrape(http)
    versions = [
        dict(labels)["version"]
        for name, labels in samples.values
        if name == "runtime_store_build_info"
    ]
    assert versions == ["0.1.0"]


# --- who may read it -------------------------------------------------------------------

TOKEN_KEY = "metrics-token-key-0123456789abcdef"


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    """A fresh SQLite file with one token per role; ``url`` names the file."""
    url = fresh_sqlite_url(tmp_path)
    engine = create_engine(url)
    try:
        store = Tokens(engine, TOKEN_KEY)
        made = {role.value: store.create(role.value, role) for role in Role}
    finally:
        engine.dispose()
    return {"url": url, **made}


def _app(tokens: dict[str, str], *, open_to_loopback: bool = False) -> TestClient:
    settings = Settings(
        database_url=tokens["url"],
        token_key=SecretStr(TOKEN_KEY),
        metrics_open_to_loopback=open_to_loopback,
    )
    return TestClient(create_app(settings), raise_server_exceptions=False)


def test_metrics_need_a_token_that_may_read_when_tokens_are_on(tokens: dict[str, str]) -> None:
    with _app(tokens) as http:
        refused = http.get("/metrics")
        assert refused.status_code == 401
        assert refused.json()["code"] == "unauthenticated"
        for role in ("reader", "worker", "admin"):
            headers = {"Authorization": f"Bearer {tokens[role]}"}
            assert http.get("/metrics", headers=headers).status_code == 200, role


def test_loopback_scrapers_need_no_token_only_when_the_setting_says_so(
    tokens: dict[str, str],
) -> None:
    for open_to_loopback, expected in ((False, 401), (True, 200)):
        app = _app(tokens, open_to_loopback=open_to_loopback).app
        with TestClient(app, client=("127.0.0.1", 50000)) as local:
            assert local.get("/metrics").status_code == expected, open_to_loopback
        with TestClient(app, client=("192.0.2.7", 50000)) as remote:
            assert remote.get("/metrics").status_code == 401


def test_metrics_switched_off_are_not_served_and_not_counted(sqlite_url: str) -> None:
    settings = Settings(database_url=sqlite_url, metrics=False)
    with client_for(sqlite_url) as counting, TestClient(create_app(settings)) as quiet:
        before = scrape(counting)
        assert quiet.get("/metrics").status_code == 404
        create_session(quiet)
        after = scrape(counting)
    counted = [
        dict(labels)["operation"] for name, labels in after.minus(before) if name == REQUESTS
    ]
    assert counted == ["metrics"]  # the counting app's own first scrape, nothing of the other
