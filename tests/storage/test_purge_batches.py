"""A purge is one short transaction, then batches: its records go a batch per transaction.

The first transaction makes the session and its runs unusable (``session_purged``);
records and checkpoints are then deleted at most ``purge_batch`` per transaction, so a
large purge never holds SQLite's write lock, or many row locks, for long.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.sessions import purge
from app.storage.verify import verify_database
from runtime_store_client import MemoryEvent, RunStatus, SessionPurgedError
from tests.contract.builders import (
    at,
    checkpoint,
    new_session,
    record,
    start_root,
    suspended_record,
    terminal_record,
)

BATCH = 7


@dataclass(frozen=True)
class Fixture:
    session_id: str
    run_ids: list[str]
    records: int


def _ended_session(store: SqlStore) -> Fixture:
    """An ended session: one run of 20 records, four of 3, one suspended (a checkpoint)."""
    session_id = new_session(store).id
    run_ids, total = [], 0
    for appended in (19, 2, 2, 2, 2):
        run = start_root(store, session_id).run
        for n in range(appended):
            store.append_run_record(record(run, event_key=f"e{n}"))
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
        run_ids.append(run.run_id)
        total += appended + 2
    suspended = start_root(store, session_id).run
    store.record_run_suspension(suspended.run_id, checkpoint(), suspended_record(suspended))
    run_ids.append(suspended.run_id)
    total += 2
    store.end_session(session_id, at(500))
    return Fixture(session_id, run_ids, total)


def _left(engine: Engine, fixture: Fixture) -> tuple[int, int]:
    """Records and checkpoints of the fixture's runs still stored."""
    with engine.connect() as conn:
        records = conn.execute(
            sa.text("SELECT count(*) FROM run_records WHERE run_id IN :ids").bindparams(
                sa.bindparam("ids", expanding=True)
            ),
            {"ids": fixture.run_ids},
        ).scalar_one()
        checkpoints = conn.execute(
            sa.text("SELECT count(*) FROM checkpoints WHERE run_id IN :ids").bindparams(
                sa.bindparam("ids", expanding=True)
            ),
            {"ids": fixture.run_ids},
        ).scalar_one()
    return records, checkpoints


@contextmanager
def _record_deletes(engine: Engine) -> Iterator[list[int]]:
    """Rows deleted from ``run_records`` by each statement that deleted from it."""
    counts: list[int] = []

    def after(_conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("DELETE FROM RUN_RECORDS"):
            counts.append(cursor.rowcount)

    sa.event.listen(engine, "after_cursor_execute", after)
    try:
        yield counts
    finally:
        sa.event.remove(engine, "after_cursor_execute", after)


@contextmanager
def _commits(engine: Engine) -> Iterator[list[int]]:
    commits: list[int] = []

    def commit(_conn: Any) -> None:
        commits.append(1)

    sa.event.listen(engine, "commit", commit)
    try:
        yield commits
    finally:
        sa.event.remove(engine, "commit", commit)


def test_purge_deletes_records_a_batch_per_transaction(engine: Engine) -> None:
    store = SqlStore(engine, purge_batch=BATCH)
    fixture = _ended_session(store)
    assert _left(engine, fixture) == (fixture.records, 1)

    with _record_deletes(engine) as deleted, _commits(engine) as commits:
        store.purge_session(fixture.session_id)

    assert _left(engine, fixture) == (0, 0)
    assert sum(deleted) == fixture.records
    assert all(0 < count <= BATCH for count in deleted), deleted
    # The 21-record run alone takes three batches; the small runs share theirs.
    assert len(deleted) >= fixture.records // BATCH
    # One transaction marks the purge, one per record batch, one for the checkpoints
    # (and one read of what is left to delete).
    assert len(commits) >= 1 + len(deleted) + 1
    assert verify_database(engine).ok


def _memory_left(engine: Engine, run_ids: list[str]) -> tuple[int, int]:
    """Memory events and accepted memory batches of these runs still stored."""
    with engine.connect() as conn:
        return tuple(
            conn.execute(
                sa.text(f"SELECT count(*) FROM {table} WHERE run_id IN :ids").bindparams(
                    sa.bindparam("ids", expanding=True)
                ),
                {"ids": run_ids},
            ).scalar_one()
            for table in ("memory_events", "memory_batches")
        )


def test_purge_deletes_the_memory_of_its_runs_in_batches(engine: Engine) -> None:
    store = SqlStore(engine, purge_batch=BATCH)
    fixture = _ended_session(store)
    outside = "run-outside-the-session"
    events = [MemoryEvent(type="planner_note", timestamp=at(n), data={"n": n}) for n in range(1, 9)]
    for n, run_id in enumerate([*fixture.run_ids, outside]):
        for agent in ("agent-1", "agent-2"):
            store.append_memory_events(agent, run_id, events, idempotency_key=f"k{n}")
    memory = 2 * len(events) * len(fixture.run_ids)
    assert _memory_left(engine, fixture.run_ids) == (memory, 2 * len(fixture.run_ids))

    store.purge_session(fixture.session_id)

    assert _memory_left(engine, fixture.run_ids) == (0, 0)
    assert _memory_left(engine, [outside]) == (2 * len(events), 2)
    assert verify_database(engine).ok


def test_a_purge_cut_short_is_finished_by_the_next_purge(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore(engine, purge_batch=BATCH)
    fixture = _ended_session(store)
    # The process dies right after the purge's first transaction.
    monkeypatch.setattr(purge, "_delete_purged_rows", lambda _ctx, _session_id: None)
    store.purge_session(fixture.session_id)

    assert _left(engine, fixture) == (fixture.records, 1)
    # Nothing of it can be reached: the rows left are a purge still to finish, not data.
    with pytest.raises(SessionPurgedError):
        store.list_run_records(fixture.run_ids[0])
    with pytest.raises(SessionPurgedError):
        store.list_session_run_records(fixture.session_id)
    with pytest.raises(SessionPurgedError):
        store.load_run_suspension(fixture.run_ids[-1])
    report = verify_database(engine)
    assert report.ok, report.violations
    assert (report.purge_pending_records, report.purge_pending_checkpoints) == (
        fixture.records,
        1,
    )
    assert "not yet deleted" in report.summary()

    monkeypatch.undo()
    store.purge_session(fixture.session_id)  # a retry: the session is purged already

    assert _left(engine, fixture) == (0, 0)
    report = verify_database(engine)
    assert report.ok, report.violations
    assert (report.purge_pending_records, report.purge_pending_checkpoints) == (0, 0)


def test_orphan_records_of_a_run_that_was_never_tombstoned_are_still_dangling(
    engine: Engine,
) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO run_records (run_id, seq, event_key, agent_id, turn_id, type, "
                "payload, timestamp_ms) VALUES ('nobody', 1, 'k', 'a', '', 'note', :p, 0)"
            ),
            {"p": b"{}"},
        )
    report = verify_database(engine)
    assert [(v.invariant, v.run_id) for v in report.violations] == [("dangling_rows", "nobody")]
    assert report.purge_pending_records == 0
