"""Appends from the event loop (``app/storage/loop_appends.py``) on a real PostgreSQL: the
same answers as the store's own path, grouped under concurrency, and everything they
cannot answer left to the store."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.domain.validation import NewRecord
from app.main import create_app
from app.settings import Settings
from app.storage import LoopAppends, LoopConnections, SqlStore
from app.storage.batch import OneStatementBatch
from runtime_store_client import AppendResult, Record, RunStatus
from tests.api.wire_builders import wire_record
from tests.contract.builders import (
    new_session,
    record,
    run_start,
    start_root,
    terminal_record,
)


@pytest.fixture
def store(postgres_engine: Engine) -> SqlStore:
    from tests.conftest import wipe

    wipe(postgres_engine)
    return SqlStore(postgres_engine)


def _combiner(engine: Engine, **kwargs: int) -> LoopAppends:
    return LoopAppends(LoopConnections(engine), **kwargs)


async def _close(combiner: LoopAppends) -> None:
    """As the service does at shutdown: the flushes end, then the connections close."""
    await combiner.close()
    await combiner._connections.close()


class Counted(LoopAppends):
    """Keeps the size of every group it sends."""

    def __init__(self, engine: Engine, **kwargs: int) -> None:
        super().__init__(LoopConnections(engine), **kwargs)
        self.groups: list[int] = []

    async def _send(self, records: list[NewRecord]) -> list[AppendResult | None]:
        self.groups.append(len(records))
        return await super()._send(records)


def _appends(loop_appends: LoopAppends, records: list[NewRecord]) -> list[AppendResult | None]:
    async def together() -> list[AppendResult | None]:
        try:
            return list(await asyncio.gather(*(loop_appends.append(r) for r in records)))
        finally:
            await _close(loop_appends)

    return asyncio.run(together())


def test_concurrent_appends_are_grouped_and_answered_as_the_store_answers(
    store: SqlStore, postgres_engine: Engine
) -> None:
    session = new_session(store)
    runs = [start_root(store, session.id).run for _ in range(3)]
    records = [record(runs[n % 3], event_key=f"k-{n}") for n in range(60)]
    checked = [store.loop.checked_append(item) for item in records]

    combiner = Counted(postgres_engine)
    answers = _appends(combiner, checked)

    assert all(answer is not None and answer.inserted for answer in answers)
    assert len(combiner.groups) < len(records), "concurrent appends were never grouped"
    assert max(combiner.groups) > 1
    # Each run's records got its next IDs, each once (1 is run_started), and each is stored
    # under the ID it was answered with. (Concurrent appends have no order among them: two
    # flushes in flight may commit in either order.)
    for n, run in enumerate(runs):
        mine = {records[i].event_key: a.id for i, a in enumerate(answers) if a and i % 3 == n}
        assert sorted(map(int, mine.values())) == list(range(2, 22))
        stored = store.list_run_records(run.run_id).records
        assert {r.event_key: r.id for r in stored[1:]} == mine
    # The same records again are exact retries: the original IDs, nothing stored twice.
    again = _appends(_combiner(postgres_engine), checked)
    assert [a.id for a in again if a is not None] == [a.id for a in answers if a is not None]
    assert not any(a is None or a.inserted for a in again)
    # The store's own path answers the same for each of them.
    assert [store.append_run_record(r) for r in records] == again


def test_what_the_statement_refuses_is_left_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    late = store.loop.checked_append(record(run, event_key="late"))

    assert _appends(_combiner(postgres_engine), [late]) == [None]
    with postgres_engine.connect() as conn:
        stored = conn.execute(
            sa.text("SELECT count(*) FROM run_records WHERE run_id = :r AND event_key = 'late'"),
            {"r": run.run_id},
        ).scalar_one()
    assert stored == 0


def test_a_lost_connection_leaves_its_records_to_the_store_and_is_replaced(
    store: SqlStore, postgres_engine: Engine
) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    combiner = _combiner(postgres_engine)

    async def scenario() -> list[AppendResult | None]:
        first = await combiner.append(store.loop.checked_append(record(run, event_key="a")))
        # Connect the combiner's second slot, then cut both.
        await asyncio.gather(
            *(combiner.append(store.loop.checked_append(record(run, event_key=k))) for k in "xy")
        )
        # Its connections' backends (only theirs: the database is shared with other tests).
        pids = [conn.info.backend_pid for conn in combiner._connections._idle]
        assert len(pids) == 2
        with postgres_engine.connect() as conn:
            for pid in pids:
                conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        b = record(run, event_key="b")
        lost = await combiner.append(store.loop.checked_append(b))
        # What the caller does with it: the store appends it, retrying its own lost ones.
        stored = await asyncio.to_thread(store.append_run_record, b)
        after = await combiner.append(store.loop.checked_append(record(run, event_key="c")))
        await _close(combiner)
        return [first, lost, stored, after]

    first, lost, stored, after = asyncio.run(scenario())
    assert first is not None
    assert first.id == "2"
    assert lost is None
    assert stored is not None
    assert (stored.id, stored.inserted) == ("5", True)
    assert after is not None
    assert (after.id, after.inserted) == ("6", True)


def _batch(engine: Engine, batch: OneStatementBatch) -> list[AppendResult] | None:
    async def send() -> list[AppendResult] | None:
        combiner = _combiner(engine)
        try:
            return await combiner.append_batch(batch)
        finally:
            await _close(combiner)

    return asyncio.run(send())


def test_a_batch_in_one_statement_is_answered_as_the_store_answers_it(
    store: SqlStore, postgres_engine: Engine
) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    first, second = record(run, event_key="b-1"), record(run, event_key="b-2")
    batch = store.loop.one_statement_batch(run.run_id, [first, second, first])
    assert batch is not None

    answers = _batch(postgres_engine, batch)
    assert answers is not None
    assert [(a.id, a.inserted) for a in answers] == [("2", True), ("3", True), ("2", False)]
    # Sent again it is an exact retry, as the store answers it.
    again = _batch(postgres_engine, batch)
    assert again == store.append_run_records(run.run_id, [first, second, first])
    assert again is not None
    assert not any(a.inserted for a in again)


def test_batches_beyond_the_limit_wait_their_turn_on_the_same_connection(
    store: SqlStore, postgres_engine: Engine
) -> None:
    runs = [start_root(store, new_session(store).id).run for _ in range(3)]
    batches = []
    for run in runs:
        batch = store.loop.one_statement_batch(run.run_id, [record(run, event_key="b-1")])
        assert batch is not None
        batches.append(batch)
    combiner = _combiner(postgres_engine, max_in_flight=1)

    async def send() -> tuple[list[list[AppendResult] | None], int]:
        try:
            answers = await asyncio.gather(*(combiner.append_batch(b) for b in batches))
            return list(answers), len(combiner._connections._idle)
        finally:
            await _close(combiner)

    answers, opened = asyncio.run(send())
    assert [[(a.id, a.inserted) for a in found or []] for found in answers] == [[("2", True)]] * 3
    assert opened == 1


def test_a_batch_only_the_transaction_can_decide_is_left_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    changed = record(run, event_key="b-1", payload=b'{"other":true}')
    # The same key with other content: event_conflict, in the transaction's order.
    assert (
        store.loop.one_statement_batch(run.run_id, [record(run, event_key="b-1"), changed]) is None
    )
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    late = store.loop.one_statement_batch(run.run_id, [record(run, event_key="late")])
    assert late is not None

    assert _batch(postgres_engine, late) is None  # refused: the store raises run_not_active


def test_a_closed_combiner_leaves_every_append_to_the_store(
    store: SqlStore, postgres_engine: Engine
) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    combiner = _combiner(postgres_engine)

    async def scenario() -> AppendResult | None:
        await _close(combiner)
        return await combiner.append(store.loop.checked_append(record(run, event_key="a")))

    assert asyncio.run(scenario()) is None


def test_the_store_offers_the_combiner_only_where_an_append_is_one_statement(
    postgres_engine: Engine, sqlite_engine: Engine
) -> None:
    connections = SqlStore(postgres_engine).loop.connections()
    assert connections is not None
    assert SqlStore(postgres_engine).loop.appends(connections, 4) is not None
    assert SqlStore(postgres_engine, fast_path=False).loop.appends(connections, 4) is None
    assert SqlStore(sqlite_engine).loop.connections() is None


@pytest.mark.parametrize("on", [True, False])
def test_a_served_append_goes_out_from_the_event_loop_unless_switched_off(
    store: SqlStore, postgres_url: str, on: bool
) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    app = create_app(Settings(database_url=postgres_url, loop_appends=on, webhook_dispatch=False))
    with TestClient(app) as http:
        threaded: list[str] = []
        served: SqlStore = app.state.store
        original = served.append_run_record

        def counted(item: Record) -> AppendResult:
            threaded.append(item.event_key)
            return original(item)

        served.append_run_record = counted  # type: ignore[method-assign, assignment]
        batched: list[int] = []
        original_batch = served.append_run_records

        def counted_batch(run_id: str, items: list[Record]) -> list[AppendResult]:
            batched.append(len(items))
            return original_batch(run_id, items)

        served.append_run_records = counted_batch  # type: ignore[method-assign, assignment]
        body = {"record": wire_record(record(run, event_key="over-http"))}
        answers = [http.post(f"/v1/runs/{run.run_id}/records", json=body) for _ in range(2)]
        elsewhere = record(run_start(run_id="nowhere", session_id=session.id), event_key="x")
        late = http.post("/v1/runs/nowhere/records", json={"record": wire_record(elsewhere)})
        pair = [wire_record(record(run, event_key=k)) for k in ("b-1", "b-2")]
        batch = http.post(f"/v1/runs/{run.run_id}/records/batch", json={"records": pair})
    assert [a.json()["inserted"] for a in answers] == [True, False]
    assert answers[0].json()["id"] == answers[1].json()["id"] == "2"
    assert (late.status_code, late.json()["code"]) == (404, "run_not_found")
    # Refused by the statement, the unknown run went through the store, which raised.
    assert threaded == (["x"] if on else ["over-http", "over-http", "x"])
    assert [r["id"] for r in batch.json()["results"]] == ["3", "4"]
    assert batched == ([] if on else [2])
