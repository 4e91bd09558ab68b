"""``runtime-store db verify``: clean data passes, each corruption names its invariant.

Every test starts from a database filled through ``SqlStore`` with every kind of run, then
breaks one thing with direct SQL and expects exactly the matching violations. Checks run with tiny
pages, so the key-range paging is exercised too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from typer.testing import CliRunner

from app.cli import cli
from app.storage import SqlStore
from app.storage import verify as v
from app.storage.database.tables import metadata, service_keys
from runtime_store_client import RunStart, RunStartOutcome, RunStatus
from tests.contract.builders import (
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    completed_payload,
    dumps,
    link_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)

Found = set[tuple[str, str, str]]
DIGEST = bytes(range(1, 33))


@dataclass(frozen=True)
class World:
    """IDs of one database holding every kind of run."""

    active: str
    ended: str
    purged: str
    completed: str
    failed: str
    canceled_intent: str
    canceled_engine: str
    intent_completed: str
    running: str
    parent: str
    child: str
    suspended: str
    continuation: str
    ended_parent: str
    stop: str
    stop_child: str
    purged_run: str
    one_shot: str
    one_shot_parent: str
    one_shot_child: str
    waiting: str
    moved: str
    digested: str
    synchronous: str
    runs: int
    records: int


def _finish(store: SqlStore, run: RunStart, status: RunStatus, reason: str = "") -> None:
    store.record_run_terminal(run.run_id, status, terminal_record(run, status, reason=reason))


def build_world(store: SqlStore) -> World:
    active = new_session(store).id
    completed = start_root(store, active, labels={"site": "one"}).run
    store.append_run_record(record(completed))
    store.append_run_record(record(completed))
    _finish(store, completed, RunStatus.COMPLETED)
    failed = start_root(store, active).run
    _finish(store, failed, RunStatus.FAILED)
    canceled_intent = start_root(store, active).run
    store.record_run_cancellation(
        canceled_intent.run_id, "user_requested", cancellation_record(canceled_intent)
    )
    _finish(store, canceled_intent, RunStatus.CANCELED, "user_requested")
    canceled_engine = start_root(store, active).run
    _finish(store, canceled_engine, RunStatus.CANCELED)
    intent_completed = start_root(store, active).run
    store.record_run_cancellation(
        intent_completed.run_id, "budget", cancellation_record(intent_completed, "budget")
    )
    _finish(store, intent_completed, RunStatus.COMPLETED)
    running = start_root(store, active).run
    store.append_run_record(record(running))

    parent = start_root(store, active).run
    child = run_start(session_id=active, parent_run_id=parent.run_id)
    store.start_child_run(
        child, link_record(parent, child), started_record(child), canceled_record(child)
    )
    store.append_run_record(record(child))
    _finish(store, child, RunStatus.COMPLETED)

    suspended = start_root(store, active).run
    waiting = run_start(session_id=active, parent_run_id=suspended.run_id, agent_id="agent-w")
    store.start_child_run(
        waiting, link_record(suspended, waiting), started_record(waiting), canceled_record(waiting)
    )
    store.record_run_suspension(waiting.run_id, checkpoint(), suspended_record(waiting))
    store.record_run_suspension(suspended.run_id, checkpoint(), suspended_record(suspended))
    continuation = start_root(store, active, predecessor_run_id=suspended.run_id).run
    # 12.4: the waiting child continues under its parent's continuation.
    moved = run_start(
        session_id=active,
        parent_run_id=continuation.run_id,
        agent_id="agent-w",
        predecessor_run_id=waiting.run_id,
    )
    store.start_child_run(
        moved, link_record(continuation, moved), started_record(moved), canceled_record(moved)
    )

    ended = new_session(store).id
    ended_parent = start_root(store, ended).run
    store.end_session(ended, at(100))
    stopped = start_root(store, ended)
    assert stopped.result.outcome is RunStartOutcome.STOP
    stop_child = run_start(session_id=ended, parent_run_id=ended_parent.run_id)
    child_result = store.start_child_run(
        stop_child,
        link_record(ended_parent, stop_child),
        started_record(stop_child),
        canceled_record(stop_child),
    )
    assert child_result.outcome is RunStartOutcome.STOP

    purged = new_session(store).id
    purged_run = start_root(store, purged).run
    store.append_run_record(record(purged_run))
    _finish(store, purged_run, RunStatus.COMPLETED)
    store.end_session(purged, at(200))
    store.purge_session(purged)

    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    store.append_run_record(record(one_shot))
    store.append_run_record(record(one_shot))
    one_shot_parent = run_start()
    store.start_one_shot_run(one_shot_parent, started_record(one_shot_parent))
    one_shot_child = run_start(parent_run_id=one_shot_parent.run_id)
    store.start_one_shot_child_run(
        one_shot_child,
        link_record(one_shot_parent, one_shot_child),
        started_record(one_shot_child),
    )
    _finish(store, one_shot_child, RunStatus.COMPLETED)
    digested = run_start()
    store.start_one_shot_run(digested, started_record(digested), request_digest=DIGEST)
    synchronous = run_start()
    store.start_synchronous_run(synchronous, started_record(synchronous))

    return World(
        active=active,
        ended=ended,
        purged=purged,
        completed=completed.run_id,
        failed=failed.run_id,
        canceled_intent=canceled_intent.run_id,
        canceled_engine=canceled_engine.run_id,
        intent_completed=intent_completed.run_id,
        running=running.run_id,
        parent=parent.run_id,
        child=child.run_id,
        suspended=suspended.run_id,
        continuation=continuation.run_id,
        ended_parent=ended_parent.run_id,
        stop=stopped.run.run_id,
        stop_child=stop_child.run_id,
        purged_run=purged_run.run_id,
        one_shot=one_shot.run_id,
        one_shot_parent=one_shot_parent.run_id,
        one_shot_child=one_shot_child.run_id,
        waiting=waiting.run_id,
        moved=moved.run_id,
        digested=digested.run_id,
        synchronous=synchronous.run_id,
        # Live runs (the purged one is gone) and their records, in the order built above.
        runs=20,
        records=4 + 2 + 3 + 2 + 3 + 2 + 2 + 3 + 2 + 1 + 2 + 2 + 2 + 3 + 2 + 2 + 2 + 1 + 1 + 1 + 2,
    )


Dump = dict[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def world_dumps() -> dict[str, tuple[World, Dump]]:
    """Per backend: the world built once through ``SqlStore``, and every row it wrote."""
    return {}


@pytest.fixture
def world(engine: Engine, world_dumps: dict[str, tuple[World, Dump]]) -> World:
    """The world in the (wiped) database: built by the store once per backend, then
    copied back row for row, which keeps the many corruption tests fast."""
    backend = engine.dialect.name
    if backend not in world_dumps:
        built = build_world(SqlStore(engine))
        with engine.connect() as conn:
            rows = {
                table.name: [dict(row._mapping) for row in conn.execute(sa.select(table))]
                for table in metadata.sorted_tables
            }
        world_dumps[backend] = (built, rows)
        return built
    built, rows = world_dumps[backend]
    with engine.begin() as conn:
        for table in metadata.sorted_tables:
            # ``wipe`` keeps the service's keys (configuration, not data).
            if rows[table.name] and table is not service_keys:
                conn.execute(table.insert(), rows[table.name])
    return built


def found(engine: Engine, page_size: int = 3) -> Found:
    report = v.verify_database(engine, page_size=page_size)
    return {(item.invariant, item.run_id, item.session_id) for item in report.violations}


def detail(engine: Engine, invariant: str) -> str:
    report = v.verify_database(engine, page_size=3)
    return " | ".join(item.detail for item in report.violations if item.invariant == invariant)


def execute(engine: Engine, sql: str, **params: Any) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(sql), params)


@contextmanager
def without_foreign_keys(engine: Engine) -> Iterator[Connection]:
    """A connection whose writes skip foreign-key checks, to leave dangling rows."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        # SQLite ignores this pragma inside a transaction: send it on the raw connection,
        # which the engine keeps in autocommit mode between transactions.
        raw: Any = conn.connection.driver_connection
        if sqlite:
            raw.execute("PRAGMA foreign_keys = OFF")
        else:
            conn.exec_driver_sql("SET session_replication_role = replica")
        try:
            yield conn
            conn.commit()
        finally:
            conn.rollback()
            if sqlite:
                raw.execute("PRAGMA foreign_keys = ON")
            else:
                conn.exec_driver_sql("SET session_replication_role = DEFAULT")
                conn.commit()


