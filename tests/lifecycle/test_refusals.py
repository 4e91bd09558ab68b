"""An import that breaks a rule is refused and writes nothing (CONTRACT.md 11.4): a line
that breaks a rule is ``invalid_argument`` naming its line, an ID that exists (or existed)
is ``import_conflict`` naming it, and the database is the arbiter of imports that race."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.limits import Limits
from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.database.tables import metadata, service_keys
from runtime_store_client import (
    ImportConflictError,
    InvalidArgumentError,
    MemoryEvent,
    RunStatus,
    StoreError,
)
from tests.contract.builders import (
    T0,
    at,
    new_session,
    run_start,
    start_root,
    started_record,
    terminal_record,
)
from tests.lifecycle.world import build_world, exported

Lines = list[bytes]


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, bytes]]:
    """One world's export (session ID, bytes), made once on a scratch SQLite file."""
    url = f"sqlite:///{tmp_path_factory.mktemp('refusals') / 'source.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    store = SqlStore(engine)
    world = build_world(store, notes=4)
    yield world.session_id, exported(store, world.session_id)
    engine.dispose()


def rows(engine: Engine) -> dict[str, int]:
    """Rows of every table that holds data (the service keys are configuration)."""
    with engine.connect() as conn:
        return {
            table.name: conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            for table in metadata.sorted_tables
            if table is not service_keys
        }


def refused(store: SqlStore, engine: Engine, data: bytes, error: type[StoreError]) -> StoreError:
    """The import of ``data`` fails with ``error`` and leaves every table as it was."""
    before = rows(engine)
    with pytest.raises(error) as info:
        store.import_session(io.BytesIO(data))
    assert type(info.value) is error
    assert rows(engine) == before
    return info.value


# --- tampered files ----------------------------------------------------------------------


def _parsed(lines: Lines) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def _line(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, separators=(",", ":")) + "\n").encode()


def _find(lines: Lines, test: Callable[[dict[str, Any]], bool], nth: int = 0) -> int:
    """The index of the ``nth`` line whose object passes ``test``."""
    found = [i for i, value in enumerate(_parsed(lines)) if test(value)]
    return found[nth]


def _kind(kind: str, **fields: str) -> Callable[[dict[str, Any]], bool]:
    def test(value: dict[str, Any]) -> bool:
        body = value.get(kind)
        return isinstance(body, dict) and all(body.get(k) == v for k, v in fields.items())

    return test


def _edit(lines: Lines, index: int, change: Callable[[dict[str, Any]], None]) -> int:
    value = json.loads(lines[index])
    change(value)
    lines[index] = _line(value)
    return index + 1


def _set(kind: str, key: str, value: Any, nth: int = 0, **where: str) -> Callable[[Lines], int]:
    """A tamper: the ``nth`` line of ``kind`` (matching ``where``) gets ``key`` = ``value``."""

    def tamper(lines: Lines) -> int:
        index = _find(lines, _kind(kind, **where), nth)
        return _edit(lines, index, lambda v: v[kind].__setitem__(key, value))

    return tamper


_NOTE = _kind("record", type="planner_note")


def _header(lines: Lines) -> int:
    return _edit(lines, 0, lambda v: v.__setitem__("format", "runtime-store.session/4"))


def _active_with_end(lines: Lines) -> int:
    return _edit(lines, 0, lambda v: v["session"].__setitem__("status", "active"))


def _repeated_run(lines: Lines) -> int:
    lines.insert(2, lines[1])
    return 3


def _not_reached(lines: Lines) -> int:
    """The running run's line says completed; its records end running: its own line."""
    index = _find(lines, lambda v: "run" in v and v["run"]["status"] == "running")
    return _edit(lines, index, lambda v: v["run"].__setitem__("status", "completed"))


def _key_mismatch(lines: Lines) -> int:
    run = _find(lines, lambda v: "run" in v and v["run"]["status"] == "failed")
    run_id = json.loads(lines[run])["run"]["run_id"]
    _edit(lines, run, lambda v: v["run"]["keys"].__setitem__("terminal", "other"))
    return _find(lines, _kind("record", run_id=run_id, type="run_completed")) + 1


