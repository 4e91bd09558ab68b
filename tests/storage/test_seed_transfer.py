"""Seeds in a session's file (CONTRACT.md 15.7): format ``runtime-store.session/3`` carries
every seed fact; export → import → export gives identical bytes on and across both
databases; versions 1 and 2 still import; a seed line that breaks a rule of section 15 is
``invalid_argument`` at its line, a seed run ID in use ``import_conflict``, and either way
nothing is written."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.database.tables import import_claims
from app.storage.transfer import staged_publish
from app.storage.verify import verify_database
from runtime_store_client import (
    ImportConflictError,
    InvalidArgumentError,
    RunStatus,
    UnavailableError,
)
from tests.conftest import wipe
from tests.contract.builders import (
    new_session,
    run_start,
    start_root,
    started_record,
    terminal_record,
)
from tests.lifecycle.test_refusals import refused, rows
from tests.lifecycle.world import exported, outcome
from tests.storage.seed_world import (
    AGENT,
    SeedWorld,
    build_seed_world,
    declaration,
    end,
    operation,
)

Lines = list[bytes]
PAIRS = [
    ("sqlite", "sqlite"),
    ("sqlite", "postgres"),
    ("postgres", "sqlite"),
    ("postgres", "postgres"),
]


def _engine(request: pytest.FixtureRequest, kind: str) -> Engine:
    engine: Engine = request.getfixturevalue(f"{kind}_engine")
    return engine


def _seen(store: SqlStore, world: SeedWorld) -> list[Any]:
    """What the seed reads and retries answer: the same on the original and the import."""
    seen: list[Any] = []
    for run_id in world.seeded:
        op = operation(run_id, world.session_id)
        seen.append(outcome(functools.partial(store.find_run_preparation, op)))
        found = store.find_run_preparation(op)
        if found is None:
            continue
        seen.append(outcome(functools.partial(store.load_run_seed, run_id, found.seed.end_id)))
        seen.append(
            outcome(
                functools.partial(store.list_run_seed_records, run_id, found.seed.end_id, "", 2)
            )
        )
        seen.append(
            outcome(functools.partial(store.list_run_preparation_records, run_id, found.end_id))
        )
        seen.append(outcome(functools.partial(store.load_run, run_id)))
    # Retries and refusals that read the stored attempts.
    seen.append(
        outcome(lambda: store.begin_run_seed(declaration(world.open, "att-1", world.session_id)))
    )
    seen.append(
        outcome(lambda: store.begin_run_seed(declaration(world.literal, "att-Z", world.session_id)))
    )
    seen.append(
        outcome(
            lambda: store.begin_run_seed(declaration(world.literal, "att-new", world.session_id))
        )
    )
    return seen


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_export_import_export_is_byte_identical_with_seeds(
    request: pytest.FixtureRequest, source: str, target: str
) -> None:
    source_engine, target_engine = _engine(request, source), _engine(request, target)
    wipe(source_engine)
    wipe(target_engine)
    original = SqlStore(source_engine)
    world = build_seed_world(original)
    first = exported(original, world.session_id)
    header = json.loads(first.splitlines()[0])
    assert header["format"] == "runtime-store.session/3"
    before = _seen(original, world)
    assert exported(original, world.session_id) == first  # the reads above wrote nothing
    if source == target:
        wipe(source_engine)
    imported = SqlStore(target_engine)

    imported.import_session(io.BytesIO(first))

    assert exported(imported, world.session_id) == first
    report = verify_database(target_engine)
    assert report.ok, report.violations
    assert _seen(imported, world) == before


def _lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def test_the_seed_lines_come_by_utf8_bytes_with_their_counts(engine: Engine) -> None:
    store = SqlStore(engine)
    world = build_seed_world(store)
    values = _lines(exported(store, world.session_id))

    ops = [v["seed_operation"]["run_id"] for v in values if "seed_operation" in v]
    attempts = [
        (v["seed_attempt"]["run_id"], v["seed_attempt"]["attempt_id"])
        for v in values
        if "seed_attempt" in v
    ]
    kinds = [next(iter(v)) for v in values]
    assert ops == sorted(world.seeded, key=lambda run_id: run_id.encode())
    assert ops[-1] == world.next_turn  # "é" after "z": bytes, not a linguistic order
    literal = [a for r, a in attempts if r == world.literal]
    assert literal == ["att-Z", "att-a", "att-\u00e9"]
    first_seed, last_seed = kinds.index("seed_operation"), kinds.index("record")
    assert set(kinds[1:first_seed]) == {"run"}
    assert set(kinds[first_seed:last_seed]) == {"seed_operation", "seed_attempt", "seed_record"}
    runs = {v["run"]["run_id"]: v["run"] for v in values if "run" in v}
    assert list(runs[world.literal])[-3:] == ["request_digest", "start_kind", "seed_end_id"]
    assert runs[world.literal]["seed_end_id"] == "3"
    assert values[-1]["end"] == {
        "runs": 3,
        "records": 8,
        "memory_events": 0,
        "memory_batches": 0,
        "seed_operations": 5,
        "seed_attempts": 7,
        "seed_records": 13,
    }
    tombstone = next(v["seed_attempt"] for v in values if "seed_attempt" in v)
    assert list(tombstone) == [
        "run_id",
        "attempt_id",
        "state",
        "declaration",
        "source",
        "seed_end_id",
        "end_id",
        "prepared_bytes",
    ]
    record = next(v["seed_record"] for v in values if "seed_record" in v)
    assert list(record)[:5] == ["run_id", "attempt_id", "id", "key", "previous_id"]


def test_a_version_2_file_still_imports_every_seed_end_id_empty(engine: Engine) -> None:
    store = SqlStore(engine)
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    current = exported(store, session_id)
    version_2 = []
    for value in _lines(current):
        if "format" in value:
            value["format"] = "runtime-store.session/2"
        if "run" in value:
            assert value["run"].pop("seed_end_id") == ""
        if "end" in value:
            for name in ("seed_operations", "seed_attempts", "seed_records"):
                assert value["end"].pop(name) == 0
        version_2.append(_line(value))
    wipe(engine)

    store.import_session(io.BytesIO(b"".join(version_2)))

    assert exported(store, session_id) == current
    assert store.load_run(run.run_id).seed_end_id == ""


def test_seed_lines_in_a_version_2_file_are_refused(engine: Engine) -> None:
    store = SqlStore(engine)
    session_id = new_session(store).id
    lines = exported(store, session_id).splitlines(keepends=True)
    wipe(engine)
    op = {"run_id": "r", "agent_id": AGENT, "session_id": session_id, "command_id": "c"}
    edited = [
        _line({**json.loads(lines[0]), "format": "runtime-store.session/2"}),
        _line({"seed_operation": op}),
        _line({"end": {"runs": 0, "records": 0, "memory_events": 0, "memory_batches": 0}}),
    ]

    error = refused(store, engine, b"".join(edited), InvalidArgumentError)

    assert isinstance(error, InvalidArgumentError)
    assert error.line == 2, error.message


# --- a seed line that breaks a rule ------------------------------------------------------


@pytest.fixture(scope="module")
def seeded_file(sqlite_engine: Engine) -> tuple[SeedWorld, bytes]:
    """One seed world's export (made on the SQLite test database, then wiped)."""
    wipe(sqlite_engine)
    store = SqlStore(sqlite_engine)
    world = build_seed_world(store)
    data = exported(store, world.session_id)
    wipe(sqlite_engine)
    return world, data


