"""An import never holds the only writer of SQLite for its length (CONTRACT.md 2.10, 11.4).

On SQLite an import stages its rows outside the store's database and publishes them in one
short transaction at the end; PostgreSQL imports in one transaction, whose row locks stop
no other session's writer. On both, other writers are served while an import reads its
file, nothing of the session is visible before it is whole, and an import that fails (or
whose client went away) leaves nothing behind.
"""

from __future__ import annotations

import contextvars
import io
import json
import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from app.storage.database import read_deadlines
from app.storage.transfer import staged_publish
from runtime_store_client import (
    InvalidArgumentError,
    Record,
    RunNotFoundError,
    Session,
    SessionNotFoundError,
    UnavailableError,
)
from tests.conftest import wipe
from tests.contract.builders import new_session, record, start_root
from tests.lifecycle.test_refusals import rows
from tests.lifecycle.world import World, build_world, exported


class PausingReader(io.BytesIO):
    """A session file read 4 KiB at a time, that stops once ``pause_at`` bytes were read,
    until ``released``."""

    def __init__(self, data: bytes, pause_at: int) -> None:
        super().__init__(data)
        self.pause_at = pause_at
        self.paused = threading.Event()
        self.released = threading.Event()

    def read(self, size: int | None = -1) -> bytes:
        if self.tell() >= self.pause_at and not self.released.is_set():
            self.paused.set()
            assert self.released.wait(30), "never released"
        return super().read(4096 if size is None or size < 0 else min(size, 4096))


class Importing:
    """An import running in a thread (in a context of its own: its own canceler)."""

    def __init__(self, store: SqlStore, file: io.BytesIO) -> None:
        self.result: list[Session | BaseException] = []
        self.canceler = read_deadlines.Canceler()

        def run() -> None:
            read_deadlines.calling(self.canceler)
            try:
                self.result.append(store.import_session(file))
            except BaseException as exc:
                self.result.append(exc)

        self.thread = threading.Thread(target=contextvars.copy_context().run, args=(run,))
        self.thread.start()

    def outcome(self) -> Session | BaseException:
        self.thread.join(60)
        assert self.result, "the import did not end"
        return self.result[0]


def within(seconds: float, call: Any) -> Any:
    """``call()`` on a thread; it must answer within ``seconds``."""
    answer: list[Any] = []
    thread = threading.Thread(target=lambda: answer.append(call()))
    thread.start()
    thread.join(seconds)
    assert answer, f"no answer within {seconds} s: a writer holds the database"
    return answer[0]


def source(engine: Engine) -> tuple[World, bytes]:
    """A session of every kind of fact, exported, and a database that no longer holds it."""
    store = SqlStore(engine)
    world = build_world(store)
    data = exported(store, world.session_id)
    wipe(engine)
    return world, data


