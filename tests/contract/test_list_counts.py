"""The operator lists' counts (issue 33), on every backend: sessions and runs per status,
each bounded by ``limit``, with exactly the filters of ``list_sessions`` and
``search_runs``; and record counts of runs and sessions by ID.

Each test starts from an empty database (the ``store`` fixture wipes it). Over HTTP the
real client calls ``GET /v1/session-counts``, ``/v1/run-counts`` and ``/v1/record-counts``;
the reader-token test calls them with raw requests on a service with tokens on.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Protocol

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine

from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage.access.tokens import Tokens
from runtime_store_client import (
    AsyncHttpStore,
    InvalidArgumentError,
    RunStart,
    RunStatus,
    SessionStatus,
)
from runtime_store_client.protocols import AsyncRunCounts, RunCounts
from tests.contract.builders import (
    Backend,
    at,
    canceled_record,
    checkpoint,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)
from tests.contract.test_search import all_runs, all_sessions


class Counting(Backend, RunCounts, Protocol):
    """The ``store`` fixture's object: every contract protocol and the counts."""


def root(store: Backend, session_id: str, ms: int, **kw: Any) -> RunStart:
    run = run_start(session_id=session_id, started_at=at(ms), **kw)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


def child(store: Backend, parent: RunStart, ms: int, **kw: Any) -> RunStart:
    run = run_start(
        session_id=parent.session_id, parent_run_id=parent.run_id, started_at=at(ms), **kw
    )
    store.start_child_run(run, link_record(parent, run), started_record(run), canceled_record(run))
    return run


def finish(store: Backend, run: RunStart, status: RunStatus) -> None:
    reason = "engine_canceled" if status is RunStatus.CANCELED else ""
    store.record_run_terminal(run.run_id, status, terminal_record(run, status, reason=reason))


def suspend(store: Backend, run: RunStart) -> None:
    store.record_run_suspension(run.run_id, checkpoint("cp"), suspended_record(run, "cp"))


def seed_runs(store: Backend) -> dict[str, str]:
    """Runs of every status over two sessions, two agents, a parent, labels and times."""
    one, two = uid("sess"), uid("sess")
    for session_id in (one, two):
        store.create_session(session_id, at(0))
    parent = root(store, one, 100, agent_id="planner", labels={"team": "search", "env": "prod"})
    for i, status in enumerate(RunStatus):
        for session_id, agent in ((one, "planner"), (two, "worker")):
            ms = 200 + 10 * i
            labels = {"team": "search"} if i % 2 else {"team": "ads", "env": "prod"}
            run = root(store, session_id, ms, agent_id=agent, labels=labels)
            kid = child(store, parent, ms + 1, agent_id=agent)
            for started in (run, kid):
                if status is RunStatus.SUSPENDED:
                    suspend(store, started)
                elif status is not RunStatus.RUNNING:
                    finish(store, started, status)
    return {"one": one, "two": two, "parent": parent.run_id}


def test_every_store_and_both_clients_implement_the_counts_protocols(store: Counting) -> None:
    assert isinstance(store, RunCounts)
    assert isinstance(AsyncHttpStore("http://127.0.0.1:9"), AsyncRunCounts)  # never sent


def test_run_counts_are_what_search_finds_per_status_for_each_filter(store: Counting) -> None:
    seeded = seed_runs(store)
    combinations: list[dict[str, Any]] = [
        {},
        {"session_id": seeded["one"]},
        {"agent_id": "worker"},
        {"parent_run_id": seeded["parent"]},
        {"labels": {"team": "search"}},
        {"labels": {"team": "ads", "env": "prod"}, "session_id": seeded["two"]},
        {"started_after": at(220), "started_before": at(240)},
        {"agent_id": "planner", "labels": {"env": "prod"}, "started_after": at(150)},
        {"session_id": "no-such-session"},
    ]
    for filters in combinations:
        counts = store.count_runs(**filters)
        assert counts.limit == 10_000
        assert set(counts.counts) == {str(status) for status in RunStatus}, filters
        for status in RunStatus:
            found = all_runs(store, limit=100, statuses=[status], **filters)
            assert counts.counts[str(status)] == len(found), (filters, status)
    assert sum(store.count_runs().counts.values()) == 1 + 4 * len(RunStatus)


def test_session_counts_are_what_the_list_holds_per_status(store: Counting) -> None:
    for ms, ended in ((10, False), (20, True), (30, True), (40, False), (50, False)):
        session_id = uid("sess")
        store.create_session(session_id, at(ms))
        if ended:
            store.end_session(session_id, at(ms + 1))
    combinations: list[dict[str, Any]] = [{}, {"created_after": at(20)}, {"created_before": at(40)}]
    for filters in combinations:
        counts = store.count_sessions(**filters)
        assert set(counts.counts) == {str(status) for status in SessionStatus}
        for status in SessionStatus:
            found = all_sessions(store, statuses=[status], **filters)
            assert counts.counts[str(status)] == len(found), (filters, status)
    assert store.count_sessions().counts == {"active": 3, "ended": 2}
    assert store.count_sessions(created_after=at(60)).counts == {"active": 0, "ended": 0}


