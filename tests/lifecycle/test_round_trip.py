"""Export → import into an empty store → export gives identical bytes on every pair of
databases, the imported session verifies clean, and it behaves as the original
(CONTRACT.md 11.4)."""

from __future__ import annotations

import functools
import io
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.database.tables import memory_batches
from app.storage.verify import verify_database
from runtime_store_client import MemoryEvent, RunStatus
from tests.conftest import wipe
from tests.contract.builders import (
    T0,
    canceled_record,
    checkpoint,
    link_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)
from tests.lifecycle.conftest import target_of
from tests.lifecycle.world import World, build_world, exported, outcome, retry_starts

PAIRS = [
    ("sqlite", "sqlite"),
    ("sqlite", "postgres"),
    ("postgres", "sqlite"),
    ("postgres", "postgres"),
]


def _engines(request: pytest.FixtureRequest, source: str, target: str) -> tuple[Engine, Engine]:
    source_engine: Engine = request.getfixturevalue(f"{source}_engine")
    wipe(source_engine)
    return source_engine, target_of(request, target)


def _later_operations(store: SqlStore, world: World) -> list[Any]:
    """The same operations on the original and on the imported session, and their answers."""
    sid, running, suspended = world.session_id, world.running, world.suspended
    seen: list[Any] = [
        outcome(lambda: store.append_run_record(record(running, event_key="after"))),
        outcome(lambda: store.list_session_run_records(sid, limit=1000)),
        [
            outcome(functools.partial(store.load_run, args[0].run_id))
            for _, args, _, _ in world.starts
        ],
        outcome(lambda: store.load_run_suspension(suspended.run_id)),
    ]
    other = run_start(session_id=sid, predecessor_run_id=suspended.run_id, run_id="late-successor")
    seen.append(
        outcome(lambda: store.start_root_run(other, started_record(other), canceled_record(other)))
    )
    for agent, run_id, key, events in world.memory:
        store.append_memory_events(agent, run_id, events, idempotency_key=key)  # a no-op
        seen.append(outcome(functools.partial(store.load_memory, agent, run_id)))
        changed = [MemoryEvent(type="planner_note", timestamp=T0)]
        seen.append(
            outcome(
                functools.partial(
                    store.append_memory_events, agent, run_id, changed, idempotency_key=key
                )
            )
        )
    finish = terminal_record(running, RunStatus.COMPLETED)
    seen.append(
        outcome(lambda: store.record_run_terminal(running.run_id, RunStatus.COMPLETED, finish))
    )
    seen.append(outcome(lambda: store.purge_session(sid)))
    seen.append(outcome(lambda: store.load_run(running.run_id)))
    return seen


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_export_import_export_is_byte_identical_and_behaves_as_the_original(
    request: pytest.FixtureRequest, source: str, target: str
) -> None:
    source_engine, target_engine = _engines(request, source, target)
    original, imported = SqlStore(source_engine), SqlStore(target_engine)
    world = build_world(original)
    first = exported(original, world.session_id)

    session = imported.import_session(io.BytesIO(first))

    assert session == original.load_session(world.session_id)
    assert exported(imported, world.session_id) == first
    report = verify_database(target_engine)
    assert report.ok, report.violations
    assert (report.purge_pending_records, report.purge_pending_checkpoints) == (0, 0)
    # Exact retries of the starts return the original IDs and outcomes.
    retried = retry_starts(imported, world)
    assert retried == retry_starts(original, world)
    assert [(r.outcome, r.started.id) for r in retried] == [
        (first.outcome, first.started.id) for _, _, first, _ in world.starts
    ]
    assert _later_operations(imported, world) == _later_operations(original, world)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_export_reads_one_snapshot(request: pytest.FixtureRequest, kind: str) -> None:
    engine: Engine = request.getfixturevalue(f"{kind}_engine")
    wipe(engine)
    store = SqlStore(engine)
    world = build_world(store, notes=1)
    before = exported(store, world.session_id)
    lines = store.export_lines(world.session_id)
    header = next(lines)  # the snapshot is taken

    store.append_run_record(record(world.running, event_key="during-export"))
    rest = b"".join(lines)

    assert header + rest == before
    assert b"during-export" in exported(store, world.session_id)


@pytest.mark.parametrize("target", ["sqlite", "postgres"])
def test_memory_appends_kept_without_a_digest_move_too(
    request: pytest.FixtureRequest, sqlite_engine: Engine, target: str
) -> None:
    """Appends accepted before their digest was kept (migration 0005) have none."""
    wipe(sqlite_engine)
    original = SqlStore(sqlite_engine)
    world = build_world(original, notes=1)
    with sqlite_engine.begin() as conn:
        conn.execute(sa.update(memory_batches).values(digest=None))
    first = exported(original, world.session_id)
    assert b'"digest":null' in first
    imported = SqlStore(target_of(request, target))

    imported.import_session(io.BytesIO(first))

    assert exported(imported, world.session_id) == first


def test_a_child_continued_under_its_own_parent_with_a_new_tool_call_moves(
    request: pytest.FixtureRequest, engine: Engine
) -> None:
    """The replay admits a continuation by the starts' own rule (12.4 compares the link
    only when the parent changes), so what a start accepted, an import accepts."""
    store = SqlStore(engine)
    session_id = new_session(store).id
    parent = start_root(store, session_id).run
    first = run_start(session_id=session_id, parent_run_id=parent.run_id, agent_id="agent-c")
    store.start_child_run(
        first, link_record(parent, first), started_record(first), canceled_record(first)
    )
    store.record_run_suspension(first.run_id, checkpoint(), suspended_record(first))
    second = run_start(
        session_id=session_id,
        parent_run_id=parent.run_id,
        agent_id="agent-c",
        predecessor_run_id=first.run_id,
    )
    link = link_record(parent, second, tool_call_id="call-2")
    store.start_child_run(second, link, started_record(second), canceled_record(second))
    data = exported(store, session_id)
    imported = SqlStore(target_of(request, "sqlite"))

    imported.import_session(io.BytesIO(data))

    assert exported(imported, session_id) == data
