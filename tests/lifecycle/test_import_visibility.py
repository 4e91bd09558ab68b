"""An import is all or nothing for every reader, and for a process killed half way
(CONTRACT.md 2.1, 2.10, 11.4).

Readers polling while an import runs see the session whole or not at all; a start of one
of the file's run IDs that commits while the import stages wins, and the import is then
``import_conflict``; an importing process killed with SIGKILL between its staged batches
leaves no row, no file and no lock behind, and the same file imports afterwards. On SQLite
the publish itself copies the records a slice per transaction while the file's IDs are
claimed: a start of one of them meanwhile is ``unavailable``, nothing is visible until the
end, and an import killed midway is given back by the service once its lease has run out.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.transfer import sinks, staged_publish
from app.storage.verify import verify_database
from runtime_store_client import (
    ImportConflictError,
    RunNotFoundError,
    SessionNotFoundError,
    UnavailableError,
)
from tests.conftest import start_server, stop_server, wipe
from tests.contract.builders import T0, new_session, record, start_root
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


# --- the publish, in slices under held IDs (app/storage/unit_of_work/import_holds.py) ---


class _Midway:
    """Wraps the publish's transactions: once ``slices`` record slices have committed, the
    next transaction waits (outside any transaction) until released."""

    def __init__(self, write: Any, slices: int) -> None:
        self.write, self.slices, self.copied = write, slices, 0
        self.reached, self.released = threading.Event(), threading.Event()

    def __call__(self, sink: Any, operation: Any) -> None:
        if self.copied == self.slices and not self.reached.is_set():
            self.reached.set()
            assert self.released.wait(30), "never released"
        self.write(sink, operation)
        self.copied += getattr(operation, "func", None) is staged_publish.copy_records


def test_a_publish_copies_records_in_slices_while_its_ids_are_claimed(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between two slices of the publish: other writers are served, the file's session and
    run IDs are claimed (a start or create_session of one is ``unavailable``), and nothing
    of the session is visible, though some of its records are in the live table; then it
    appears whole and the claims are gone."""
    engine = create_engine(sqlite_url)
    try:
        store = SqlStore(engine)
        wipe(engine)
        session_id = big_session(store, runs=RUNS, records=300, size=100)
        data = exported(store, session_id)
        taken = _run_ids(data)[-1]
        wipe(engine)
        other = new_session(store).id
        writer = start_root(store, other).run
        before = rows(engine)
        monkeypatch.setattr(staged_publish, "SLICE_ROWS", 50)
        midway = _Midway(sinks._Staged._write, slices=3)

        def write(sink: Any, operation: Any) -> None:  # a function: bound as a method
            midway(sink, operation)

        monkeypatch.setattr(sinks._Staged, "_write", write)

        importing = Importing(store, io.BytesIO(data))
        assert midway.reached.wait(30), "the publish never reached its fourth slice"
        try:
            assert within(5.0, lambda: store.append_run_record(record(writer))).inserted
            with pytest.raises(UnavailableError, match="being imported"):
                start_root(store, other, run_id=taken)
            with pytest.raises(UnavailableError, match="being imported"):
                store.create_session(session_id, T0)
            with pytest.raises(SessionNotFoundError):
                store.load_session(session_id)
            with pytest.raises(RunNotFoundError):
                store.list_run_records(taken)
            now = rows(engine)
            assert now["import_claims"] == 1 + RUNS
            assert now["run_records"] == before["run_records"] + 1 + 3 * 50
            report = verify_database(engine)
            assert report.ok, report.violations
            assert report.import_pending_records == 3 * 50
        finally:
            midway.released.set()

        assert importing.outcome() == store.load_session(session_id)
        assert rows(engine)["import_claims"] == 0
        assert exported(store, session_id) == data
        assert verify_database(engine).ok
    finally:
        engine.dispose()


_KILLED_PUBLISH = """
import sys, time
from app.storage import SqlStore, create_engine
from app.storage.unit_of_work import import_holds
from app.storage.transfer import sinks, staged_publish

import_holds.LEASE_MS = 500
staged_publish.SLICE_ROWS = 50
write, copied = sinks._Staged._write, []

def stalling(sink, operation):
    if len(copied) == 2:
        print("stalled", flush=True)
        time.sleep(600)
    write(sink, operation)
    if getattr(operation, "func", None) is staged_publish.copy_records:
        copied.append(1)

sinks._Staged._write = stalling
SqlStore(create_engine(sys.argv[1])).import_session(open(sys.argv[2], "rb"))
"""


def test_an_import_killed_while_publishing_is_given_back_by_the_service(
    tmp_path: Path,
) -> None:
    """An importing process killed between two slices of its publish leaves claims and
    copied records that no read reaches; once its lease has run out, a service worker's
    sweep gives them back, and the same file imports."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        store = SqlStore(engine)
        session_id = big_session(store, runs=RUNS, records=300, size=100)
        data = exported(store, session_id)
        wipe(engine)
        (tmp_path / "session.ndjson").write_bytes(data)
        before = rows(engine)

        child = _in_a_process(_KILLED_PUBLISH, url, tmp_path / "session.ndjson")
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        left = rows(engine)
        assert left["import_claims"] == 1 + RUNS
        assert left["run_records"] == 2 * 50
        with pytest.raises(SessionNotFoundError):
            store.load_session(session_id)

        server = start_server(url, tmp_path / "server.log")
        try:
            deadline = time.monotonic() + 30
            while rows(engine) != before:
                assert time.monotonic() < deadline, "the service did not sweep the import"
                time.sleep(0.2)
        finally:
            stop_server(server)
        assert "abandoned import" in server.log()
        assert verify_database(engine).ok
        assert store.import_session(io.BytesIO(data)).id == session_id
        assert exported(store, session_id) == data
    finally:
        engine.dispose()


def _in_a_process(script: str, *args: object) -> subprocess.Popen[Any]:
    """``script`` in another process, once it has printed ``stalled``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, env=env
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if line != b"stalled\n":
        child.kill()
        child.wait(30)
        pytest.fail(f"the importing process did not stall: {line!r}")
    return child
