"""Retention of memory whose run does not exist (CONTRACT.md 11.4)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from app.storage.database.tables import memory_batches, memory_events, runs
from app.storage.operation import Context
from app.storage.retention.common import PAGE, Step, Sweep
from app.storage.sessions.deletion import timed
from app.storage.unit_of_work.transactions import Tx

# --- memory of runs that do not exist ----------------------------------------------------


def _memory_run_ids(tx: Tx, after: str) -> list[str]:
    """The next ``PAGE`` run IDs holding memory events, after ``after``: a loose index scan
    of ``memory_events (run_id, id)``, one probe per ID, however many events each holds."""
    e = memory_events.c

    def following(previous: Any) -> Any:
        return sa.select(sa.func.min(e.run_id)).where(e.run_id > previous).scalar_subquery()

    first = sa.select(following(sa.bindparam("after")).label("run_id"), sa.literal(1).label("n"))
    ids = first.cte("memory_run_ids", recursive=True)
    ids = ids.union_all(
        sa.select(following(ids.c.run_id), ids.c.n + 1).where(
            ids.c.run_id.is_not(None), ids.c.n < PAGE
        )
    )
    query = sa.select(ids.c.run_id).where(ids.c.run_id.is_not(None)).order_by(ids.c.run_id)
    return list(tx.conn.execute(query, {"after": after}).scalars())


@dataclass(frozen=True)
class _OrphanMemory:
    """An agent's memory of a run that does not exist, all of it older than the cutoff:
    the highest event row ID seen and the number of events."""

    agent_id: str
    run_id: str
    top_id: int
    events: int


def _orphan_memory(tx: Tx, run_ids: list[str], cutoff_ms: int) -> list[_OrphanMemory]:
    """The (agent, run) memories among ``run_ids`` whose run does not exist and whose
    newest event and newest append are older than the cutoff."""
    e = memory_events.c
    groups = tx.conn.execute(
        sa.select(
            e.agent_id,
            e.run_id,
            sa.func.max(e.id).label("top_id"),
            sa.func.count().label("events"),
            sa.func.max(e.timestamp_ms).label("newest"),
        )
        .where(e.run_id.in_(run_ids), ~sa.exists().where(runs.c.run_id == e.run_id))
        .group_by(e.agent_id, e.run_id)
    ).all()
    b = memory_batches.c
    appended = {
        (row.agent_id, row.run_id): row.newest
        for row in tx.conn.execute(
            sa.select(b.agent_id, b.run_id, sa.func.max(b.appended_at_ms).label("newest"))
            .where(b.run_id.in_(run_ids))
            .group_by(b.agent_id, b.run_id)
        )
    }
    old = []
    for row in groups:
        newest = max(row.newest, appended.get((row.agent_id, row.run_id), row.newest))
        if newest < cutoff_ms:
            old.append(_OrphanMemory(row.agent_id, row.run_id, row.top_id, row.events))
    return old


def _delete_orphan_memory(tx: Tx, memory: _OrphanMemory, cutoff_ms: int, batch: int) -> int:
    """Up to ``batch`` events of the memory (those seen, never a newer one), and its old
    appends once no event is left; nothing if its run exists now. Events deleted."""
    exists = tx.conn.execute(sa.select(runs.c.run_id).where(runs.c.run_id == memory.run_id)).first()
    if exists is not None:
        return 0
    e = memory_events.c
    mine = (e.agent_id == memory.agent_id, e.run_id == memory.run_id, e.id <= memory.top_id)
    deleted: int = tx.conn.execute(
        memory_events.delete().where(
            e.id.in_(sa.select(e.id).where(*mine).order_by(e.id).limit(batch).scalar_subquery())
        )
    ).rowcount
    if deleted < batch:
        b = memory_batches.c
        tx.conn.execute(
            memory_batches.delete().where(
                b.agent_id == memory.agent_id,
                b.run_id == memory.run_id,
                b.appended_at_ms < cutoff_ms,
            )
        )
    return deleted


def sweep_orphan_memory(ctx: Context, cutoff_ms: int, done: Sweep, step: Step) -> None:
    after = ""
    while not step.stopped():
        run_ids = ctx.uow.read(functools.partial(_memory_run_ids, after=after))
        if not run_ids:
            return
        found = ctx.uow.read(
            functools.partial(_orphan_memory, run_ids=run_ids, cutoff_ms=cutoff_ms)
        )
        for memory in found:
            if step.stopped():
                return
            events = memory.events
            if not done.dry_run:
                events = 0
                while True:
                    deleted = timed(
                        ctx,
                        functools.partial(
                            _delete_orphan_memory,
                            memory=memory,
                            cutoff_ms=cutoff_ms,
                            batch=ctx.purge_batch,
                        ),
                    )
                    events += deleted
                    if deleted < ctx.purge_batch:
                        break
                if not events:
                    continue  # its run was started meanwhile
            done.memory_runs += 1
            done.memory_events += events
            step.progress("memory", 1, events)
        after = run_ids[-1]