def _line(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _find(lines: Lines, kind: str, nth: int = 0, **where: Any) -> int:
    found = [
        i
        for i, line in enumerate(lines)
        if kind in (value := json.loads(line))
        and all(value[kind].get(key) == want for key, want in where.items())
    ]
    return found[nth]


def _edit(lines: Lines, index: int, change: Callable[[dict[str, Any]], None]) -> int:
    value = json.loads(lines[index])
    change(value)
    lines[index] = _line(value)
    return index + 1


Tamper = Callable[[SeedWorld, Lines], int]


def _record(run: str, record_id: str, change: Callable[[dict[str, Any]], None]) -> Tamper:
    """The seed record ``record_id`` of the run's published attempt, changed."""

    def tamper(world: SeedWorld, lines: Lines) -> int:
        run_id = getattr(world, run)
        attempt = "att-a" if run == "literal" else "att-1"
        index = _find(lines, "seed_record", run_id=run_id, attempt_id=attempt, id=record_id)
        return _edit(lines, index, lambda v: change(v["seed_record"]))

    return tamper


def _variant(record: dict[str, Any], **variant: Any) -> None:
    for name in ("messages", "literal_part", "prefix", "prepared"):
        record.pop(name, None)
    record.update(variant)


def _attempt(run: str, attempt_id: str, change: Callable[[dict[str, Any]], None]) -> Tamper:
    def tamper(world: SeedWorld, lines: Lines) -> int:
        index = _find(lines, "seed_attempt", run_id=getattr(world, run), attempt_id=attempt_id)
        return _edit(lines, index, lambda v: change(v["seed_attempt"]))

    return tamper


def _set(where: dict[str, Any], key: str, value: Any) -> None:
    where[key] = value


def _run_line(run: str, key: str, value: Any) -> Tamper:
    def tamper(world: SeedWorld, lines: Lines) -> int:
        index = _find(lines, "run", run_id=getattr(world, run))
        return _edit(lines, index, lambda v: _set(v["run"], key, value))

    return tamper


def _second_published(world: SeedWorld, lines: Lines) -> int:
    """A copy of the literal's published attempt under another attempt ID, right after it."""
    run_id = world.literal
    first = _find(lines, "seed_attempt", run_id=run_id, attempt_id="att-a")
    last = _find(lines, "seed_attempt", run_id=run_id, attempt_id="att-\u00e9")
    copies = []
    for line in lines[first:last]:
        value = json.loads(line)
        body = value.get("seed_attempt") or value["seed_record"]
        body["attempt_id"] = "att-b"
        if "seed_attempt" in value:
            body["declaration"]["attempt_id"] = "att-b"
        copies.append(_line(value))
    lines[last:last] = copies
    return last + 1


def _ghost_source(world: SeedWorld, lines: Lines) -> int:
    def change(attempt: dict[str, Any]) -> None:
        attempt["declaration"]["source_run_id"] = "ghost"
        attempt["source"]["run_id"] = "ghost"

    return _attempt("next_turn", "att-1", change)(world, lines)


def _next_turn_not_at_the_terminal(world: SeedWorld, lines: Lines) -> int:
    """The next turn's source (and its prefix) end before the source's terminal record."""
    _record("next_turn", "1", lambda r: _set(r["prefix"], "end_id", "2"))(world, lines)
    return _attempt("next_turn", "att-1", lambda a: _set(a["source"], "end_id", "2"))(world, lines)


def _continuation_beyond_the_records(world: SeedWorld, lines: Lines) -> int:
    _record("continuation", "1", lambda r: _set(r["prefix"], "end_id", "9"))(world, lines)

    def change(attempt: dict[str, Any]) -> None:
        attempt["declaration"]["source_end_id"] = "9"
        attempt["source"]["end_id"] = "9"

    return _attempt("continuation", "att-1", change)(world, lines)


def _record_on_a_tombstone(world: SeedWorld, lines: Lines) -> int:
    index = _find(lines, "seed_attempt", run_id=world.settled, attempt_id="lost")
    record = {
        "run_id": world.settled,
        "attempt_id": "lost",
        "id": "1",
        "key": "k",
        "previous_id": "0",
        "prepared": "AA==",
    }
    lines.insert(index + 1, _line({"seed_record": record}))
    return index + 2


def _operations_out_of_order(world: SeedWorld, lines: Lines) -> int:
    index = _find(lines, "seed_operation", run_id=world.settled)
    _edit(lines, index + 1, lambda v: _set(v["seed_attempt"], "run_id", "seed-0"))
    return _edit(lines, index, lambda v: _set(v["seed_operation"], "run_id", "seed-0"))


def _unpublished_attachment(world: SeedWorld, lines: Lines) -> int:
    """The continuation's attempt left open: its run's seed_end_id has no published seed."""
    _attempt("continuation", "att-1", lambda a: _set(a, "state", "open"))(world, lines)
    return _find(lines, "run", run_id=world.continuation) + 1


def _wrong_attachment(world: SeedWorld, lines: Lines) -> int:
    return _run_line("literal", "seed_end_id", "2")(world, lines)


def _seedless_attachment(world: SeedWorld, lines: Lines) -> int:
    """The literal's seed lines dropped (the counts follow): its run line still attaches
    a seed_end_id."""
    first = _find(lines, "seed_operation", run_id=world.literal)
    after = _find(lines, "seed_operation", run_id=world.next_turn)
    del lines[first:after]
    values = [json.loads(line) for line in lines]
    counts = {f"{kind}s": sum(kind in v for v in values) for kind in _SEED_KINDS}
    _edit(lines, len(lines) - 1, lambda v: v["end"].update(counts))
    return _find(lines, "run", run_id=world.literal) + 1


_SEED_KINDS = ("seed_operation", "seed_attempt", "seed_record")


TAMPERS: dict[str, Tamper] = {
    "a chain not numbered 1..": _record("literal", "2", lambda r: _set(r, "id", "3")),
    "a previous_id that is not the record before": _record(
        "literal", "2", lambda r: _set(r, "previous_id", "0")
    ),
    "a record ID with a leading zero": _record("literal", "1", lambda r: _set(r, "id", "01")),
    "messages that are not a JSON array": _record(
        "literal", "1", lambda r: _variant(r, messages='{"a":1}')
    ),
    "messages that are not JSON": _record("literal", "1", lambda r: _variant(r, messages="[")),
    "two variants": _record("literal", "4", lambda r: _set(r, "messages", "[]")),
    "no variant": _record("literal", "4", lambda r: r.pop("prepared")),
    "an empty literal part": _record("literal", "2", lambda r: _set(r["literal_part"], "data", "")),
    "a literal part without final": _record(
        "literal", "2", lambda r: r["literal_part"].pop("final")
    ),
    "base64 in another spelling": _record(
        "literal", "5", lambda r: _set(r, "prepared", "c3RhcnR=")
    ),
    "base64 that is not base64": _record("literal", "5", lambda r: _set(r, "prepared", "!!")),
    "history after a prepared record": _record(
        "literal", "5", lambda r: _variant(r, messages="[]")
    ),
    "another variant inside an open literal": _record(
        "literal", "3", lambda r: _variant(r, messages="[]")
    ),
    "a key repeated in the attempt": _record("literal", "2", lambda r: _set(r, "key", "m1")),
    "a second prefix": _record(
        "next_turn",
        "2",
        lambda r: _variant(
            r,
            prefix={
                "run_id": "seed-z-literal",
                "end_id": "3",
                "exclude_system": True,
                "exclude_reasoning": True,
            },
        ),
    ),
    "a prefix that is not the source": _record(
        "next_turn", "1", lambda r: _set(r["prefix"], "exclude_system", False)
    ),
    "a prefix on a literal seed": _record(
        "literal",
        "1",
        lambda r: _variant(
            r,
            prefix={
                "run_id": "x",
                "end_id": "1",
                "exclude_system": False,
                "exclude_reasoning": False,
            },
        ),
    ),
    "a published attempt with an open literal": _attempt(
        "open", "att-1", lambda a: _set(a, "state", "published")
    ),
    "counters that are not the chain's": _attempt(
        "literal", "att-a", lambda a: _set(a, "seed_end_id", "2")
    ),
    "prepared bytes that are not the chain's": _attempt(
        "literal", "att-a", lambda a: _set(a, "prepared_bytes", 15)
    ),
    "two published attempts of one run ID": _second_published,
    "a declaration that disagrees with its operation": _attempt(
        "literal", "att-a", lambda a: _set(a["declaration"], "command_id", "other")
    ),
    "a declaration of another attempt": _attempt(
        "literal", "att-a", lambda a: _set(a["declaration"], "attempt_id", "att-Z")
    ),
    "a declaration that breaks a rule": _attempt(
        "literal", "att-a", lambda a: _set(a["declaration"], "exclude_reasoning", True)
    ),
    "a declaration with an unknown kind": _attempt(
        "literal", "att-a", lambda a: _set(a["declaration"], "kind", "fork")
    ),
    "labels that are not a map": _attempt(
        "literal",
        "att-a",
        lambda a: _set(a["declaration"]["rendered_prompts"][0]["scope"], "labels", [["a", "b"]]),
    ),
    "a tombstone that is not abandoned": _attempt(
        "literal", "att-\u00e9", lambda a: _set(a, "state", "open")
    ),
    "a tombstone with records": _record_on_a_tombstone,
    "a source that is not a run of the file": _ghost_source,
    "a source the declaration does not resolve to": _attempt(
        "next_turn", "att-1", lambda a: _set(a["source"], "exclude_reasoning", False)
    ),
    "a next_turn source that is not its terminal record": _next_turn_not_at_the_terminal,
    "a continuation source beyond the source's records": _continuation_beyond_the_records,
    "seed operations out of order": _operations_out_of_order,
    "attempts out of order": _attempt("literal", "att-a", lambda a: _set(a, "attempt_id", "att-A")),
    "an operation of another session": lambda world, lines: _edit(
        lines,
        _find(lines, "seed_operation", run_id=world.open),
        lambda v: _set(v["seed_operation"], "session_id", "other"),
    ),
    "a run attaching another history end": _wrong_attachment,
    "a seed_end_id without a published seed": _unpublished_attachment,
    "a seed_end_id on a run ID without a seed": _seedless_attachment,
    "a forged seed count": lambda _world, lines: _edit(
        lines, len(lines) - 1, lambda v: _set(v["end"], "seed_records", 12)
    ),
}


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_a_seed_line_that_breaks_a_rule_is_refused_at_its_line(
    engine: Engine, seeded_file: tuple[SeedWorld, bytes], tamper: str
) -> None:
    world, data = seeded_file
    lines = data.splitlines(keepends=True)
    expected = TAMPERS[tamper](world, lines)

    error = refused(SqlStore(engine), engine, b"".join(lines), InvalidArgumentError)

    assert isinstance(error, InvalidArgumentError)
    assert error.line == expected, error.message
    assert error.message.startswith(f"line {expected}: "), error.message


def test_the_untampered_file_imports(engine: Engine, seeded_file: tuple[SeedWorld, bytes]) -> None:
    world, data = seeded_file
    store = SqlStore(engine)
    store.import_session(io.BytesIO(data))
    assert exported(store, world.session_id) == data


# --- a seed run ID in use ------------------------------------------------------------------


def _a_run(store: SqlStore, run_id: str) -> None:
    run = run_start(run_id=run_id)
    store.start_one_shot_run(run, started_record(run))


def _a_sessionless_seed(store: SqlStore, run_id: str) -> None:
    store.begin_run_seed(declaration(run_id, "mine", ""))


def _a_reserved_id(store: SqlStore, run_id: str) -> None:
    session_id = new_session(store).id
    assert store.settle_run_preparation(operation(run_id, session_id), "lost") is None
    end(store, session_id)
    store.purge_session(session_id)


USES: dict[str, Callable[[SqlStore, str], None]] = {
    "a run": _a_run,
    "a seed operation": _a_sessionless_seed,
    "a reserved ID": _a_reserved_id,
}


@pytest.mark.parametrize("use", list(USES), ids=list(USES))
def test_a_seed_run_id_used_in_the_store_is_an_import_conflict(
    engine: Engine, seeded_file: tuple[SeedWorld, bytes], use: str
) -> None:
    world, data = seeded_file
    store = SqlStore(engine)
    USES[use](store, world.open)

    error = refused(store, engine, data, ImportConflictError)

    assert error.run_id == world.open, error.message


def test_a_run_id_bound_by_a_seed_in_the_store_is_an_import_conflict(
    engine: Engine, seeded_file: tuple[SeedWorld, bytes]
) -> None:
    world, data = seeded_file
    store = SqlStore(engine)
    _a_sessionless_seed(store, world.literal)

    error = refused(store, engine, data, ImportConflictError)

    assert error.run_id == world.literal, error.message


# --- SQLite: seed records published in slices under claims ----------------------------------


def test_sqlite_copies_seed_records_in_slices(
    sqlite_engine: Engine, seeded_file: tuple[SeedWorld, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    wipe(sqlite_engine)
    world, data = seeded_file
    copied: list[int] = []
    original = staged_publish.copy_seed_records

    def counted(conn: Any, **kwargs: Any) -> None:
        copied.append(1)
        original(conn, **kwargs)

    monkeypatch.setattr(staged_publish, "SLICE_ROWS", 2)
    monkeypatch.setattr(staged_publish, "copy_seed_records", counted)
    store = SqlStore(sqlite_engine)

    store.import_session(io.BytesIO(data))

    assert len(copied) == 7  # 13 seed records, two a slice
    assert exported(store, world.session_id) == data
    assert verify_database(sqlite_engine).ok


def test_sqlite_gives_back_the_seed_records_of_a_failed_publish(
    sqlite_engine: Engine, seeded_file: tuple[SeedWorld, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    wipe(sqlite_engine)
    _, data = seeded_file

    def fail(conn: Any, **kwargs: Any) -> None:
        raise UnavailableError("the publish failed")

    monkeypatch.setattr(staged_publish, "finish", fail)
    store = SqlStore(sqlite_engine)

    refused(store, sqlite_engine, data, UnavailableError)


def test_sqlite_a_claimed_run_id_is_not_bound_while_an_import_publishes(
    sqlite_engine: Engine,
) -> None:
    wipe(sqlite_engine)
    with sqlite_engine.begin() as conn:
        conn.execute(
            import_claims.insert(),
            {"kind": "run", "claimed_id": "claimed", "import_id": "i", "expires_at_ms": 2**62},
        )
    store = SqlStore(sqlite_engine)
    before = rows(sqlite_engine)

    with pytest.raises(UnavailableError):
        store.begin_run_seed(declaration("claimed", "a", ""))
    with pytest.raises(UnavailableError):
        store.settle_run_preparation(operation("claimed", ""), "a")
    assert rows(sqlite_engine) == before