def _id_gap(lines: Lines) -> int:
    index = _find(lines, _NOTE, 1)
    return _edit(lines, index, lambda v: v["record"].__setitem__("id", "9"))


def _first_not_started(lines: Lines) -> int:
    index = _find(lines, _kind("record", type="run_started"))
    return _edit(lines, index, lambda v: v["record"].__setitem__("type", "planner_note"))


def _after_terminal(lines: Lines) -> int:
    """A note appended to the failed run after its run_completed."""
    completed = _find(lines, _kind("record", type="run_completed"), 1)
    value = json.loads(lines[completed])
    record = value["record"]
    record.update(id=str(int(record["id"]) + 1), event_key="late", type="planner_note")
    record["payload"] = "{}"
    lines.insert(completed + 1, _line(value))
    return completed + 2


def _unknown_lifecycle_key(lines: Lines) -> int:
    index = _find(lines, _kind("record", type="run_started"))
    return _edit(
        lines,
        index,
        lambda v: v["record"].__setitem__("payload", v["record"]["payload"][:-1] + ',"X":1}'),
    )


def _repeated_event_key(lines: Lines) -> int:
    first = json.loads(lines[_find(lines, _NOTE, 0)])["record"]["event_key"]
    return _set("record", "event_key", first, 1, type="planner_note")(lines)


def _run_after_record(lines: Lines) -> int:
    """The last run line (the stopped start, whose records come last) after a record."""
    run = lines.pop(_find(lines, _kind("record")) - 1)
    record = _find(lines, _kind("record"))
    lines.insert(record + 1, run)
    return record + 2


def _line_after_end(lines: Lines) -> int:
    lines.append(lines[-1])
    return len(lines)


def _forged_count(lines: Lines) -> int:
    return _edit(lines, len(lines) - 1, lambda v: v["end"].__setitem__("records", 99))


def _no_end_line(lines: Lines) -> int:
    lines.pop()
    return len(lines) + 1


