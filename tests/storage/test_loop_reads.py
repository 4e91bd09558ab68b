"""Pages read from the event loop (``app/storage/loop_reads.py``) on a real PostgreSQL: the
same pages as the store's own path (one rule, ``RunPageRead.steps``,
``SessionPageRead.steps`` and ``TranscriptPageRead.steps``, each driven two ways), the same
deadline, and everything they cannot answer left to the store."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.main import create_app
from app.settings import Settings
from app.storage import LoopConnections, LoopReads, SqlStore
from app.storage.records import Steps, StreamPage, Unsure
from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    Page,
    PayloadTooLargeError,
    RunNotFoundError,
    RunStatus,
    SessionNotFoundError,
    SessionPurgedError,
    UnavailableError,
)
from tests.contract.builders import T0, new_session, record, start_root, terminal_record

T = TypeVar("T")


@pytest.fixture
def store(postgres_engine: Engine) -> SqlStore:
    from tests.conftest import wipe

    wipe(postgres_engine)
    return SqlStore(postgres_engine, page_byte_budget=4_000)


def _reads(engine: Engine, **kwargs: object) -> LoopReads:
    options: dict[str, object] = {"timeout": 5.0, "allowed": lambda: True, **kwargs}
    return LoopReads(LoopConnections(engine), **options)  # type: ignore[arg-type]


def _read_all(reads: LoopReads, all_steps: list[Steps[T | Unsure]]) -> list[T | None]:
    """Each read's answer from the loop, in order, on one event loop."""

    async def read_all() -> list[T | None]:
        try:
            return [await reads.read(steps) for steps in all_steps]
        finally:
            await reads._connections.close()

    return asyncio.run(read_all())


def _pages(
    reads: LoopReads, store: SqlStore, asks: list[tuple[str, str, int]]
) -> list[StreamPage | None]:
    return _read_all(reads, [store.loop.run_page_read(*ask).steps() for ask in asks])


def _run_with_records(store: SqlStore, count: int, size: int = 100) -> str:
    run = start_root(store, new_session(store).id).run
    for n in range(count):
        payload = b'{"n":%d,"pad":"%s"}' % (n, b"x" * size)
        store.append_run_record(record(run, event_key=f"k-{n}", payload=payload))
    return run.run_id


def test_a_page_from_the_event_loop_is_the_stores_page(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 30, size=300)
    empty = start_root(store, new_session(store).id).run.run_id
    asks = [
        (run_id, "", 100),  # cut by the byte budget
        (run_id, "", 5),
        (run_id, "5", 5),
        (run_id, "25", 100),  # the end of the list
        (run_id, "31", 10),  # after the last record: empty, nothing more
        (empty, "", 10),  # only its started record
        (empty, "1", 10),
    ]

    from_loop = _pages(_reads(postgres_engine), store, asks)

    for ask, page in zip(asks, from_loop, strict=True):
        assert page is not None, ask
        assert page == store.run_records_after(*ask), ask
    first = from_loop[0]
    assert first is not None
    assert 1 < len(first.records) < 31  # cut by the byte budget
    assert first.more


def test_what_only_the_transaction_can_answer_is_left_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 3)
    purged = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        purged.run_id, RunStatus.COMPLETED, terminal_record(purged, RunStatus.COMPLETED)
    )
    store.end_session(purged.session_id, T0)
    store.purge_session(purged.session_id)
    asks = [
        ("nowhere", "", 10),  # run_not_found
        (purged.run_id, "", 10),  # session_purged
        (run_id, "99", 10),  # a cursor past the run: invalid_argument
    ]

    assert _pages(_reads(postgres_engine), store, asks) == [None, None, None]
    with pytest.raises(RunNotFoundError):
        store.list_run_records("nowhere", "", 10)
    with pytest.raises(SessionPurgedError):
        store.list_run_records(purged.run_id, "", 10)
    with pytest.raises(InvalidArgumentError):
        store.list_run_records(run_id, "99", 10)


def _session_pages(
    reads: LoopReads, store: SqlStore, asks: list[tuple[str, str, int]]
) -> list[Page | None]:
    async def read_all() -> list[Page | None]:
        pages: list[Page | None] = []
        try:
            for ask in asks:
                read = store.loop.session_page_read(*ask)
                found = None if read is None else await reads.read(read.steps())
                pages.append(None if read is None or found is None else read.page(found))
            return pages
        finally:
            await reads._connections.close()

    return asyncio.run(read_all())


