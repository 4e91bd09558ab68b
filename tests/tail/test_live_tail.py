"""The live tail over HTTP (CONTRACT.md 11.3), on both databases, with the real client.

Every test compares what a subscriber received with what paging returns for the same list
at the end: the same records, in the same order, each once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import httpx
import pytest
from httpx_sse import EventSource, ServerSentEvent
from sqlalchemy.engine import Engine

from runtime_store_client import (
    AsyncHttpStore,
    HttpStore,
    InvalidArgumentError,
    Record,
    RunNotFoundError,
    RunStatus,
    SessionNotFoundError,
    SessionPurgedError,
    UnavailableError,
)
from runtime_store_client.http import RecordTail
from tests.conftest import LiveServer, start_server, stop_server, wipe
from tests.contract.builders import (
    all_records,
    all_session_records,
    at,
    checkpoint,
    new_session,
    record,
    start_root,
    suspended_record,
    terminal_record,
)


def keys(records: list[Record]) -> list[tuple[str, str, str]]:
    return [(r.run_id, r.id, r.event_key) for r in records]


class Follower:
    """A tail read to its end on a thread of its own."""

    def __init__(self, tail: RecordTail) -> None:
        self.tail = tail
        self.records: list[Record] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        try:
            with self.tail:
                for item in self.tail:
                    self.records.append(item)
        except BaseException as exc:  # reported by ``result``
            self.error = exc

    def result(self, timeout: float = 20) -> list[Record]:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the stream did not end"
        if self.error is not None:
            raise self.error
        return self.records

    def wait_for(self, count: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while len(self.records) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.records) >= count, f"{len(self.records)} of {count} records arrived"


def raw_events(
    base_url: str, path: str, *, params: dict[str, str] | None = None, **headers: str
) -> Generator[ServerSentEvent, None, None]:
    """The events of one stream connection, as sent."""
    with (
        httpx.Client(base_url=base_url, timeout=httpx.Timeout(10, read=20)) as client,
        client.stream("GET", path, params=params, headers=headers) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield from EventSource(response).iter_sse()


def wait_until(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


@pytest.fixture
def http(live_server: LiveServer) -> Iterator[HttpStore]:
    with HttpStore(live_server.base_url) as store:
        yield store


# --- the sequence --------------------------------------------------------------------------


def test_run_stream_started_before_during_and_after_writes_is_the_paging_sequence(
    http: HttpStore,
) -> None:
    session_id = new_session(http).id
    run = start_root(http, session_id).run
    before = Follower(http.tail_run_records(run.run_id))
    for n in range(12):
        http.append_run_record(record(run, event_key=f"one-{n}"))
    during = Follower(http.tail_run_records(run.run_id))
    http.append_run_records(run.run_id, [record(run, event_key=f"batch-{n}") for n in range(40)])
    for n in range(12):
        http.append_run_record(record(run, event_key=f"two-{n}"))
    http.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    after = Follower(http.tail_run_records(run.run_id))
    expected = keys(all_records(http, run.run_id))
    assert len(expected) == 1 + 12 + 40 + 12 + 1
    for follower in (before, during, after):
        assert keys(follower.result()) == expected
        assert follower.tail.end == {"reason": "finished", "status": "completed"}


def test_session_stream_is_the_commit_order_of_all_its_runs_and_ends_at_purge(
    http: HttpStore,
) -> None:
    session_id = new_session(http).id
    first, second = (start_root(http, session_id).run for _ in range(2))
    follower = Follower(http.tail_session_run_records(session_id))
    writers = [
        threading.Thread(
            target=lambda run=run: [
                http.append_run_record(record(run, event_key=f"k-{n}")) for n in range(25)
            ]
        )
        for run in (first, second)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    for run in (first, second):
        http.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
    expected = keys(all_session_records(http, session_id))
    follower.wait_for(len(expected))
    http.end_session(session_id, at(1000))
    http.purge_session(session_id)
    assert keys(follower.result()) == expected
    assert follower.tail.end == {"reason": "purged"}


def test_purge_ends_the_stream_of_a_suspended_run(http: HttpStore) -> None:
    session_id = new_session(http).id
    run = start_root(http, session_id).run
    http.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    follower = Follower(http.tail_run_records(run.run_id))
    follower.wait_for(2)
    http.end_session(session_id, at(1000))
    http.purge_session(session_id)
    assert [r.type for r in follower.result()] == ["run_started", "run_suspended"]
    assert follower.tail.end == {"reason": "purged"}


def test_async_tail_follows_and_stops_with_async_with(live_server: LiveServer) -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        async with AsyncHttpStore(live_server.base_url) as store:
            with HttpStore(live_server.base_url) as writer:
                session_id = new_session(writer).id
                run = start_root(writer, session_id).run
                for n in range(5):
                    writer.append_run_record(record(run, event_key=f"a-{n}"))
                got: list[str] = []
                async with store.tail_run_records(run.run_id) as tail:
                    async for item in tail:
                        got.append(item.event_key)
                        if len(got) == 3:
                            break  # leaving ``async with`` closes the stream
                rest: list[str] = []
                tail = store.tail_run_records(run.run_id, cursor="3")
                writer.record_run_terminal(
                    run.run_id, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED)
                )
                async for item in tail:
                    rest.append(item.event_key)
                assert tail.end == {"reason": "finished", "status": "failed"}
                return got, rest

    got, rest = asyncio.run(scenario())
    assert got == ["start", "a-0", "a-1"]
    assert rest == ["a-2", "a-3", "a-4", "terminal"]


# --- event IDs and cursors ---------------------------------------------------------------


def test_event_ids_are_the_cursors_a_page_would_give(
    http: HttpStore, live_server: LiveServer
) -> None:
    session_id = new_session(http).id
    run = start_root(http, session_id).run
    for n in range(4):
        http.append_run_record(record(run, event_key=f"e-{n}"))
    http.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    run_events = list(raw_events(live_server.base_url, f"/v1/runs/{run.run_id}/records/stream"))
    assert [e.event for e in run_events] == ["record"] * 6 + ["end"]
    page = httpx.get(f"{live_server.base_url}/v1/runs/{run.run_id}/records").json()
    # ``data`` is the record exactly as a page carries it; ``id`` is its record ID.
    assert [e.json() for e in run_events[:-1]] == page["records"]
    assert [e.id for e in run_events[:-1]] == [r["id"] for r in page["records"]]

    # Session stream: each ``id`` is a cursor of the session's page endpoint.
    path = f"/v1/sessions/{session_id}/records"
    events = raw_events(live_server.base_url, f"{path}/stream")
    third = [next(events) for _ in range(3)][-1]
    events.close()
    rest = httpx.get(f"{live_server.base_url}{path}", params={"cursor": third.id}).json()
    assert [r["event_key"] for r in rest["records"]] == ["e-2", "e-3", "terminal"]
    # A page's next_cursor starts a stream right after that page.
    first_page = httpx.get(f"{live_server.base_url}{path}", params={"limit": 2}).json()
    resumed = raw_events(
        live_server.base_url, f"{path}/stream", params={"cursor": first_page["next_cursor"]}
    )
    assert next(resumed).json()["event_key"] == "e-1"
    resumed.close()


def test_last_event_id_wins_over_cursor(http: HttpStore, live_server: LiveServer) -> None:
    run = start_root(http, new_session(http).id).run
    for n in range(3):
        http.append_run_record(record(run, event_key=f"e-{n}"))
    events = raw_events(
        live_server.base_url,
        f"/v1/runs/{run.run_id}/records/stream",
        params={"cursor": "1"},
        **{"Last-Event-ID": "3"},
    )
    assert next(events).id == "4"
    events.close()


def test_errors_known_before_streaming_are_problem_responses(
    http: HttpStore, live_server: LiveServer
) -> None:
    with pytest.raises(RunNotFoundError):
        next(iter(http.tail_run_records("no-such-run")))
    with pytest.raises(SessionNotFoundError):
        next(iter(http.tail_session_run_records("no-such-session")))
    session_id = new_session(http).id
    run = start_root(http, session_id).run
    with pytest.raises(InvalidArgumentError):
        next(iter(http.tail_run_records(run.run_id, cursor="99")))
    with pytest.raises(InvalidArgumentError):
        next(iter(http.tail_session_run_records(session_id, cursor="forged")))
    http.record_run_terminal(run.run_id, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED))
    http.end_session(session_id, at(1000))
    http.purge_session(session_id)
    for path, status, code in (
        (f"/v1/runs/{run.run_id}/records/stream", 410, "session_purged"),
        (f"/v1/sessions/{session_id}/records/stream", 410, "session_purged"),
        ("/v1/runs/x/records/stream?cursor=abc", 404, "run_not_found"),
    ):
        response = httpx.get(f"{live_server.base_url}{path}")
        assert response.status_code == status
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == code
    with pytest.raises(SessionPurgedError):
        next(iter(http.tail_session_run_records(session_id)))


# --- one worker's streams --------------------------------------------------------------


@pytest.fixture(scope="module")
def small_server(sqlite_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server allowing two streams, with a heartbeat every 0.3 s."""
    server = start_server(
        sqlite_url,
        tmp_path_factory.mktemp("tail") / "small.log",
        env={"RUNTIME_STORE_MAX_STREAMS": "2", "RUNTIME_STORE_TAIL_HEARTBEAT_SECONDS": "0.3"},
    )
    yield server
    stop_server(server)


