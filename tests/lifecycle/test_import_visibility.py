"""An import is all or nothing for every reader, and for a process killed half way
(CONTRACT.md 2.1, 2.10, 11.4).

Readers polling while an import runs see the session whole or not at all; a start of one
of the file's run IDs that commits while the import stages wins, and the import is then
``import_conflict``; an importing process killed with SIGKILL between its staged batches
leaves no row, no file and no lock behind, and the same file imports afterwards.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.verify import verify_database
from runtime_store_client import (
    ImportConflictError,
    RunNotFoundError,
    SessionNotFoundError,
)
from tests.conftest import wipe
from tests.contract.builders import new_session, record, start_root
from tests.lifecycle.test_import_slices import Importing, PausingReader, big_session, within
from tests.lifecycle.test_refusals import rows
from tests.lifecycle.world import exported

RUNS, RECORDS = 4, 1500


def _run_ids(data: bytes) -> list[str]:
    return [
        json.loads(line)["run"]["run_id"]
        for line in data.splitlines()
        if line.startswith(b'{"run"')
    ]


def _reads(store: SqlStore, session_id: str, run_ids: list[str]) -> set[tuple[str, object]]:
    """What each read (its own transaction) sees of the session: ``(read, answer)``, the
    answer ``None`` for nothing."""
    seen: set[tuple[str, object]] = set()
    try:
        seen.add(("session", store.load_session(session_id).id == session_id))
    except SessionNotFoundError:
        seen.add(("session", None))
    for run_id in run_ids:
        try:
            seen.add(("run", store.load_run(run_id).run_id in run_ids))
        except RunNotFoundError:
            seen.add(("run", None))
    seen.add(("runs searched", len(store.search_runs(session_id=session_id).runs) or None))
    try:
        page = store.list_session_run_records(session_id, limit=1000)
    except SessionNotFoundError:
        seen.add(("records listed", None))
        return seen
    records = len(page.records)
    while page.next_cursor:  # the session exists: it is whole, so every later page too
        page = store.list_session_run_records(session_id, cursor=page.next_cursor, limit=1000)
        records += len(page.records)
    seen.add(("records listed", records))
    return seen


def test_readers_see_an_imported_session_whole_or_not_at_all(engine: Engine) -> None:
    store = SqlStore(engine)
    session_id = big_session(store, runs=RUNS, records=RECORDS, size=200)
    data = exported(store, session_id)
    run_ids = _run_ids(data)
    wipe(engine)
    seen: set[tuple[str, object]] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.update(_reads(store, session_id, run_ids))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert store.import_session(io.BytesIO(data)).id == session_id
    finally:
        stop.set()
        reader.join(60)
    whole = _reads(store, session_id, run_ids)
    nothing = {(read, None) for read, _ in whole}

    assert whole == {
        ("session", True),
        ("run", True),
        ("runs searched", RUNS),
        ("records listed", RUNS * (RECORDS + 1)),
    }
    assert seen <= whole | nothing, f"a reader saw part of the import: {seen - whole - nothing}"
    assert seen & nothing, "no read ran while the import did: too short a test"


def test_a_start_of_an_imported_run_id_during_the_import_wins(sqlite_url: str) -> None:
    """SQLite stages outside the store's database, so a start that commits first takes the
    ID and the import, published later, is ``import_conflict``. (On PostgreSQL the start
    waits for the import's transaction on the unique index, then sees the imported run.)"""
    engine = create_engine(sqlite_url)
    try:
        store = SqlStore(engine)
        wipe(engine)
        session_id = big_session(store, runs=RUNS, records=300, size=100)
        data = exported(store, session_id)
        taken = _run_ids(data)[-1]
        wipe(engine)
        before_other = new_session(store).id
        file = PausingReader(data, pause_at=len(data) * 3 // 4)
        importing = Importing(store, file)
        assert file.paused.wait(30)

        started = within(5.0, lambda: start_root(store, before_other, run_id=taken))
        assert started.result.outcome.value == "proceed"
        file.released.set()

        error = importing.outcome()
        assert isinstance(error, ImportConflictError)
        assert error.run_id == taken
        with pytest.raises(SessionNotFoundError):
            store.load_session(session_id)
        assert store.load_run(taken).session_id == before_other
        assert verify_database(engine).ok
    finally:
        engine.dispose()


_KILLED_IMPORT = """
import sys, time
from pathlib import Path
from app.storage import SqlStore, create_engine

class Stalling:
    def __init__(self, path: str, stall_at: int) -> None:
        self.file = open(path, "rb")
        self.stall_at = stall_at

    def read(self, size: int = -1) -> bytes:
        if self.file.tell() >= self.stall_at:
            print("stalled", flush=True)
            time.sleep(600)
        return self.file.read(4096)

store = SqlStore(create_engine(sys.argv[1]))
store.import_session(Stalling(sys.argv[2], int(sys.argv[3])))
"""


def test_an_import_killed_between_its_slices_leaves_nothing_behind(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        store = SqlStore(engine)
        session_id = big_session(store, runs=RUNS, records=RECORDS, size=200)
        data = exported(store, session_id)
        wipe(engine)
        (tmp_path / "session.ndjson").write_bytes(data)
        writer = start_root(store, new_session(store).id).run
        before = rows(engine)
        files = sorted(path.name for path in tmp_path.iterdir())

        child = _import_in_a_process(url, tmp_path / "session.ndjson", stall_at=len(data) * 3 // 4)
        try:
            # Staged batches were written (several of BATCH rows); the store's writer is free.
            assert within(5.0, lambda: store.append_run_record(record(writer))).inserted
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(30)

        with pytest.raises(SessionNotFoundError):
            store.load_session(session_id)
        after = rows(engine)
        assert after == {**before, "run_records": before["run_records"] + 1}
        assert sorted(path.name for path in tmp_path.iterdir()) == files
        assert verify_database(engine).ok
        assert store.import_session(io.BytesIO(data)).id == session_id
        assert exported(store, session_id) == data
    finally:
        engine.dispose()


def _import_in_a_process(url: str, path: Path, *, stall_at: int) -> subprocess.Popen[Any]:
    """An import of ``path`` in another process, stalled (its reader sleeping) once it has
    read ``stall_at`` bytes: between two of its staged batches."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_IMPORT, url, str(path), str(stall_at)],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if line != b"stalled\n":
        child.kill()
        child.wait(30)
        pytest.fail(f"the importing process did not stall: {line!r}")
    return child
