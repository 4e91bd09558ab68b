"""AsyncHttpStore: every method once, against a live server on each backend."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from runtime_store_client import (
    AsyncHttpStore,
    AsyncMemoryStore,
    AsyncSessionAdmin,
    AsyncStore,
    EventConflictError,
    InvalidTranscriptPositionError,
    MemoryEvent,
    RecordNotFoundError,
    RecordPage,
    RepairOutcome,
    RunStartOutcome,
    RunStatus,
    SessionPurgedError,
    SessionStatus,
    UnavailableError,
)
from tests.conftest import LiveServer, free_port
from tests.contract.builders import (
    T0,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
)


def test_async_store_implements_the_async_protocols(live_server: LiveServer) -> None:
    async def check() -> None:
        async with AsyncHttpStore(live_server.base_url) as store:
            assert isinstance(store, AsyncStore)
            assert isinstance(store, AsyncSessionAdmin)
            assert isinstance(store, AsyncMemoryStore)

    asyncio.run(check())


def test_every_async_method_round_trips(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with AsyncHttpStore(live_server.base_url) as store:
            session = await store.create_session("s-async", T0)
            assert (await store.load_session("s-async")).status is SessionStatus.ACTIVE
            assert await store.load_session_status("s-async") is SessionStatus.ACTIVE

            root = run_start(run_id="root", session_id=session.id, labels={"k": "v"})
            started = await store.start_root_run(root, started_record(root), canceled_record(root))
            assert (started.outcome, started.started.id) == (RunStartOutcome.PROCEED, "1")

            child = run_start(run_id="child", session_id=session.id, parent_run_id="root")
            child_result = await store.start_child_run(
                child, link_record(root, child), started_record(child), canceled_record(child)
            )
            assert (child_result.parent_record.id, child_result.started.id) == ("2", "1")

            solo = run_start(run_id="solo")
            one_shot = await store.start_one_shot_run(solo, started_record(solo))
            assert one_shot.record.session_status is None
            solo_child = run_start(run_id="solo-child", parent_run_id="solo")
            linked = await store.start_one_shot_child_run(
                solo_child,
                link_record(solo, solo_child, event_key="link"),
                started_record(solo_child),
            )
            assert (linked.parent_record.id, linked.started.id) == ("2", "1")

            appended = await store.append_run_record(record(root, event_key="note"))
            assert (appended.id, appended.inserted) == ("3", True)
            with pytest.raises(EventConflictError):
                await store.append_run_record(record(root, event_key="note", payload=b"[]"))

            canceled = await store.record_run_cancellation(
                "child", "user_requested", cancellation_record(child)
            )
            assert canceled.id == "2"
            done = await store.record_run_terminal(
                "child",
                RunStatus.CANCELED,
                terminal_record(child, RunStatus.CANCELED, reason="user_requested"),
            )
            assert done.id == "3"
            repaired = await store.repair_run_terminal(
                "child",
                RunStatus.CANCELED,
                terminal_record(child, RunStatus.CANCELED, reason="user_requested"),
            )
            assert (repaired.outcome, repaired.record) == (
                RepairOutcome.ALREADY_STORED,
                replace(done, inserted=False),
            )

            cp = checkpoint("cp-1", bytes(range(256)))
            await store.record_run_suspension("root", cp, suspended_record(root, "cp-1"))
            assert await store.load_run_suspension("root") == cp
            again = await store.repair_run_suspension("root", cp, suspended_record(root, "cp-1"))
            assert again.outcome is RepairOutcome.ALREADY_STORED
            meta = await store.load_run("root")
            assert (meta.status, dict(meta.labels)) == (RunStatus.SUSPENDED, {"k": "v"})

            page_of_root = (await store.list_run_records("root")).records
            page = await store.list_run_records("root", limit=2)
            assert [r.id for r in page.records] == ["1", "2"]
            assert page.next_cursor == "2"
            assert [r.id async for r in store.iter_run_records("root", after="2")] == ["3", "4"]
            session_page = await store.list_session_run_records(session.id, limit=100)
            assert len(session_page.records) == 7  # root: 4 records, child: 3
            streamed = [r async for r in store.iter_session_run_records(session.id, limit=3)]
            assert streamed == session_page.records
            runs = await store.list_session_runs(session.id, statuses=[RunStatus.CANCELED])
            assert [r.run_id for r in runs.runs] == ["child"]

            transcript = await store.list_run_transcript_records("root", "4")
            assert transcript == RecordPage(records=[])  # root holds no transcript record
            with pytest.raises(InvalidTranscriptPositionError):
                await store.list_run_transcript_records("root", "5")
            assert await store.load_run_record("root", "note") == page_of_root[2]
            with pytest.raises(RecordNotFoundError):
                await store.load_run_record("root", "no-such-key")

            event = MemoryEvent(
                type="user_message", timestamp=at(1), data={"text": "hi"}, labels={"a": "b"}
            )
            await store.append_memory_events("agent-1", "root", [event])
            snapshot = await store.load_memory("agent-1", "root")
            assert snapshot.events == [event]

            ended = await store.end_session(session.id, at(99))
            assert ended.ended_at == at(99)
            await store.purge_session(session.id)
            with pytest.raises(SessionPurgedError):
                await store.load_run("root")

    asyncio.run(scenario())


def test_async_store_retries_then_raises_unavailable() -> None:
    async def call() -> None:
        async with AsyncHttpStore(f"http://127.0.0.1:{free_port()}", retries=1) as store:
            await store.load_run("run-1")

    with pytest.raises(UnavailableError):
        asyncio.run(call())