def test_a_session_page_from_the_event_loop_is_the_stores_page(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 20, size=300)
    session_id = store.load_run(run_id).session_id
    start_root(store, session_id)  # a second run: the session list spans both
    first = store.list_session_run_records(session_id, "", 5)
    asks = [(session_id, "", 100), (session_id, "", 5), (session_id, first.next_cursor, 5)]

    from_loop = _session_pages(_reads(postgres_engine), store, asks)

    assert from_loop == [store.list_session_run_records(*ask) for ask in asks]
    assert from_loop[0] is not None
    assert from_loop[0].next_cursor  # cut by the byte budget


def test_a_session_page_the_loop_cannot_settle_is_left_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 3)
    session_id = store.load_run(run_id).session_id
    purged = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        purged.run_id, RunStatus.COMPLETED, terminal_record(purged, RunStatus.COMPLETED)
    )
    store.end_session(purged.session_id, T0)
    store.purge_session(purged.session_id)
    cursor = store.list_session_run_records(session_id, "", 1).next_cursor
    fresh = SqlStore(postgres_engine)  # its cursor key is not loaded yet

    assert fresh.loop.session_page_read(session_id, cursor, 10) is None
    assert fresh.loop.session_page_read(session_id, "", 10) is None
    assert store.loop.session_page_read(session_id, "not-a-cursor", 10) is None
    asks = [("nowhere", "", 10), (purged.session_id, "", 10), ("", "", 10)]
    assert _session_pages(_reads(postgres_engine), store, asks) == [None, None, None]
    with pytest.raises(SessionNotFoundError):
        store.list_session_run_records("nowhere", "", 10)
    with pytest.raises(SessionPurgedError):
        store.list_session_run_records(purged.session_id, "", 10)


TRANSCRIPT = "transcript_messages_appended"


def _transcript_pages(
    reads: LoopReads, store: SqlStore, asks: list[tuple[str, str, str, int]]
) -> list[Page | None]:
    return _read_all(reads, [store.loop.transcript_page_read(*ask).steps() for ask in asks])


def _run_with_transcript(store: SqlStore, payloads: list[bytes]) -> str:
    """A run whose records alternate: a transcript record, then an ordinary one (IDs 2, 4,
    6… are the transcript's, after the started record 1)."""
    run = start_root(store, new_session(store).id).run
    for n, payload in enumerate(payloads):
        store.append_run_record(record(run, event_key=f"t-{n}", type=TRANSCRIPT, payload=payload))
        store.append_run_record(record(run, event_key=f"o-{n}"))
    return run.run_id


def test_a_transcript_page_from_the_event_loop_is_the_stores_page(
    store: SqlStore, postgres_engine: Engine
) -> None:
    big = b'["' + b"x" * (400 * 1024) + b'"]'  # three of them pass a page's 1 MiB
    run_id = _run_with_transcript(store, [b"[]"] * 6 + [big] * 3 + [b"[]"])
    asks = [
        (run_id, "21", "", 100),  # the whole run, cut by the bytes
        (run_id, "21", "", 3),
        (run_id, "21", "6", 3),
        (run_id, "11", "", 100),  # through an ordinary record: it ends the range
        (run_id, "21", "18", 100),  # the last page
        (run_id, "21", "14", 100),  # from the big ones on
    ]

    from_loop = _transcript_pages(_reads(postgres_engine), store, asks)

    for ask, page in zip(asks, from_loop, strict=True):
        assert page is not None, ask
        assert page == store.list_run_transcript_records(*ask), ask
    whole = from_loop[0]
    assert whole is not None
    assert [r.id for r in whole.records] == ["2", "4", "6", "8", "10", "12", "14", "16"]
    assert whole.next_cursor == "16"  # the next big one would pass 1 MiB


def test_what_only_the_transaction_can_answer_about_a_transcript_is_left_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_transcript(store, [b"[]"] * 2)
    huge = _run_with_transcript(store, [b'["' + b"x" * (1024 * 1024) + b'"]'])
    purged = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        purged.run_id, RunStatus.COMPLETED, terminal_record(purged, RunStatus.COMPLETED)
    )
    store.end_session(purged.session_id, T0)
    store.purge_session(purged.session_id)
    asks = [
        ("nowhere", "1", "", 10),  # run_not_found
        (purged.run_id, "1", "", 10),  # session_purged
        (run_id, "99", "", 10),  # through past the run
        (run_id, "5", "3", 10),  # after an ordinary record
        (run_id, "1", "", 10),  # a range without transcript records: an empty page
        (huge, "3", "", 10),  # one record past a page's bytes
    ]

    assert _transcript_pages(_reads(postgres_engine), store, asks) == [None] * 6
    with pytest.raises(RunNotFoundError):
        store.list_run_transcript_records("nowhere", "1")
    with pytest.raises(SessionPurgedError):
        store.list_run_transcript_records(purged.run_id, "1")
    with pytest.raises(InvalidTranscriptPositionError):
        store.list_run_transcript_records(run_id, "99")
    with pytest.raises(InvalidTranscriptPositionError):
        store.list_run_transcript_records(run_id, "5", "3")
    assert store.list_run_transcript_records(run_id, "1") == Page(records=[])
    with pytest.raises(PayloadTooLargeError):
        store.list_run_transcript_records(huge, "3")