# --- clean data --------------------------------------------------------------------------


@pytest.mark.parametrize("page_size", [1, 3, 1000])
def test_every_kind_of_run_verifies_clean(engine: Engine, world: World, page_size: int) -> None:
    report = v.verify_database(engine, page_size=page_size)

    assert report.violations == []
    assert report.ok
    assert (report.runs_checked, report.sessions_checked) == (world.runs, 3)
    assert report.records_checked == world.records


def test_verify_leaves_the_engine_writable(engine: Engine, world: World) -> None:
    v.verify_database(engine)

    store = SqlStore(engine)
    store.append_run_record(record(run_start(run_id=world.one_shot)))
    assert found(engine) == set()


# --- one corruption per invariant --------------------------------------------------------


def test_run_started_not_first(engine: Engine, world: World) -> None:
    # Swap records 1 and 2 of a sessionless run: IDs stay 1..n, run_started moves to 2.
    execute(engine, "UPDATE run_records SET seq = seq + 100 WHERE run_id = :r", r=world.one_shot)
    execute(
        engine,
        "UPDATE run_records SET seq = CASE seq WHEN 101 THEN 2 WHEN 102 THEN 1 ELSE seq - 100 END "
        "WHERE run_id = :r",
        r=world.one_shot,
    )

    assert found(engine) == {(v.RUN_STARTED_FIRST, world.one_shot, "")}