def test_streams_per_worker_are_bounded_and_heartbeats_are_comments(
    small_server: LiveServer, sqlite_engine: Engine
) -> None:
    wipe(sqlite_engine)
    with HttpStore(small_server.base_url, deadline=0.5) as store:
        session_id = new_session(store).id
        run = start_root(store, session_id).run
        path = f"/v1/runs/{run.run_id}/records/stream"
        with httpx.Client(base_url=small_server.base_url, timeout=10) as client:
            with client.stream("GET", path) as one, client.stream("GET", path) as two:
                assert one.status_code == two.status_code == 200
                metrics = client.get("/metrics").text
                assert 'runtime_store_live_streams{stream="run"} 2.0' in metrics, metrics
                refused = client.get(path)
                assert refused.status_code == 503
                assert refused.json()["code"] == "unavailable"
                assert int(refused.headers["retry-after"]) >= 1
                with pytest.raises(UnavailableError):
                    next(iter(store.tail_session_run_records(session_id)))
                # A suspended run's stream stays open: heartbeats, no end.
                store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
                lines: list[str] = []
                for line in one.iter_lines():
                    lines.append(line)
                    if sum(line.startswith(":") for line in lines) >= 3:
                        break
                assert "event: end" not in lines
                assert any(
                    line.startswith("data:") and "run_suspended" in line for line in lines
                ), lines

            # Both closed: a new stream is served again.
            def served() -> bool:
                with client.stream("GET", path) as again:
                    return again.status_code == 200

            wait_until(served)