def test_a_count_stops_at_its_limit(store: Counting) -> None:
    session_id = uid("sess")
    store.create_session(session_id, at(0))
    for ms in range(5):
        root(store, session_id, ms)
    capped = store.count_runs(session_id=session_id, limit=3)
    assert capped.counts["running"] == 3
    assert capped.limit == 3
    assert capped.capped("running")
    assert not capped.capped("completed")
    assert store.count_runs(session_id=session_id, limit=5).counts["running"] == 5
    assert store.count_runs(session_id=session_id, limit=6).counts["running"] == 5
    for _ in range(2):
        store.create_session(uid("sess"), at(1))
    assert store.count_sessions(limit=2).counts["active"] == 2
    assert store.count_sessions(limit=10).counts["active"] == 3


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.count_runs(labels={"": "x"}),
        lambda s: s.count_runs(labels={f"k{i}": "v" for i in range(65)}),
        lambda s: s.count_runs(started_after=datetime(2026, 1, 1)),  # naive: no zone
        lambda s: s.count_sessions(created_before=datetime(2026, 1, 1)),
        lambda s: s.count_runs(limit=0),
        lambda s: s.count_sessions(limit=10_001),
        lambda s: s.count_records(run_ids=[f"r{i}" for i in range(60)], session_ids=["s"] * 41),
    ],
    ids=[
        "empty-label-key",
        "65-labels",
        "naive-time",
        "naive-created",
        "limit-0",
        "limit-10001",
        "101-ids",
    ],
)
def test_invalid_filters_and_limits_are_invalid_argument(store: Counting, call: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        call(store)


def test_record_counts_are_each_runs_and_sessions_records(store: Counting) -> None:
    session_id, quiet = uid("sess"), uid("sess")
    store.create_session(session_id, at(0))
    store.create_session(quiet, at(0))
    first = root(store, session_id, 1)
    second = root(store, session_id, 2)
    for _ in range(3):
        store.append_run_record(record(first))
    counts = store.count_records(
        run_ids=[first.run_id, second.run_id, "no-such-run"],
        session_ids=[session_id, quiet, "no-such-session"],
    )
    # run_started is each run's first record.
    assert counts.runs == {first.run_id: 4, second.run_id: 1}
    assert counts.sessions == {session_id: 5, quiet: 0}
    assert store.count_records().runs == {}


def test_record_counts_leave_out_a_purged_session_and_its_runs(store: Counting) -> None:
    gone = uid("sess")
    store.create_session(gone, at(0))
    run = root(store, gone, 1)
    finish(store, run, RunStatus.COMPLETED)
    assert store.count_records(run_ids=[run.run_id], session_ids=[gone]).sessions == {gone: 2}
    store.end_session(gone, at(5))
    store.purge_session(gone)
    counts = store.count_records(run_ids=[run.run_id], session_ids=[gone])
    assert (counts.runs, counts.sessions) == ({}, {})


# --- over HTTP with tokens on ------------------------------------------------------------

KEY = "list-counts-token-key"


@pytest.fixture
def reader_http(engine: Engine) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """The app with tokens on, and a reader's headers."""
    registry = Tokens(engine, KEY)
    token = registry.create(uid("reader"), Role.READER)
    url = engine.url.render_as_string(hide_password=False)
    app = create_app(Settings(database_url=url, token_key=SecretStr(KEY)))
    try:
        with TestClient(app, raise_server_exceptions=False) as http:
            yield http, {"Authorization": f"Bearer {token}"}
    finally:  # a shared database with active tokens would keep key-less servers from starting
        with engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM api_tokens")


def test_a_reader_may_count_and_bad_filters_are_invalid_argument(
    reader_http: tuple[TestClient, dict[str, str]],
) -> None:
    http, reader = reader_http
    for path in ("/v1/session-counts", "/v1/run-counts", "/v1/record-counts?run_id=r"):
        assert http.get(path).status_code == 401, path
        assert http.get(path, headers=reader).status_code == 200, path
    body = http.get("/v1/run-counts?limit=7", headers=reader).json()
    assert body == {"counts": {str(status): 0 for status in RunStatus}, "limit": 7}
    for query in (
        "/v1/run-counts?label=nocolon",
        "/v1/run-counts?label=:value",
        "/v1/run-counts?started_after=yesterday",
        "/v1/run-counts?limit=0",
        "/v1/run-counts?limit=10001",
        "/v1/session-counts?created_before=2026-01-01T00:00:00",  # no offset
        "/v1/record-counts?" + "&".join(f"run_id=r{i}" for i in range(101)),
    ):
        response = http.get(query, headers=reader)
        assert response.status_code == 422, query
        assert response.json()["code"] == "invalid_argument", query
    # Two values for one key: no run can match, and nothing is read.
    both = http.get("/v1/run-counts?label=a:1&label=a:2", headers=reader).json()
    assert set(both["counts"].values()) == {0}