def test_deleted_record_leaves_a_gap(engine: Engine, world: World) -> None:
    execute(engine, "DELETE FROM run_records WHERE run_id = :r AND seq = 2", r=world.one_shot)

    assert found(engine) == {(v.RECORD_IDS, world.one_shot, "")}
    assert "missing 2" in detail(engine, v.RECORD_IDS)


def test_renumbered_record_id(engine: Engine, world: World) -> None:
    execute(
        engine, "UPDATE run_records SET seq = 7 WHERE run_id = :r AND seq = 3", r=world.one_shot
    )

    assert found(engine) == {(v.RECORD_IDS, world.one_shot, "")}
    assert "missing 3" in detail(engine, v.RECORD_IDS)


def test_record_count_disagrees_with_records(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE runs SET record_count = 9 WHERE run_id = :r", r=world.failed)

    assert found(engine) == {(v.RECORD_IDS, world.failed, world.active)}


def test_session_position_moved_out_of_range(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE run_records SET session_seq = session_seq + 1000 WHERE run_id = :r AND seq = 2",
        r=world.completed,
    )

    assert found(engine) == {(v.SESSION_POSITIONS, "", world.active)}
    assert "beyond" in detail(engine, v.SESSION_POSITIONS)


def test_session_record_count_ahead_of_positions(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE sessions SET record_count = record_count + 2 WHERE session_id = :s",
        s=world.ended,
    )

    assert found(engine) == {(v.SESSION_POSITIONS, "", world.ended)}
    assert "missing" in detail(engine, v.SESSION_POSITIONS)


def test_duplicated_session_position(engine: Engine, world: World) -> None:
    # (session_id, session_seq) is unique, so the duplicate hides behind another session
    # column: positions are counted over the records of the session's runs.
    execute(
        engine,
        "UPDATE run_records SET session_id = :other, session_seq = 20 "
        "WHERE run_id = :r AND seq = 2",
        other=world.ended,
        r=world.completed,
    )

    assert found(engine) == {
        (v.SESSION_POSITIONS, "", world.active),
        (v.RECORD_OWNER, world.completed, world.active),
    }
    assert "duplicated 20" in detail(engine, v.SESSION_POSITIONS)


def test_sessionless_record_with_a_position(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE run_records SET session_seq = 999 WHERE run_id = :r", r=world.one_shot)

    assert found(engine) == {(v.POSITION_PRESENCE, world.one_shot, "")}


@pytest.mark.parametrize(
    ("run", "status"), [("completed", "failed"), ("failed", "running"), ("running", "completed")]
)
def test_flipped_status(engine: Engine, world: World, run: str, status: str) -> None:
    run_id: str = getattr(world, run)
    execute(engine, "UPDATE runs SET status = :s WHERE run_id = :r", s=status, r=run_id)

    assert found(engine) == {(v.TERMINAL_RECORD, run_id, world.active)}


def test_suspended_run_without_its_checkpoint(engine: Engine, world: World) -> None:
    execute(engine, "DELETE FROM checkpoints WHERE run_id = :r", r=world.suspended)

    assert found(engine) == {(v.SUSPENSION_CHECKPOINT, world.suspended, world.active)}


def test_checkpoint_on_a_running_run(engine: Engine, world: World) -> None:
    execute(
        engine,
        "INSERT INTO checkpoints (run_id, checkpoint_id, data) VALUES (:r, 'cp-x', :d)",
        r=world.running,
        d=b"x",
    )

    assert found(engine) == {(v.SUSPENSION_CHECKPOINT, world.running, world.active)}


def test_checkpoint_differs_from_the_suspension(engine: Engine, world: World) -> None:
    execute(
        engine, "UPDATE checkpoints SET checkpoint_id = 'cp-2' WHERE run_id = :r", r=world.suspended
    )

    assert found(engine) == {(v.SUSPENSION_CHECKPOINT, world.suspended, world.active)}


def test_stopped_start_with_another_reason(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE runs SET cancellation_reason = 'user_requested' WHERE run_id = :r",
        r=world.stop,
    )

    assert found(engine) == {(v.STOPPED_START, world.stop, world.ended)}


def test_stopped_start_with_an_extra_record(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE run_records SET type = 'planner_note' WHERE run_id = :r AND seq = 2",
        r=world.stop_child,
    )
    execute(engine, "UPDATE runs SET terminal_key = NULL WHERE run_id = :r", r=world.stop_child)

    assert (v.STOPPED_START, world.stop_child, world.ended) in found(engine)


def test_cancellation_reason_lost(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE runs SET cancellation_reason = '' WHERE run_id = :r",
        r=world.canceled_intent,
    )

    assert found(engine) == {(v.CANCELLATION_PROVENANCE, world.canceled_intent, world.active)}


def test_engine_cancellation_claims_a_user_reason(engine: Engine, world: World) -> None:
    payload = dumps(completed_payload(RunStatus.CANCELED, reason="user_requested"))
    execute(
        engine,
        "UPDATE run_records SET payload = :p WHERE run_id = :r AND type = 'run_completed'",
        p=payload,
        r=world.canceled_engine,
    )

    assert found(engine) == {(v.CANCELLATION_PROVENANCE, world.canceled_engine, world.active)}


def test_intent_disagrees_with_the_reason(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE runs SET cancellation_reason = 'other' WHERE run_id = :r",
        r=world.intent_completed,
    )

    assert found(engine) == {(v.CANCELLATION_PROVENANCE, world.intent_completed, world.active)}


def test_terminal_key_names_the_wrong_record(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE runs SET terminal_key = start_key WHERE run_id = :r", r=world.completed)

    assert found(engine) == {(v.LIFECYCLE_KEYS, world.completed, world.active)}


def test_parent_link_key_names_no_record(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE runs SET parent_link_key = 'gone' WHERE run_id = :r", r=world.child)

    assert found(engine) == {(v.LIFECYCLE_KEYS, world.child, world.active)}


def test_purge_that_left_its_runs(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE sessions SET status = 'purged' WHERE session_id = :s", s=world.ended)

    assert found(engine) == {
        (v.PURGED_SESSION, run_id, world.ended)
        for run_id in (world.ended_parent, world.stop, world.stop_child)
    }


def test_tombstone_of_a_live_session(engine: Engine, world: World) -> None:
    execute(
        engine,
        "INSERT INTO run_tombstones (run_id, session_id) VALUES ('ghost', :s)",
        s=world.active,
    )

    assert found(engine) == {(v.PURGED_SESSION, "ghost", world.active)}


def test_tombstoned_run_id_still_live(engine: Engine, world: World) -> None:
    execute(
        engine,
        "INSERT INTO run_tombstones (run_id, session_id) VALUES (:r, :s)",
        r=world.running,
        s=world.purged,
    )

    assert found(engine) == {(v.PURGED_SESSION, world.running, world.active)}


def test_record_moved_into_a_purged_session(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE run_records SET session_id = :s WHERE run_id = :r AND seq = 2",
        s=world.purged,
        r=world.one_shot,
    )

    assert found(engine) == {
        (v.RECORD_OWNER, world.one_shot, ""),
        (v.PURGED_SESSION, world.one_shot, world.purged),
    }


def test_deleted_child(engine: Engine, world: World) -> None:
    execute(engine, "DELETE FROM run_records WHERE run_id = :r", r=world.one_shot_child)
    execute(engine, "DELETE FROM runs WHERE run_id = :r", r=world.one_shot_child)

    assert found(engine) == {(v.CHILD_LINKS, world.one_shot_parent, "")}
    assert "does not exist" in detail(engine, v.CHILD_LINKS)


def test_child_forgets_its_link(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE runs SET parent_link_key = NULL WHERE run_id = :r", r=world.child)

    assert found(engine) == {(v.CHILD_LINKS, world.child, world.active)}


def test_link_names_another_child(engine: Engine, world: World) -> None:
    payload = dumps(
        {"ToolName": "search", "ToolCallID": "call-1", "ChildRunID": "x", "ChildAgentID": "a"}
    )
    execute(
        engine,
        "UPDATE run_records SET payload = :p WHERE run_id = :r AND type = 'child_run_linked'",
        p=payload,
        r=world.parent,
    )

    assert found(engine) == {(v.CHILD_LINKS, world.child, world.active)}


def test_record_of_another_agent(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE run_records SET agent_id = 'intruder' WHERE run_id = :r AND seq = 2",
        r=world.completed,
    )

    assert found(engine) == {(v.RECORD_OWNER, world.completed, world.active)}


def test_rows_without_a_run(engine: Engine, world: World) -> None:
    with without_foreign_keys(engine) as conn:
        conn.execute(sa.text("DELETE FROM runs WHERE run_id = :r"), {"r": world.one_shot})
        conn.execute(
            sa.text("INSERT INTO checkpoints (run_id, checkpoint_id, data) VALUES ('zz', 'c', :d)"),
            {"d": b"x"},
        )

    assert found(engine) == {(v.DANGLING_ROWS, world.one_shot, ""), (v.DANGLING_ROWS, "zz", "")}


# --- the command -------------------------------------------------------------------------


def test_cli_exit_codes_and_summary(engine: Engine, world: World) -> None:
    url = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()

    clean = runner.invoke(cli, ["db", "verify", "--database-url", url])
    assert clean.exit_code == 0, clean.output
    assert clean.output.strip().splitlines()[-1] == (
        f"checked {world.runs} runs, 3 sessions, {world.records} records: 0 violation(s)"
    )

    execute(engine, "DELETE FROM checkpoints WHERE run_id = :r", r=world.suspended)
    broken = runner.invoke(cli, ["db", "verify", "--database-url", url])
    assert broken.exit_code == 1, broken.output
    lines = broken.stdout.strip().splitlines()
    assert lines[0].startswith(
        f"{v.SUSPENSION_CHECKPOINT}\trun={world.suspended}\tsession={world.active}\t"
    )
    assert lines[-1].endswith(": 1 violation(s)")


def test_cli_without_a_database(tmp_path: Any) -> None:
    result = CliRunner().invoke(
        cli, ["db", "verify", "--database-url", f"sqlite:///{tmp_path}/none.db"]
    )

    assert result.exit_code == 2
    assert not (tmp_path / "none.db").exists()


def test_successor_that_does_not_exist(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE runs SET successor_run_id = 'ghost' WHERE run_id = :r",
        r=world.suspended,
    )

    # Both sides: the predecessor names no run, and its real continuation is forgotten.
    assert found(engine) == {
        (v.CONTINUATION_SUCCESSOR, world.suspended, world.active),
        (v.CONTINUATION_SUCCESSOR, world.continuation, world.active),
    }
    assert "does not exist" in detail(engine, v.CONTINUATION_SUCCESSOR)


def test_continuation_its_predecessor_forgot(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE runs SET successor_run_id = NULL WHERE run_id = :r", r=world.suspended)

    assert found(engine) == {(v.CONTINUATION_SUCCESSOR, world.continuation, world.active)}


def test_successor_on_a_run_that_is_not_its_predecessor(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE runs SET successor_run_id = :s WHERE run_id = :r",
        s=world.continuation,
        r=world.completed,
    )

    assert found(engine) == {(v.CONTINUATION_SUCCESSOR, world.completed, world.active)}
    assert "not suspended" in detail(engine, v.CONTINUATION_SUCCESSOR)


def test_run_labels_that_disagree_with_the_run(engine: Engine, world: World) -> None:
    execute(
        engine,
        "INSERT INTO run_labels (run_id, key, value, started_at_ms) "
        "VALUES (:r, '\"team\"', '\"x\"', 0)",
        r=world.completed,
    )

    assert found(engine) == {(v.RUN_LABELS, world.completed, world.active)}


def test_run_labels_without_a_run(engine: Engine, world: World) -> None:
    execute(
        engine,
        "INSERT INTO run_labels (run_id, key, value, started_at_ms) "
        "VALUES ('ghost-run', '\"k\"', '\"v\"', 0)",
    )

    assert found(engine) == {(v.RUN_LABELS, "ghost-run", "")}


# --- start kinds and request digests (12.1, 12.2), continuations under another parent -----


def test_request_digest_of_zeros(engine: Engine, world: World) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE runs SET request_digest = :d WHERE run_id = :r"),
            {"d": bytes(32), "r": world.digested},
        )

    assert found(engine) == {(v.START_FACTS, world.digested, "")}


def test_synchronous_run_with_a_request_digest(engine: Engine, world: World) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE runs SET request_digest = :d WHERE run_id = :r"),
            {"d": DIGEST, "r": world.synchronous},
        )

    assert found(engine) == {(v.START_FACTS, world.synchronous, "")}


def test_synchronous_run_with_a_parent(engine: Engine, world: World) -> None:
    execute(
        engine,
        "UPDATE runs SET start_kind = 'synchronous' WHERE run_id = :r",
        r=world.one_shot_child,
    )

    assert found(engine) == {(v.START_FACTS, world.one_shot_child, "")}
    assert "parent" in detail(engine, v.START_FACTS)


def test_synchronous_run_with_a_session(engine: Engine, world: World) -> None:
    execute(engine, "UPDATE runs SET start_kind = 'synchronous' WHERE run_id = :r", r=world.running)

    assert found(engine) == {(v.START_FACTS, world.running, world.active)}


def test_continuation_under_another_parent_with_another_tool_call(
    engine: Engine, world: World
) -> None:
    with engine.begin() as conn:
        key = conn.execute(
            sa.text("SELECT parent_run_id, parent_link_key FROM runs WHERE run_id = :r"),
            {"r": world.moved},
        ).one()
        payload = dumps(
            {
                "ToolName": "search",
                "ToolCallID": "call-other",
                "ChildRunID": world.moved,
                "ChildAgentID": "agent-w",
            }
        )
        conn.execute(
            sa.text("UPDATE run_records SET payload = :p WHERE run_id = :r AND event_key = :k"),
            {"p": payload, "r": key.parent_run_id, "k": key.parent_link_key},
        )

    assert found(engine) == {(v.CONTINUATION_SUCCESSOR, world.moved, world.active)}
    assert "call-other" in detail(engine, v.CONTINUATION_SUCCESSOR)