def _cut_mid_line(lines: Lines) -> int:
    index = _find(lines, _NOTE, 1)
    lines[index] = lines[index][: len(lines[index]) // 2]
    del lines[index + 1 :]
    return index + 1


def _not_continued(lines: Lines) -> int:
    """The suspended run no longer names its successor: the successor's run_started."""
    index = _find(lines, lambda v: "run" in v and v["run"]["status"] == "suspended")
    successor = json.loads(lines[index])["run"]["successor_run_id"]
    _edit(lines, index, lambda v: v["run"].__setitem__("successor_run_id", ""))
    return _find(lines, _kind("record", run_id=successor, type="run_started")) + 1


def _bad_json(lines: Lines) -> int:
    index = _find(lines, _NOTE, 2)
    lines[index] = b'{"record": {"id": \n'
    return index + 1


def _version_1_with_new_keys(lines: Lines) -> int:
    """A version 1 header over version 2 run lines: the first run line has unknown keys."""
    _edit(lines, 0, lambda v: v.__setitem__("format", "runtime-store.session/1"))
    return _find(lines, _kind("run")) + 1


def _moved_link_mismatch(lines: Lines) -> int:
    """12.4: the link of a child continued under another parent names another tool call
    than its predecessor's: its run_started (the continuation) is refused."""
    started = _find(
        lines,
        lambda v: (
            _kind("record", type="run_started")(v)
            and json.loads(v["record"]["payload"])["ParentRunID"] != ""
            and json.loads(v["record"]["payload"])["PredecessorRunID"] != ""
        ),
    )
    child = json.loads(lines[started])["record"]["run_id"]
    link = _find(
        lines,
        lambda v: (
            _kind("record", type="child_run_linked")(v)
            and json.loads(v["record"]["payload"])["ChildRunID"] == child
        ),
    )

    def retool(value: dict[str, Any]) -> None:
        payload = json.loads(value["record"]["payload"])
        payload["ToolCallID"] = "call-other"
        value["record"]["payload"] = json.dumps(payload, separators=(",", ":"))

    _edit(lines, link, retool)
    return started + 1


TAMPERS: dict[str, Callable[[Lines], int]] = {
    "the header's format": _header,
    "an active session with an end": _active_with_end,
    "a run status that is none": _set("run", "status", "paused"),
    "a run of another session": _set("run", "session_id", "elsewhere"),
    "a run line twice": _repeated_run,
    "a checkpoint that is not base64": _set(
        "run", "checkpoint", {"id": "cp-1", "data": "**"}, status="suspended"
    ),
    "a status the records do not reach": _not_reached,
    "a synchronous run in a session": _set("run", "start_kind", "synchronous"),
    "a request digest of zeros": _set("run", "request_digest", "0" * 64),
    "a request digest in capitals": _set("run", "request_digest", "AB" * 32),
    "a version 1 file with version 2 run lines": _version_1_with_new_keys,
    "a continuation under another parent with another tool call": _moved_link_mismatch,
    "a remembered key naming another record": _key_mismatch,
    "a record ID out of sequence": _id_gap,
    "a NUL in an event key": _set("record", "event_key", "a\x00b", type="planner_note"),
    "a lone surrogate in a turn ID": _set("record", "turn_id", "\ud800", type="planner_note"),
    "a payload that is not JSON": _set("record", "payload", "{not json", type="planner_note"),
    "a lifecycle payload with an unknown key": _unknown_lifecycle_key,
    "a run that does not begin with run_started": _first_not_started,
    "a record after the run's terminal": _after_terminal,
    "a record of another agent": _set("record", "agent_id", "intruder", type="planner_note"),
    "a sub-millisecond timestamp": _set("record", "timestamp", "2026-11-30T01:02:03.4567Z"),
    "a record of no run line": _set("record", "run_id", "ghost", type="planner_note"),
    "an event key twice in a run": _repeated_event_key,
    "a continuation its predecessor does not name": _not_continued,
    "a memory event type that is none": _set("memory_event", "type", "dream"),
    "a memory append digest that is not one": _set("memory_batch", "digest", "xyz"),
    "a run line after the records": _run_after_record,
    "a line after the end line": _line_after_end,
    "a forged count": _forged_count,
    "a file cut after a line": _no_end_line,
    "a file cut inside a line": _cut_mid_line,
    "a line that is not JSON": _bad_json,
}


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_a_line_that_breaks_a_rule_is_refused_with_its_number_and_nothing_is_written(
    engine: Engine, original: tuple[str, bytes], tamper: str
) -> None:
    lines = original[1].splitlines(keepends=True)
    expected = TAMPERS[tamper](lines)

    error = refused(SqlStore(engine), engine, b"".join(lines), InvalidArgumentError)

    assert isinstance(error, InvalidArgumentError)
    assert error.line == expected, error.message
    assert error.message.startswith(f"line {expected}: "), error.message


_SEED_COUNTS = ("seed_operations", "seed_attempts", "seed_records")


def test_a_version_1_file_still_imports_with_no_digests_and_engine_runs(
    engine: Engine, original: tuple[str, bytes]
) -> None:
    session_id, data = original
    version_1, expected = [], []
    for value in _parsed(data.splitlines(keepends=True)):
        if "format" in value:
            value["format"] = "runtime-store.session/1"
        if "run" in value:
            assert value["run"].pop("seed_end_id") == ""
            assert value["run"].pop("start_kind") == "engine"
            value["run"].pop("request_digest")
        if "end" in value:
            assert [value["end"].pop(name) for name in _SEED_COUNTS] == [0, 0, 0]
        version_1.append(_line(value))
    store = SqlStore(engine)
    store.import_session(io.BytesIO(b"".join(version_1)))
    for value in _parsed(exported(store, session_id).splitlines(keepends=True)):
        if "format" in value:
            assert value["format"] == "runtime-store.session/3"
            value["format"] = "runtime-store.session/1"
        if "run" in value:
            assert value["run"].pop("seed_end_id") == ""
            assert value["run"].pop("start_kind") == "engine"
            assert value["run"].pop("request_digest") is None
        if "end" in value:
            assert [value["end"].pop(name) for name in _SEED_COUNTS] == [0, 0, 0]
        expected.append(_line(value))
    assert expected == version_1


def test_an_empty_file_is_refused_at_line_1(engine: Engine) -> None:
    error = refused(SqlStore(engine), engine, b"", InvalidArgumentError)
    assert isinstance(error, InvalidArgumentError)
    assert error.line == 1


def test_the_write_bounds_apply_to_every_line(engine: Engine, original: tuple[str, bytes]) -> None:
    """A payload over the store's bound is refused at its line, as an append would be."""
    store = SqlStore(engine, limits=Limits(max_payload_bytes=40))
    error = refused(store, engine, original[1], InvalidArgumentError)
    assert isinstance(error, InvalidArgumentError)
    big = next(
        i
        for i, line in enumerate(original[1].splitlines(), 1)
        if line.startswith(b'{"record"')
        and len(json.loads(line)["record"]["payload"].encode()) > 40
    )
    assert error.line == big


# --- IDs that exist ----------------------------------------------------------------------


def _run_ids(data: bytes) -> list[str]:
    return [
        json.loads(line)["run"]["run_id"]
        for line in data.splitlines()
        if line.startswith(b'{"run"')
    ]


def _purged_session(store: SqlStore, session_id: str, run_id: str = "") -> None:
    new_session(store, session_id)
    if run_id:
        started = start_root(store, session_id, run_id=run_id).run
        store.record_run_terminal(
            run_id, RunStatus.COMPLETED, terminal_record(started, RunStatus.COMPLETED)
        )
    store.end_session(session_id, at(1))
    store.purge_session(session_id)


def _sessionless(store: SqlStore, run_id: str) -> None:
    run = run_start(run_id=run_id)
    store.start_one_shot_run(run, started_record(run))


def _session(store: SqlStore, session_id: str, run_id: str) -> None:
    del run_id
    new_session(store, session_id)


def _run_elsewhere(store: SqlStore, session_id: str, run_id: str) -> None:
    del session_id
    start_root(store, new_session(store).id, run_id=run_id)


def _memory(store: SqlStore, session_id: str, run_id: str) -> None:
    del session_id
    store.append_memory_events("agent-9", run_id, [MemoryEvent(type="user_message", timestamp=T0)])


EXISTING: dict[str, tuple[Callable[[SqlStore, str, str], None], str]] = {
    "the session": (_session, "session"),
    "the session, purged": (lambda s, sid, _run: _purged_session(s, sid), "session"),
    "a run in another session": (_run_elsewhere, "run"),
    "a run of a purged session": (lambda s, _sid, run: _purged_session(s, "gone", run), "run"),
    "a sessionless run": (lambda s, _sid, run: _sessionless(s, run), "run"),
    "memory of a run": (_memory, "run"),
}


@pytest.mark.parametrize("existing", list(EXISTING), ids=list(EXISTING))
def test_an_existing_id_is_an_import_conflict_naming_it(
    engine: Engine, original: tuple[str, bytes], existing: str
) -> None:
    store = SqlStore(engine)
    session_id, data = original
    run_id = _run_ids(data)[-1]
    make, named = EXISTING[existing]
    make(store, session_id, run_id)

    error = refused(store, engine, data, ImportConflictError)

    assert (error.code, error.status) == ("import_conflict", 409)
    if named == "session":
        assert error.session_id == session_id
    else:
        assert error.run_id == run_id


def test_racing_imports_of_one_session_commit_exactly_once(
    engine: Engine, original: tuple[str, bytes]
) -> None:
    store = SqlStore(engine)
    start = threading.Barrier(3)
    answers: list[object] = []

    def import_once() -> None:
        start.wait()
        try:
            answers.append(store.import_session(io.BytesIO(original[1])))
        except StoreError as exc:
            answers.append(exc.code)

    threads = [threading.Thread(target=import_once) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(map(str, answers)).count("import_conflict") == 2
    assert exported(store, original[0]) == original[1]