def test_other_writers_are_served_and_nothing_is_visible_while_an_import_runs(
    engine: Engine,
) -> None:
    world, data = source(engine)
    store = SqlStore(engine)
    writer = start_root(store, new_session(store).id).run
    file = PausingReader(data, pause_at=len(data) // 2)
    importing = Importing(store, file)
    assert file.paused.wait(30)

    appended = within(1.0, lambda: store.append_run_record(record(writer)))
    assert appended.inserted
    with pytest.raises(SessionNotFoundError):
        store.load_session(world.session_id)
    with pytest.raises(RunNotFoundError):
        store.load_run(world.running.run_id)
    assert store.search_runs(session_id=world.session_id).runs == []

    file.released.set()
    assert isinstance(importing.outcome(), Session)
    assert exported(store, world.session_id) == data


def test_an_import_whose_client_went_away_stops_and_leaves_nothing(engine: Engine) -> None:
    _, data = source(engine)
    store = SqlStore(engine)
    before = rows(engine)
    file = PausingReader(data, pause_at=len(data) // 2)
    importing = Importing(store, file)
    assert file.paused.wait(30)

    importing.canceler.cancel()
    file.released.set()

    assert isinstance(importing.outcome(), UnavailableError)
    assert rows(engine) == before


def test_a_refused_import_leaves_nothing_and_its_connection_clean(sqlite_url: str) -> None:
    """SQLite: the stage is detached (deleted) whether the import is published or refused;
    the one pooled connection serves the next import."""
    engine = create_engine(sqlite_url, pool_size=1, max_overflow=0)
    try:
        _, data = source(engine)
        store = SqlStore(engine)
        before = rows(engine)
        cut = data[: data.rindex(b"\n", 0, -1) + 1]  # no end line

        with pytest.raises(InvalidArgumentError, match="cut short"):
            store.import_session(io.BytesIO(cut))

        assert rows(engine) == before
        with engine.connect() as conn:
            databases = [row[1] for row in conn.exec_driver_sql("PRAGMA database_list")]
        assert databases == ["main"]
        assert isinstance(store.import_session(io.BytesIO(data)), Session)
    finally:
        engine.dispose()


def big_session(store: SqlStore, runs: int, records: int, size: int) -> str:
    session_id = new_session(store).id
    payload = json.dumps({"text": "x" * size}).encode()
    for _ in range(runs):
        run = start_root(store, session_id).run
        for start in range(0, records, 1000):
            batch: list[Record] = [
                record(run, event_key=f"e{i}", payload=payload)
                for i in range(start, min(records, start + 1000))
            ]
            store.append_run_records(run.run_id, batch)
    return session_id


def test_a_small_append_answers_within_a_second_while_a_big_import_runs(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    session_id = big_session(store, runs=10, records=2000, size=1000)
    data = exported(store, session_id)
    wipe(engine)
    writer = start_root(store, new_session(store).id).run
    waits: list[float] = []

    importing = Importing(store, io.BytesIO(data))
    started = time.perf_counter()
    while importing.thread.is_alive():
        began = time.perf_counter()
        store.append_run_record(record(writer))
        waits.append(time.perf_counter() - began)
        time.sleep(0.02)
    took = time.perf_counter() - started

    assert isinstance(importing.outcome(), Session)
    # Holding the writer for the import, an append would wait about all of it; staged, at
    # most the publish's copy of the rows.
    longest = max(waits)
    assert longest < 1.0, f"an append waited {longest:.2f} s of the import's {took:.2f} s"
    assert longest < took / 3, f"an append waited {longest:.2f} s of the import's {took:.2f} s"
    assert len(waits) >= 5, f"{len(waits)} appends during the import: too short a test"
    with engine.connect() as conn:
        count = conn.execute(
            sa.text("SELECT count(*) FROM run_records WHERE session_id = :s"), {"s": session_id}
        ).scalar()
    assert count == 10 * 2001 + 0  # run_started and the notes of every run


#: What each copied slice holds the writer for in the test below: a slow machine's slice.
_SLOW_SLICE_SECONDS = 0.04


@pytest.mark.serial  # timing
def test_a_writer_waiting_for_sqlite_gets_it_between_back_to_back_slices(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded holds are not enough: SQLite hands its lock to no one in particular, and a
    writer waiting in its busy handler sleeps through the instants between two slices of a
    publish (CONTRACT.md 2.10). Slices of 40 ms back to back, 3.2 s of them: an append
    that arrives meanwhile waits about one turn of the publish (``staged_publish.Turns``), not
    until it is over."""
    engine = create_engine(sqlite_url)
    try:
        store = SqlStore(engine)
        wipe(engine)
        session_id = big_session(store, runs=4, records=400, size=100)
        data = exported(store, session_id)
        wipe(engine)
        writer = start_root(store, new_session(store).id).run
        copying = threading.Event()
        copy = staged_publish.copy_records

        def slow_copy(conn: sa.Connection, **slice_: Any) -> None:
            copying.set()
            time.sleep(_SLOW_SLICE_SECONDS)  # inside the slice's transaction: the lock held
            copy(conn, **slice_)

        monkeypatch.setattr(staged_publish, "SLICE_ROWS", 20)  # 80 slices
        monkeypatch.setattr(staged_publish, "copy_records", slow_copy)

        importing = Importing(store, io.BytesIO(data))
        assert copying.wait(30), "the publish never began copying"
        waits: list[float] = []
        while importing.thread.is_alive() and len(waits) < 12:
            began = time.perf_counter()
            store.append_run_record(record(writer))
            waits.append(time.perf_counter() - began)
            time.sleep(0.05)  # a waiter that arrives anywhere in a turn

        assert isinstance(importing.outcome(), Session)
        # A turn (75 ms: two slices) and the slice in progress: 0.03-0.11 s, with room for
        # a busy machine; without the pauses the first append waited for the whole publish
        # (3.5 s).
        assert max(waits) < 0.6, [round(wait, 3) for wait in waits]
        assert len(waits) == 12, f"only {len(waits)} appends while the publish copied"
    finally:
        engine.dispose()
