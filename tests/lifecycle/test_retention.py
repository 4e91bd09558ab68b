"""Retention (CONTRACT.md 11.4): ended sessions older than their age are purged as by
``purge_session`` (unless a run still runs), terminal sessionless runs older than theirs
are deleted with their records and their IDs stay reserved; a dry run changes nothing; an
archive holds each session's export first; one sweeper at a time."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.retention import RetentionPolicy
from app.domain.times import now_millis
from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.database.tables import run_tombstones
from app.storage.retention import archive_path
from app.storage.verify import PURGED_SESSION, verify_database
from runtime_store_client import (
    MemoryEvent,
    RunStatus,
    SessionPurgedError,
    SessionStatus,
    StoreError,
)
from tests.contract.builders import (
    T0,
    at,
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
from tests.lifecycle.test_refusals import rows
from tests.lifecycle.world import exported

DAY_MS = 86_400_000
#: Sessions ended at ``at(…)`` (T0, 2026-11-30) are older than this on any later day.
SESSIONS = RetentionPolicy(ended_sessions=timedelta(hours=1))
RUNS = RetentionPolicy(sessionless_runs=timedelta(days=1))


def ended_session(store: SqlStore, *, ended_at_ms: int = 100, records: int = 2) -> str:
    """An ended session with one completed run of ``records`` records."""
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    for _ in range(records - 2):
        store.append_run_record(record(run))
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(session_id, at(ended_at_ms))
    return session_id


def status(store: SqlStore, session_id: str) -> SessionStatus | str:
    try:
        return store.load_session_status(session_id)
    except StoreError as exc:
        return exc.code


def test_a_dry_run_counts_and_changes_nothing(engine: Engine) -> None:
    store = SqlStore(engine)
    for _ in range(2):
        ended_session(store, records=3)
    before = rows(engine)

    plan = store.retention_sweep(SESSIONS, dry_run=True)

    assert (plan.sessions, plan.session_records) == (2, 6)
    assert rows(engine) == before


def test_ended_sessions_older_than_their_age_are_purged_and_younger_ones_kept(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    old = ended_session(store)
    young = ended_session(store, ended_at_ms=now_millis() - int(T0.timestamp() * 1000))
    active = new_session(store).id

    done = store.retention_sweep(SESSIONS)

    assert (done.sessions, done.session_records) == (1, 2)
    assert status(store, old) == "session_purged"
    assert status(store, young) is SessionStatus.ENDED
    assert status(store, active) is SessionStatus.ACTIVE
    assert verify_database(engine).ok


def test_a_session_with_a_running_run_is_left_for_a_later_sweep(engine: Engine) -> None:
    store = SqlStore(engine)
    session_id = new_session(store).id
    start_root(store, session_id)
    store.end_session(session_id, at(1))

    done = store.retention_sweep(SESSIONS)

    assert (done.sessions, done.skipped_sessions) == (0, 1)
    assert status(store, session_id) is SessionStatus.ENDED


def test_each_session_is_archived_before_it_is_purged(engine: Engine, tmp_path: Path) -> None:
    store = SqlStore(engine)
    session_id = ended_session(store, records=4)
    export = exported(store, session_id)

    done = store.retention_sweep(
        RetentionPolicy(ended_sessions=timedelta(hours=1), archive_dir=tmp_path / "archive")
    )

    assert done.archived == 1
    assert archive_path(tmp_path / "archive", session_id).read_bytes() == export
    assert list((tmp_path / "archive").iterdir()) == [
        archive_path(tmp_path / "archive", session_id)
    ]
    assert status(store, session_id) == "session_purged"


def test_an_archive_file_name_holds_any_session_id(tmp_path: Path) -> None:
    assert archive_path(tmp_path, "a/b c").name == "a%2Fb%20c.ndjson"
    assert len(archive_path(tmp_path, "é" * 120).name) < 255


# --- sessionless runs --------------------------------------------------------------------


def one_shot_tree(store: SqlStore, *, finish_child: bool = True) -> tuple[str, str]:
    """A finished one-shot parent with a one-shot child, memory and a checkpoint."""
    parent = run_start()
    store.start_one_shot_run(parent, started_record(parent))
    child = run_start(parent_run_id=parent.run_id)
    store.start_one_shot_child_run(child, link_record(parent, child), started_record(child))
    store.append_run_record(record(parent))
    store.append_memory_events(
        "agent-1", parent.run_id, [MemoryEvent(type="user_message", timestamp=T0)]
    )
    store.record_run_suspension(parent.run_id, checkpoint(), suspended_record(parent))
    if finish_child:
        store.record_run_terminal(
            child.run_id, RunStatus.FAILED, terminal_record(child, RunStatus.FAILED)
        )
    return parent.run_id, child.run_id


def past(store_engine: Engine, days: int) -> SqlStore:
    """A store whose clock reads ``days`` days ago (the runs' ``updated_at``)."""
    return SqlStore(store_engine, clock=lambda: now_millis() - days * DAY_MS)


def test_terminal_sessionless_trees_older_than_their_age_are_deleted_ids_reserved(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    parent, child = one_shot_tree(past(engine, 3))
    young = one_shot_tree(store)

    done = store.retention_sweep(RUNS)

    assert (done.runs, done.run_records) == (2, 6)
    for run_id in (parent, child):
        with pytest.raises(SessionPurgedError):
            store.load_run(run_id)
        with pytest.raises(SessionPurgedError):
            store.list_run_records(run_id)
        with pytest.raises(SessionPurgedError):
            store.load_memory("agent-1", run_id)
    again = run_start(run_id=parent)
    with pytest.raises(SessionPurgedError):
        store.start_one_shot_run(again, started_record(again))
    assert store.load_run(young[0]).status is RunStatus.SUSPENDED
    left = rows(engine)
    assert (left["memory_events"], left["memory_batches"], left["checkpoints"]) == (1, 1, 1)
    report = verify_database(engine)
    assert report.ok, report.violations
    assert (report.purge_pending_records, report.purge_pending_checkpoints) == (0, 0)


def test_a_tree_with_a_running_run_is_kept_whole(engine: Engine) -> None:
    parent, child = one_shot_tree(past(engine, 3), finish_child=False)
    store = SqlStore(engine)

    done = store.retention_sweep(RUNS)

    assert done.runs == 0
    assert store.load_run(parent).status is RunStatus.SUSPENDED
    assert store.load_run(child).status is RunStatus.RUNNING


def test_rows_left_by_a_sweep_cut_short_go_with_the_next_sweep(engine: Engine) -> None:
    """A sweep stopped after its tombstones (``should_stop`` between batches is the same
    state as a crash) leaves unreachable rows; the next sweep deletes them."""
    from app.storage.retention.runs import tombstone_runs

    parent, child = one_shot_tree(past(engine, 3))
    store = SqlStore(engine)
    cutoff = RUNS.run_cutoff_ms(now_millis())
    assert cutoff is not None
    store._ctx.uow.write(lambda tx: tombstone_runs(tx, [parent, child], cutoff))
    assert verify_database(engine).purge_pending_records == 6

    store.retention_sweep(RUNS)

    report = verify_database(engine)
    assert report.ok, report.violations
    assert (report.purge_pending_records, report.purge_pending_checkpoints) == (0, 0)


def test_one_sweeper_at_a_time(engine: Engine) -> None:
    store, other = SqlStore(engine), SqlStore(engine)
    with store.retention_exclusive() as first, other.retention_exclusive() as second:
        assert first
        # PostgreSQL: an advisory lock; SQLite: one process serves the file anyway.
        assert bool(second) is (engine.dialect.name == "sqlite")
        assert first.still_held()
    with other.retention_exclusive() as after:
        assert after


def test_db_verify_knows_sessionless_tombstones(engine: Engine) -> None:
    """A tombstone without a session is retention's; a run it names must be gone."""
    one_shot_tree(past(engine, 3))
    store = SqlStore(engine)
    store.retention_sweep(RUNS)  # two sessionless tombstones: no finding
    young = one_shot_tree(store)[0]
    with engine.begin() as conn:
        conn.execute(sa.insert(run_tombstones).values(run_id=young, session_id=None))

    found = {(v.invariant, v.run_id): v.detail for v in verify_database(engine).violations}

    assert list(found) == [(PURGED_SESSION, young)]
    assert "retention" in found[(PURGED_SESSION, young)]


# --- memory of runs that do not exist ----------------------------------------------------

MEMORY = RetentionPolicy(orphan_memory=timedelta(days=1))


def remember(store: SqlStore, run_id: str, events: int = 2, agent_id: str = "agent-1") -> None:
    """``events`` memory events (timestamped T0, days ago) of ``run_id``, one append each."""
    for _ in range(events):
        store.append_memory_events(
            agent_id, run_id, [MemoryEvent(type="user_message", timestamp=T0)]
        )


def memory_of(store: SqlStore, run_id: str, agent_id: str = "agent-1") -> int:
    return len(store.load_memory(agent_id, run_id).events)


def test_memory_of_a_run_that_does_not_exist_goes_once_older_than_its_age(
    engine: Engine,
) -> None:
    old = past(engine, 3)
    remember(old, "ghost-old", events=3)
    remember(old, "ghost-old", events=1, agent_id="agent-2")
    remember(SqlStore(engine), "ghost-appended-now")  # old timestamps, a fresh append
    kept = run_start()
    old.start_one_shot_run(kept, started_record(kept))
    remember(old, kept.run_id)  # old, but its run exists
    store = SqlStore(engine)

    done = store.retention_sweep(MEMORY)

    assert (done.memory_runs, done.memory_events) == (2, 4)
    assert memory_of(store, "ghost-old") == memory_of(store, "ghost-old", "agent-2") == 0
    assert memory_of(store, "ghost-appended-now") == 2
    assert memory_of(store, kept.run_id) == 2
    left = rows(engine)
    assert (left["memory_events"], left["memory_batches"]) == (4, 4)
    assert "memory of 2 runs that do not exist (4 events)" in done.summary()


def test_memory_of_missing_runs_is_kept_while_its_age_is_unset(engine: Engine) -> None:
    remember(past(engine, 300), "ghost")
    store = SqlStore(engine)

    done = store.retention_sweep(RetentionPolicy(ended_sessions=timedelta(hours=1)))

    assert (done.memory_runs, done.memory_events) == (0, 0)
    assert memory_of(store, "ghost") == 2
    assert RetentionPolicy().keeps_everything
    assert not MEMORY.keeps_everything


def test_a_dry_run_counts_memory_of_missing_runs_and_changes_nothing(engine: Engine) -> None:
    remember(past(engine, 3), "ghost", events=3)
    store = SqlStore(engine)
    before = rows(engine)

    plan = store.retention_sweep(MEMORY, dry_run=True)

    assert (plan.memory_runs, plan.memory_events, plan.items) == (1, 3, 1)
    assert rows(engine) == before


def test_memory_of_missing_runs_goes_in_batches_and_across_pages(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More events than one transaction deletes, and more run IDs than one page reads."""
    from app.storage.retention import memory

    monkeypatch.setattr(memory, "PAGE", 2)
    old = past(engine, 3)
    for ghost in ("ghost-a", "ghost-b", "ghost-c"):
        remember(old, ghost, events=5)
    store = SqlStore(engine, purge_batch=2)

    done = store.retention_sweep(MEMORY)

    assert (done.memory_runs, done.memory_events) == (3, 15)
    left = rows(engine)
    assert (left["memory_events"], left["memory_batches"]) == (0, 0)


def test_retention_run_prints_and_deletes_memory_of_missing_runs(tmp_path: Path) -> None:
    from tests.lifecycle.test_cli import run_cli

    url = f"sqlite:///{tmp_path / 'memory.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        remember(past(engine, 3), "ghost", events=3)
        ages = {"RUNTIME_STORE_RETENTION_ORPHAN_MEMORY": "1d"}
        database = ("--database-url", url)

        dry = run_cli("retention", "run", "--dry-run", *database, env=ages)
        assert dry.returncode == 0, dry.stderr
        assert b"would delete the memory of 1 runs that do not exist (3 events)" in dry.stdout
        assert memory_of(SqlStore(engine), "ghost") == 3

        swept = run_cli("retention", "run", *database, env=ages)
        assert swept.returncode == 0, swept.stderr
        assert b"deleted the memory of 1 runs that do not exist (3 events)" in swept.stdout
        assert memory_of(SqlStore(engine), "ghost") == 0
    finally:
        engine.dispose()
