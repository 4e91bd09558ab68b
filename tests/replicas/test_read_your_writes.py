"""Read replicas: a read directly after a write sees it (CONTRACT.md 14).

A real primary and a real hot standby (cluster.py) under a live service configured with
``RUNTIME_STORE_READ_DATABASE_URLS``. With the standby's replay paused, any read the
service sent to it would miss the writes made since; every read operation is compared,
after each kind of write, with what an in-process store on the primary reads. With replay
running, the standby serves reads (the metrics say so) and every answer is still the
primary's.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import httpx

from app.storage import SqlStore, create_engine
from runtime_store_client import (
    HttpStore,
    MemoryEvent,
    RunStatus,
    StoreError,
)
from tests.contract.builders import (
    T0,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    new_session,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)

from .conftest import ReplicatedService


def reads_served(base_url: str) -> dict[str, float]:
    """``runtime_store_db_reads_served_total`` by database, from ``/metrics``."""
    served: dict[str, float] = {}
    for line in httpx.get(f"{base_url}/metrics", timeout=10).text.splitlines():
        if line.startswith("runtime_store_db_reads_served_total{"):
            labels, _, value = line.partition("} ")
            database = labels.split('database="', 1)[1].split('"', 1)[0]
            served[database] = served.get(database, 0.0) + float(value)
    return served


def _pages(read: Callable[[str], Any], items: str) -> list[Any]:
    """Every item of a paged list, following its cursors."""
    seen: list[Any] = []
    cursor = ""
    while True:
        page = read(cursor)
        seen.extend(getattr(page, items))
        if not page.next_cursor:
            return seen
        cursor = page.next_cursor


def view(store: Any, sessions: list[str], runs: list[tuple[str, str]]) -> list[object]:
    """Everything a reader can see of these sessions and (agent, run) pairs, by every
    read operation, failures as their codes (the lists paged two at a time)."""

    def paged(list_call: Callable[..., Any], items: str, *args: str) -> Callable[[], object]:
        return partial(_pages, lambda c: list_call(*args, cursor=c, limit=2), items)

    reads: list[Callable[[], object]] = [
        paged(store.list_sessions, "sessions"),
        paged(store.search_runs, "runs"),
    ]
    for session_id in sessions:
        reads += [
            partial(store.load_session, session_id),
            partial(store.load_session_status, session_id),
            paged(store.list_session_runs, "runs", session_id),
            paged(store.list_session_run_records, "records", session_id),
        ]
    for agent_id, run_id in runs:
        reads += [
            partial(store.load_run, run_id),
            partial(store.load_run_suspension, run_id),
            paged(store.list_run_records, "records", run_id),
            partial(store.list_run_transcript_records, run_id, "start"),
            partial(store.load_run_record, run_id, "start"),
            partial(store.load_memory, agent_id, run_id),
        ]
    seen: list[object] = []
    for read in reads:
        try:
            seen.append(read())
        except StoreError as exc:
            seen.append(exc.code)
    return seen


def import_copy(
    client: HttpStore, exported: bytes, sessions: list[str], runs: list[tuple[str, str]]
) -> None:
    """Import an exported session under new IDs (a purged session's stay reserved), and
    watch the copy too."""
    text = exported.decode()
    session_id = sessions[0]
    copies = [(agent_id, run_id) for agent_id, run_id in runs if run_id in text]
    for old in [session_id, *(run_id for _, run_id in copies)]:
        text = text.replace(old, f"{old}-copy")
    client.import_session(io.BytesIO(text.encode()))
    sessions.append(f"{session_id}-copy")
    runs.extend((agent_id, f"{run_id}-copy") for agent_id, run_id in copies)


@contextmanager
def truth_store(service: ReplicatedService) -> Iterator[SqlStore]:
    engine = create_engine(service.primary_url)
    try:
        yield SqlStore(engine)
    finally:
        engine.dispose()


def test_a_read_directly_after_each_write_kind_sees_it_with_replay_paused(
    replicated: ReplicatedService,
) -> None:
    pair = replicated.pair
    sessions: list[str] = []
    runs: list[tuple[str, str]] = []
    with HttpStore(replicated.server.base_url) as client, truth_store(replicated) as truth:
        # Replay running and caught up: the standby serves this client's reads.
        sessions.append(new_session(client).id)
        pair.catch_up()
        before = reads_served(replicated.server.base_url)
        assert view(client, sessions, runs) == view(truth, sessions, runs)
        after = reads_served(replicated.server.base_url)
        assert after.get("replica-1", 0) > before.get("replica-1", 0)

        pair.pause_replay()
        behind = pair.replayed()
        session_id = sessions[0]
        root = run_start(session_id=session_id, labels={"team": "a"})
        child = run_start(session_id=session_id, parent_run_id=root.run_id)
        shot = run_start()
        buf = io.BytesIO()
        writes: list[tuple[str, Callable[[], object]]] = [
            ("create_session", lambda: sessions.append(new_session(client).id)),
            (
                "start_root_run",
                lambda: client.start_root_run(root, started_record(root), canceled_record(root)),
            ),
            (
                "start_child_run",
                lambda: client.start_child_run(
                    child, link_record(root, child), started_record(child), canceled_record(child)
                ),
            ),
            ("start_one_shot_run", lambda: client.start_one_shot_run(shot, started_record(shot))),
            ("append_run_record", lambda: client.append_run_record(record(root))),
            (
                "append_run_records",
                lambda: client.append_run_records(root.run_id, [record(root), record(root)]),
            ),
            (
                "append_memory_events",
                lambda: client.append_memory_events(
                    root.agent_id,
                    root.run_id,
                    [MemoryEvent(type="planner_note", data={"k": uid("v")}, timestamp=at(1))],
                ),
            ),
            (
                "record_run_cancellation",
                lambda: client.record_run_cancellation(
                    child.run_id, "user_requested", cancellation_record(child)
                ),
            ),
            (
                "record_run_suspension",
                lambda: client.record_run_suspension(
                    root.run_id, checkpoint(), suspended_record(root)
                ),
            ),
            (
                "record_run_terminal",
                lambda: client.record_run_terminal(
                    shot.run_id, RunStatus.COMPLETED, terminal_record(shot, RunStatus.COMPLETED)
                ),
            ),
            (
                "record_run_terminal canceled",
                lambda: client.record_run_terminal(
                    child.run_id,
                    RunStatus.CANCELED,
                    terminal_record(child, RunStatus.CANCELED, reason="user_requested"),
                ),
            ),
            ("end_session", lambda: client.end_session(session_id, at(50))),
            ("export_session", lambda: client.export_session(session_id, buf)),
            ("purge_session", lambda: client.purge_session(session_id)),
            ("import_session", lambda: import_copy(client, buf.getvalue(), sessions, runs)),
        ]
        runs += [
            (root.agent_id, root.run_id),
            (child.agent_id, child.run_id),
            (shot.agent_id, shot.run_id),
        ]
        for kind, write in writes:
            write()
            assert view(client, sessions, runs) == view(truth, sessions, runs), kind
        assert pair.replayed() == behind, "the standby replayed while paused"
        assert client.position is not None
    assert at(1) > T0


def test_a_transcript_read_is_counted_among_the_reads_served(
    replicated: ReplicatedService,
) -> None:
    """``GET /v1/runs/{id}/transcript`` runs on the service's blocking store (a heavy call):
    its read is counted in ``runtime_store_db_reads_served_total`` like every other."""
    base = replicated.server.base_url
    with HttpStore(base) as client:
        root = run_start(session_id=new_session(client).id)
        client.start_root_run(root, started_record(root), canceled_record(root))
        before = sum(reads_served(base).values())
        answer = httpx.get(f"{base}/v1/runs/{root.run_id}/transcript")
        assert answer.status_code == 200, answer.text
        assert sum(reads_served(base).values()) > before
