"""Which database serves a read, and that it never changes an answer (CONTRACT.md 14).

Cursors continue across databases, a read without a position obeys the allowed lag, a
standby that stops mid-run is skipped, and live tails and waits stay on the primary.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from runtime_store_client import HttpStore, RunStatus
from tests.conftest import stop_server
from tests.contract.builders import (
    canceled_record,
    new_session,
    run_start,
    started_record,
    terminal_record,
)

from .cluster import StreamingPair
from .conftest import ReplicatedService, start_replicated
from .test_read_your_writes import reads_served


def standby_serves_fresh_readers(service: ReplicatedService) -> None:
    """Wait until a read without a position is served by the standby: the service's
    sample of the primary's position (kept for the allowed lag) is one the standby has
    replayed, so a paused standby stays within the lag for such reads afterwards."""
    for _ in range(50):
        service.pair.catch_up()
        before = reads_served(service.server.base_url)
        with HttpStore(service.server.base_url) as reader:
            reader.list_sessions(limit=1)
        if served_delta(service, before).get("replica-1", 0) >= 1:
            return
        time.sleep(0.1)
    raise AssertionError("the standby never served a read without a position")


def served_delta(service: ReplicatedService, before: dict[str, float]) -> dict[str, float]:
    after = reads_served(service.server.base_url)
    return {name: after[name] - before.get(name, 0.0) for name in after}


@pytest.fixture
def lagging_allowed(
    streaming_pair: StreamingPair, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicatedService]:
    """A service that lets a position-less read use a replica up to an hour behind: only
    positions (a client's, a cursor's) keep such reads from the paused standby."""
    service = start_replicated(
        streaming_pair,
        tmp_path_factory.mktemp("logs"),
        RUNTIME_STORE_REPLICA_MAX_LAG_SECONDS="3600",
    )
    try:
        yield service
    finally:
        stop_server(service.server)
        streaming_pair.resume_replay()


def test_a_list_cursor_continues_on_a_replica_and_back(lagging_allowed: ReplicatedService) -> None:
    service = lagging_allowed
    pair = service.pair
    base_url = service.server.base_url
    with HttpStore(base_url) as writer, HttpStore(base_url) as reader:
        session_id = new_session(writer).id
        first = [run_start(session_id=session_id) for _ in range(3)]
        for run in first:
            writer.start_root_run(run, started_record(run), canceled_record(run))
        standby_serves_fresh_readers(service)
        pair.pause_replay()
        # Started while the standby replays nothing: only the primary has these.
        later = [run_start(session_id=session_id) for _ in range(3)]
        for run in later:
            writer.start_root_run(run, started_record(run), canceled_record(run))
        page = writer.list_session_runs(session_id, limit=2)  # the writer's position: primary
        seen = [run.run_id for run in page.runs]
        # The reader never wrote; the cursor carries the position of the page that issued
        # it, so the paused standby cannot serve the next page, lag allowed or not.
        before = reads_served(base_url)
        page = reader.list_session_runs(session_id, cursor=page.next_cursor, limit=2)
        seen += [run.run_id for run in page.runs]
        assert served_delta(service, before).get("primary", 0) >= 1
        pair.resume_replay()
        pair.catch_up()
        before = reads_served(base_url)
        while page.next_cursor:
            page = reader.list_session_runs(session_id, cursor=page.next_cursor, limit=2)
            seen += [run.run_id for run in page.runs]
        assert served_delta(service, before).get("replica-1", 0) >= 1
    assert sorted(seen) == sorted(run.run_id for run in first + later)
    assert len(seen) == len(set(seen))


def test_a_read_without_a_position_is_served_within_the_allowed_lag(
    replicated: ReplicatedService,
) -> None:
    pair = replicated.pair
    base_url = replicated.server.base_url
    with HttpStore(base_url) as writer:
        session_id = new_session(writer).id
        pair.catch_up()
        with HttpStore(base_url) as reader:  # caught up: the standby serves a fresh reader
            before = reads_served(base_url)
            assert reader.load_session(session_id).id == session_id
            assert served_delta(replicated, before).get("replica-1", 0) >= 1
        pair.pause_replay()
        run = run_start(session_id=session_id)
        writer.start_root_run(run, started_record(run), canceled_record(run))
    time.sleep(1.5)  # past RUNTIME_STORE_REPLICA_MAX_LAG_SECONDS (default 1)
    with HttpStore(base_url) as reader:  # no position: the lag rule alone decides
        before = reads_served(base_url)
        assert reader.load_run(run.run_id).status is RunStatus.RUNNING
        delta = served_delta(replicated, before)
        assert delta.get("primary", 0) >= 1
        assert delta.get("replica-1", 0) == 0


def test_a_standby_stopped_mid_run_changes_no_answer(replicated: ReplicatedService) -> None:
    pair = replicated.pair
    base_url = replicated.server.base_url
    answers: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    with HttpStore(base_url) as writer:
        session_id = new_session(writer).id

        def work() -> None:
            try:
                while not stop.is_set():
                    run = run_start(session_id=session_id)
                    writer.start_root_run(run, started_record(run), canceled_record(run))
                    writer.record_run_terminal(
                        run.run_id,
                        RunStatus.COMPLETED,
                        terminal_record(run, RunStatus.COMPLETED),
                    )
                    assert writer.load_run(run.run_id).status is RunStatus.COMPLETED
                    answers.append(len(writer.list_run_records(run.run_id).records))
            except BaseException as exc:
                errors.append(exc)

        worker = threading.Thread(target=work)
        worker.start()
        try:
            time.sleep(1.0)
            before = reads_served(base_url)
            pair.stop_standby()
            time.sleep(1.5)
            during = served_delta(replicated, before)
            # Still ready (the primary serves), the stopped standby named as unreachable.
            ready = httpx.get(f"{base_url}/readyz", timeout=10)
            pair.start_standby()
        finally:
            stop.set()
            worker.join(timeout=60)
    assert not errors, errors
    assert answers
    assert set(answers) == {2}
    assert during.get("primary", 0) > 0
    assert ready.status_code == 200, ready.text
    (standby,) = ready.json()["replicas"]
    assert (standby["replica"], standby["state"]) == ("replica-1", "unreachable"), standby
    skips = httpx.get(f"{base_url}/metrics", timeout=10).text
    assert 'runtime_store_db_replica_skips_total{reason="unreachable",replica="replica-1"}' in skips


def test_waits_and_tails_use_the_primary(replicated: ReplicatedService) -> None:
    pair = replicated.pair
    base_url = replicated.server.base_url
    with HttpStore(base_url) as writer:
        session_id = new_session(writer).id
        run = run_start(session_id=session_id)
        writer.start_root_run(run, started_record(run), canceled_record(run))
        pair.catch_up()
        pair.pause_replay()
        writer.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
    # A waiter without a position: the wait answers from the primary at once.
    response = httpx.get(f"{base_url}/v1/runs/{run.run_id}/wait", params={"timeout": 5})
    assert response.status_code == 200
    assert response.json()["status"] == "completed"
    assert "Run-Wait" not in response.headers


def test_a_browsers_reads_carry_the_position_of_its_writes_in_a_cookie(
    lagging_allowed: ReplicatedService,
) -> None:
    """The console's page loads cannot send a header: the cookie a browser's write set
    keeps its reads off a standby that has not replayed that write."""
    service = lagging_allowed
    base_url = service.server.base_url
    standby_serves_fresh_readers(service)
    service.pair.pause_replay()
    behind = service.pair.replayed()
    session_id = f"browser-{time.monotonic_ns()}"
    with httpx.Client(base_url=base_url) as browser:
        created = browser.post(
            "/v1/sessions",
            json={"session_id": session_id, "created_at": "2026-12-02T00:00:00Z"},
            headers={"Sec-Fetch-Site": "same-origin"},
        )
        assert created.status_code in (200, 201), created.text
        assert "runtime_store_position" in browser.cookies
        assert browser.get(f"/v1/sessions/{session_id}").status_code == 200
    assert service.pair.replayed() == behind, "the standby replayed while paused"
    # Without the cookie the paused standby, within the allowed hour of lag, answers.
    assert httpx.get(f"{base_url}/v1/sessions/{session_id}").status_code == 404