def test_reads_before_the_level_is_known_go_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 2)
    ask = (run_id, "", 10)

    assert _pages(_reads(postgres_engine, allowed=lambda: False), store, [ask]) == [None]
    fresh = SqlStore(postgres_engine)
    connections = fresh.loop.connections()
    assert connections is not None
    assert not fresh.loop.reads(connections)._allowed()  # nothing read yet: not known
    fresh.list_run_records(run_id, "", 10)
    assert fresh.loop.reads(connections)._allowed()


def test_reads_beyond_the_limit_wait_their_turn_on_the_same_connections(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 3)
    expected = store.list_run_records(run_id, "", 10)
    reads = _reads(postgres_engine, max_in_flight=1)

    async def read() -> tuple[list[StreamPage | None], bool, int]:
        try:
            with records_locked(postgres_engine):  # the first read waits on the lock
                pending = [
                    asyncio.ensure_future(
                        reads.read(store.loop.run_page_read(run_id, "", 10).steps())
                    )
                    for _ in range(3)
                ]
                await asyncio.sleep(0.3)
                waited = not any(task.done() for task in pending)
            pages = await asyncio.gather(*pending)
            return pages, waited, len(reads._connections._idle)
        finally:
            await reads._connections.close()

    pages, waited, opened = asyncio.run(read())
    assert waited
    assert [page.page() if page else None for page in pages] == [expected] * 3
    assert opened == 1


def test_a_read_waiting_its_turn_keeps_its_deadline(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 1)
    reads = _reads(postgres_engine, max_in_flight=1, timeout=0.3)

    async def read() -> tuple[float, list[object]]:
        try:
            with records_locked(postgres_engine):
                started = time.monotonic()
                answers = await asyncio.gather(
                    *(
                        reads.read(store.loop.run_page_read(run_id, "", 10).steps())
                        for _ in range(2)
                    ),
                    return_exceptions=True,
                )
                return time.monotonic() - started, list(answers)
        finally:
            await reads._connections.close()

    elapsed, answers = asyncio.run(read())
    assert all(isinstance(answer, UnavailableError) for answer in answers), answers
    assert elapsed < 3


@contextmanager
def records_locked(engine: Engine) -> Iterator[None]:
    """``run_records`` locked against reads until the block ends (at most 10 s)."""
    release, locked = threading.Event(), threading.Event()

    def hold() -> None:
        with engine.connect() as conn, conn.begin():
            conn.execute(sa.text("LOCK TABLE run_records IN ACCESS EXCLUSIVE MODE"))
            locked.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        yield
    finally:
        release.set()
        holder.join()


def test_a_read_past_its_deadline_is_unavailable_and_stopped_in_the_database(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run = start_root(store, new_session(store).id).run
    reads = _reads(postgres_engine, timeout=0.3)

    def page() -> Steps[StreamPage | Unsure]:
        return store.loop.run_page_read(run.run_id, "", 10).steps()

    async def read() -> tuple[float, str, int, list[int], list[int]]:
        try:
            await asyncio.gather(reads.read(page()), reads.read(page()))  # two connections
            opened = [conn.info.backend_pid for conn in reads._connections._idle]
            with records_locked(postgres_engine):
                started = time.monotonic()
                with pytest.raises(UnavailableError) as refused:
                    await reads.read(page())
                elapsed = time.monotonic() - started
                # The statement was cancelled, not left waiting on the lock.
                waiting = await asyncio.to_thread(_statements_waiting_on_records, postgres_engine)
            kept = [conn.info.backend_pid for conn in reads._connections._idle]
            return elapsed, str(refused.value), waiting, opened, kept
        finally:
            await reads._connections.close()

    elapsed, message, waiting, opened, kept = asyncio.run(read())
    assert 0.3 <= elapsed < 3
    assert "0.3 s timeout" in message
    assert waiting == 0
    # Only the stopped read's connection is closed; the other stays for the next read.
    assert len(opened) == 2
    assert len(kept) == 1
    assert kept[0] in opened


def _statements_waiting_on_records(engine: Engine) -> int:
    with engine.connect() as conn:
        count: int = conn.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE '%run_records%'"
            )
        ).scalar_one()
    return count


