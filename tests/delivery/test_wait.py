"""Waiting for a run (CONTRACT.md 13.4) on a live service over each database."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from runtime_store_client import (
    AsyncHttpStore,
    HttpStore,
    RunNotFoundError,
    RunStatus,
    SessionPurgedError,
)
from tests.conftest import LiveServer
from tests.contract.builders import (
    T0,
    checkpoint,
    new_session,
    start_root,
    suspended_record,
    terminal_record,
)


@pytest.fixture(params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest) -> LiveServer:
    live: LiveServer = request.getfixturevalue(f"{request.param}_server")
    return live


def test_a_wait_answers_when_the_terminal_status_commits(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        timer = threading.Timer(
            1.0,
            lambda: store.record_run_terminal(
                run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
            ),
        )
        started = time.monotonic()
        timer.start()
        meta = store.wait_for_run(run.run_id, timeout=20)
        elapsed = time.monotonic() - started
        timer.join()
        assert meta.status is RunStatus.COMPLETED
        assert 0.9 < elapsed < 3.0


def test_a_wait_for_a_finished_run_answers_at_once(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        store.record_run_terminal(
            run.run_id, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED)
        )
        started = time.monotonic()
        response = httpx.get(f"{server.base_url}/v1/runs/{run.run_id}/wait", params={"timeout": 30})
        assert time.monotonic() - started < 5.0  # not the 30 s the wait allows
        assert response.status_code == 200
        assert "Run-Wait" not in response.headers
        assert response.json()["status"] == "failed"


def test_a_wait_times_out_with_the_current_meta_and_the_header(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        started = time.monotonic()
        response = httpx.get(
            f"{server.base_url}/v1/runs/{run.run_id}/wait", params={"timeout": 1}, timeout=10
        )
        assert 0.9 < time.monotonic() - started < 3.0
        assert response.status_code == 200
        assert response.headers["Run-Wait"] == "timeout"
        assert response.json()["status"] == "running"
        # The client retries timed-out waits until its own timeout, then answers the meta.
        meta = store.wait_for_run(run.run_id, timeout=1.5)
        assert meta.status is RunStatus.RUNNING


def test_the_timeout_is_a_number_in_json_syntax(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
    url = f"{server.base_url}/v1/runs/{run.run_id}/wait"
    # Python's float() reads each of these; CONTRACT.md 13.4 asks for a number.
    for timeout in ("1_0", "+5", "05", "5.", ".5", "inf", "nan", " 5"):
        response = httpx.get(url, params={"timeout": timeout})
        assert response.status_code == 422, (timeout, response.text)
        assert response.json()["code"] == "invalid_argument"
    for timeout in ("5", "0.5", "1e1", "0"):  # JSON numbers; the run finished: at once
        response = httpx.get(url, params={"timeout": timeout})
        assert response.status_code == 200, (timeout, response.text)


def test_until_stopped_also_answers_on_a_suspension(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
        assert store.wait_for_run(run.run_id, "stopped", timeout=5).status is RunStatus.SUSPENDED
        response = httpx.get(
            f"{server.base_url}/v1/runs/{run.run_id}/wait",
            params={"timeout": 0.5, "until": "finished"},
        )
        assert response.headers["Run-Wait"] == "timeout"


def test_a_wait_on_an_unknown_run_is_404_and_on_a_purged_one_410(server: LiveServer) -> None:
    with HttpStore(server.base_url) as store:
        with pytest.raises(RunNotFoundError):
            store.wait_for_run("no-such-run", timeout=1)
        session = new_session(store).id
        run = start_root(store, session).run
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
        store.end_session(session, T0)
        store.purge_session(session)
        with pytest.raises(SessionPurgedError):
            store.wait_for_run(run.run_id, timeout=1)
        response = httpx.get(f"{server.base_url}/v1/runs/{run.run_id}/wait", params={"timeout": 61})
        assert response.status_code == 422


def test_the_async_client_waits_too(server: LiveServer) -> None:
    async def scenario() -> RunStatus:
        async with AsyncHttpStore(server.base_url) as store:
            session = await store.create_session(f"s-{time.time_ns()}", T0)
            with HttpStore(server.base_url) as sync:
                run = start_root(sync, session.id).run

                async def finish() -> None:
                    await asyncio.sleep(0.5)
                    await store.record_run_terminal(
                        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
                    )

                task = asyncio.create_task(finish())
                meta = await store.wait_for_run(run.run_id, timeout=10)
                await task
                return meta.status

    assert asyncio.run(scenario()) is RunStatus.COMPLETED