# --- replicas, crashes, shutdown ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_records_written_on_one_replica_reach_a_subscriber_of_another(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """PostgreSQL: NOTIFY from the writing transaction; SQLite: the other process's poll."""
    main: LiveServer = request.getfixturevalue(f"{backend}_server")
    wipe(request.getfixturevalue(f"{backend}_engine"))
    other = start_server(main.database_url, tmp_path / "other.log")
    try:
        with HttpStore(main.base_url) as writer, HttpStore(other.base_url) as reader:
            session_id = new_session(writer).id
            run = start_root(writer, session_id).run
            run_follower = Follower(reader.tail_run_records(run.run_id))
            session_follower = Follower(reader.tail_session_run_records(session_id))
            run_follower.wait_for(1)
            latencies = []
            for n in range(10):
                started = time.monotonic()
                writer.append_run_record(record(run, event_key=f"r-{n}"))
                run_follower.wait_for(n + 2)
                latencies.append(time.monotonic() - started)
            writer.record_run_terminal(
                run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
            )
            expected = keys(all_records(writer, run.run_id))
            assert keys(run_follower.result()) == expected
            session_follower.wait_for(len(expected))
            writer.end_session(session_id, at(1000))
            writer.purge_session(session_id)
            assert keys(session_follower.result(timeout=15)) == expected
            # Each record arrived without the safety re-read (5 s): woken by the write.
            assert sorted(latencies)[len(latencies) // 2] < 1.0, latencies
    finally:
        stop_server(other)


def test_client_resumes_without_gap_or_repeat_when_its_workers_are_killed(
    postgres_url: str, postgres_engine: Engine, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess

    wipe(postgres_engine)
    server = start_server(postgres_url, tmp_path / "workers.log", "--workers", "2")
    try:
        with HttpStore(server.base_url, retries=10, deadline=60) as store:
            session_id = new_session(store).id
            run = start_root(store, session_id).run
            follower = Follower(store.tail_run_records(run.run_id))
            session_follower = Follower(store.tail_session_run_records(session_id))
            for n in range(30):
                store.append_run_record(record(run, event_key=f"k-{n}"))
                if n == 15:
                    follower.wait_for(10)
                    children = subprocess.run(
                        ["pgrep", "-P", str(server.process.pid)],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout.split()
                    for pid in children:  # every worker: the subscriber's one among them
                        os.kill(int(pid), signal.SIGKILL)
            store.record_run_terminal(
                run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
            )
            expected = keys(all_records(store, run.run_id))
            assert len(expected) == 32
            assert keys(follower.result(timeout=40)) == expected
            session_follower.wait_for(len(expected), timeout=30)
            store.end_session(session_id, at(1000))
            store.purge_session(session_id)
            assert keys(session_follower.result(timeout=30)) == expected
    finally:
        stop_server(server)


def test_server_shutdown_closes_streams_cleanly(sqlite_url: str, tmp_path: Path) -> None:
    import signal

    server = start_server(sqlite_url, tmp_path / "shutdown.log")
    with HttpStore(server.base_url) as store:
        run = start_root(store, new_session(store).id).run
    outcome: dict[str, object] = {}

    def follow() -> None:
        try:
            outcome["events"] = [
                e.event
                for e in raw_events(server.base_url, f"/v1/runs/{run.run_id}/records/stream")
            ]
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=follow)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    thread.join(10)
    closed = time.monotonic() - started
    assert server.process.wait(10) in (0, -signal.SIGTERM)
    # The stream ended as a complete response, without ``end`` (the run goes on: the
    # client reconnects elsewhere), and promptly.
    assert "error" not in outcome, outcome
    assert outcome["events"] == ["record"]
    assert closed < 5
