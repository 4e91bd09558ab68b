"""``iter_sessions`` / ``iter_runs`` on both HTTP clients: every match, page by page."""

from __future__ import annotations

import asyncio

from runtime_store_client import AsyncHttpStore, HttpStore, RunStatus, SessionStatus
from tests.conftest import LiveServer
from tests.contract.builders import at, canceled_record, run_start, started_record


def _seed(store: HttpStore) -> list[str]:
    run_ids = []
    for n in range(5):
        store.create_session(f"s-{n}", at(n))
        run = run_start(session_id=f"s-{n}", started_at=at(n), labels={"team": "a"})
        store.start_root_run(run, started_record(run), canceled_record(run))
        run_ids.append(run.run_id)
    store.end_session("s-0", at(10))
    return run_ids


def test_iterators_follow_every_page(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        run_ids = _seed(store)
        sessions = [s.id for s in store.iter_sessions(limit=2)]
        assert sessions == ["s-4", "s-3", "s-2", "s-1", "s-0"]
        active = store.iter_sessions(limit=2, statuses=[SessionStatus.ACTIVE])
        assert [s.id for s in active] == ["s-4", "s-3", "s-2", "s-1"]
        runs = store.iter_runs(limit=2, labels={"team": "a"}, statuses=[RunStatus.RUNNING])
        assert [r.run_id for r in runs] == run_ids[::-1]


def test_async_iterators_follow_every_page(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        run_ids = _seed(store)

    async def collect() -> tuple[list[str], list[str]]:
        async with AsyncHttpStore(live_server.base_url) as store:
            sessions = [s.id async for s in store.iter_sessions(limit=2)]
            runs = [r.run_id async for r in store.iter_runs(limit=3, agent_id="agent-1")]
            return sessions, runs

    sessions, runs = asyncio.run(collect())
    assert sessions == ["s-4", "s-3", "s-2", "s-1", "s-0"]
    assert runs == run_ids[::-1]