def test_a_lost_connection_leaves_the_page_to_the_store_and_is_replaced(
    store: SqlStore, postgres_engine: Engine
) -> None:
    run_id = _run_with_records(store, 3)
    reads = _reads(postgres_engine)

    async def scenario() -> list[StreamPage | None]:
        try:
            first = await reads.read(store.loop.run_page_read(run_id, "", 10).steps())
            (idle,) = reads._connections._idle
            with postgres_engine.connect() as conn:
                conn.execute(
                    sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": idle.info.backend_pid}
                )
            lost = await reads.read(store.loop.run_page_read(run_id, "", 10).steps())
            after = await reads.read(store.loop.run_page_read(run_id, "", 10).steps())
            return [first, lost, after]
        finally:
            await reads._connections.close()

    first, lost, after = asyncio.run(scenario())
    assert first is not None
    assert lost is None
    assert after == first


@pytest.mark.parametrize("on", [True, False])
def test_a_served_page_is_read_from_the_event_loop_unless_switched_off(
    store: SqlStore, postgres_url: str, on: bool
) -> None:
    run_id = _run_with_records(store, 3)
    app = create_app(Settings(database_url=postgres_url, loop_reads=on, webhook_dispatch=False))
    with TestClient(app) as http:
        served: SqlStore = app.state.store
        served.load_run(run_id)  # a first read: the isolation level is known
        threaded: list[str] = []
        original = served.list_run_records

        def counted(run: str, cursor: str = "", limit: int = 100) -> Page:
            threaded.append(run)
            return original(run, cursor, limit)

        served.list_run_records = counted  # type: ignore[method-assign, assignment]
        original_session = served.list_session_run_records

        def counted_session(session: str, cursor: str = "", limit: int = 100) -> Page:
            threaded.append(session)
            return original_session(session, cursor, limit)

        served.list_session_run_records = counted_session  # type: ignore[method-assign, assignment]
        page = http.get(f"/v1/runs/{run_id}/records", params={"limit": 2})
        missing = http.get("/v1/runs/nowhere/records")
        session_id = served.load_run(run_id).session_id
        first = http.get(f"/v1/sessions/{session_id}/records", params={"limit": 2})
        cursor = first.json()["next_cursor"]
        second = http.get(f"/v1/sessions/{session_id}/records", params={"cursor": cursor})
    assert page.status_code == 200
    assert [r["event_key"] for r in page.json()["records"]] == ["start", "k-0"]
    assert page.json()["next_cursor"] == "2"
    assert (missing.status_code, missing.json()["code"]) == (404, "run_not_found")
    assert [r["event_key"] for r in first.json()["records"]] == ["start", "k-0"]
    assert [r["event_key"] for r in second.json()["records"]] == ["k-1", "k-2"]
    assert second.json()["next_cursor"] == ""
    # Read on the loop when on; the missing run always goes to the store, which says so,
    # and so does the worker's first session page: the cursor key is not loaded yet.
    expected = ["nowhere", session_id] if on else [run_id, "nowhere", session_id, session_id]
    assert threaded == expected


@pytest.mark.parametrize("on", [True, False])
def test_a_served_transcript_page_is_read_from_the_event_loop_unless_switched_off(
    store: SqlStore, postgres_url: str, on: bool
) -> None:
    run_id = _run_with_transcript(store, [b"[]"] * 3)  # transcript records 2, 4 and 6
    app = create_app(Settings(database_url=postgres_url, loop_reads=on, webhook_dispatch=False))
    path = f"/v1/runs/{run_id}/transcript-records"
    with TestClient(app) as http:
        served: SqlStore = app.state.store
        served.load_run(run_id)  # a first read: the isolation level is known
        threaded: list[str] = []
        original = served.list_run_transcript_records

        def counted(run: str, through: str, after: str = "", limit: int = 100) -> Page:
            threaded.append(run)
            return original(run, through, after, limit)

        served.list_run_transcript_records = counted  # type: ignore[method-assign, assignment]
        first = http.get(path, params={"through": "7", "limit": 2})
        rest = http.get(path, params={"through": "7", "after": first.json()["next_cursor"]})
        wrong = http.get(path, params={"through": "7", "after": "3"})
    assert [r["id"] for r in first.json()["records"]] == ["2", "4"]
    assert first.json()["next_cursor"] == "4"
    assert [r["id"] for r in rest.json()["records"]] == ["6"]
    assert rest.json()["next_cursor"] == ""
    assert (wrong.status_code, wrong.json()["code"]) == (422, "invalid_transcript_position")
    # Read on the loop when on; the wrong position always goes to the store, which says so.
    assert threaded == ([run_id] if on else [run_id] * 3)
