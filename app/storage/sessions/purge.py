"""Purge (CONTRACT.md 3.1): an ended session's runs, records, checkpoints and memory gone,
its IDs reserved forever.

The first transaction is the purge as callers see it: it checks the session, marks it
purged, moves its runs to tombstones and deletes its seeds' operations and attempts (15.7;
the run IDs they bound join the tombstones), so from its commit on every operation naming
the session, one of its runs or one of its seeds' run IDs (memory included) answers
``session_purged`` and nothing of it can be read. The runs' records, checkpoints and
memory (whichever agent wrote it) and the seeds' records, unreachable from then on, are
deleted afterwards in batches of short transactions, so the purge never holds the write
lock (SQLite) for long. A purge cut short after its first transaction is finished by the
next purge of the session (every retry).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

import sqlalchemy as sa

from app.domain import validation as v
from app.domain.state import SessionRowStatus
from app.storage.database.tables import (
    checkpoints,
    memory_batches,
    memory_events,
    run_labels,
    run_records,
    run_tombstones,
    runs,
    seed_attempts,
    seed_operations,
    sessions,
)
from app.storage.operation import Context
from app.storage.sessions.administration import not_found
from app.storage.sessions.deletion import delete_seed_records, execute, record_deletes, timed
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    RunStatus,
    SessionActiveError,
    SessionHasActiveRunsError,
    SessionNotFoundError,
    WebhookEventType,
)

#: The tombstoned runs of a session with their highest record ID (``None``: no records
#: left); record IDs run 1..n, so that is also how many records each still holds.
_PURGED_RUN_SIZES: Final = sa.select(
    run_tombstones.c.run_id,
    sa.select(sa.func.max(run_records.c.seq))
    .where(run_records.c.run_id == run_tombstones.c.run_id)
    .scalar_subquery(),
).where(run_tombstones.c.session_id == sa.bindparam("session_id"))


def _purged_runs() -> sa.Select[tuple[str]]:
    return sa.select(run_tombstones.c.run_id).where(
        run_tombstones.c.session_id == sa.bindparam("session_id")
    )


#: At most ``batch`` memory events of the session's tombstoned runs (index on run_id, id).
_DELETE_MEMORY_EVENTS: Final = memory_events.delete().where(
    memory_events.c.id.in_(
        sa.select(memory_events.c.id)
        .where(memory_events.c.run_id.in_(_purged_runs()))
        .limit(sa.bindparam("batch"))
        .scalar_subquery()
    )
)
_DELETE_MEMORY_BATCHES: Final = memory_batches.delete().where(
    memory_batches.c.run_id.in_(_purged_runs())
)


def purge_session(ctx: Context, session_id: str) -> None:
    """Delete an ended session with everything it holds; its IDs stay reserved."""
    tombstone_session(ctx, session_id)
    _delete_purged_rows(ctx, session_id)


def tombstone_session(
    ctx: Context, session_id: str, *, expected_records: int | None = None
) -> bool:
    """The purge's first transaction alone: from its commit the session and its runs are
    unreachable; their rows wait for a batched deletion (retention deletes those of many
    sessions together). With ``expected_records`` nothing happens and the answer is
    ``False`` when the session holds another number of records by now (retention checks
    the archive it has just written)."""
    v.require_id(session_id, "session_id")
    done: bool = ctx.uow.write(lambda tx: _tombstone(tx, session_id, expected_records))
    return done


def tombstone_sessions(ctx: Context, sessions: Sequence[tuple[str, int]]) -> list[str]:
    """``tombstone_session`` for several sessions (with the records each must hold) in
    one transaction: each passes or fails its own checks, and no check writes before it
    passes, so a session refused leaves the others' purges intact. The IDs tombstoned."""

    def operation(tx: Tx) -> list[str]:
        done = []
        for session_id, records in sessions:
            try:
                if _tombstone(tx, session_id, records):
                    done.append(session_id)
            except (SessionActiveError, SessionHasActiveRunsError, SessionNotFoundError):
                continue
        return done

    return ctx.uow.write(operation)


def _tombstone(tx: Tx, session_id: str, expected_records: int | None = None) -> bool:
    session = tx.session(session_id, lock=True)
    if session is None:
        raise not_found(session_id)
    if session.purged:
        return True
    if expected_records is not None and session.record_count != expected_records:
        return False
    if session.status is SessionRowStatus.ACTIVE:
        raise SessionActiveError(
            f"session {session_id!r} is active; end it first", session_id=session_id
        )
    running = tx.conn.execute(
        sa.select(runs.c.run_id)
        .where(runs.c.session_id == session_id, runs.c.status == RunStatus.RUNNING.value)
        .limit(1)
    ).first()
    if running is not None:
        raise SessionHasActiveRunsError(
            f"run {running.run_id!r} of session {session_id!r} is still running",
            session_id=session_id,
            run_id=running.run_id,
        )
    tx.conn.execute(
        run_tombstones.insert().from_select(
            ["run_id", "session_id"],
            sa.select(runs.c.run_id, runs.c.session_id).where(runs.c.session_id == session_id),
        )
    )
    tx.conn.execute(
        run_labels.delete().where(
            run_labels.c.run_id.in_(sa.select(runs.c.run_id).where(runs.c.session_id == session_id))
        )
    )
    tx.conn.execute(runs.delete().where(runs.c.session_id == session_id))
    _tombstone_seeds(tx, session_id)
    tx.conn.execute(
        sessions.update()
        .where(sessions.c.session_id == session_id)
        .values(status=SessionRowStatus.PURGED.value, purged_at_ms=tx.now_ms)
    )
    tx.purged.add(session_id)
    tx.add_event(WebhookEventType.SESSION_PURGED, session_id=session_id)
    return True


def _tombstone_seeds(tx: Tx, session_id: str) -> None:
    """The session's seed operations and all their attempts (open, published, abandoned,
    tombstones) go; the run IDs they bound stay reserved like purged runs, by a tombstone
    naming the session (15.7). A seed-bound run ID whose run existed was tombstoned with
    the runs. Their records, unreachable now, go in batches (``_delete_purged_rows``)."""
    ops = seed_operations.c
    tx.conn.execute(
        run_tombstones.insert().from_select(
            ["run_id", "session_id"],
            sa.select(ops.run_id, ops.session_id).where(
                ops.session_id == session_id,
                ~sa.exists().where(run_tombstones.c.run_id == ops.run_id),
                ~sa.exists().where(runs.c.run_id == ops.run_id),
            ),
        )
    )
    seeded = sa.select(ops.run_id).where(ops.session_id == session_id)
    tx.conn.execute(seed_attempts.delete().where(seed_attempts.c.run_id.in_(seeded)))
    tx.conn.execute(seed_operations.delete().where(ops.session_id == session_id))


def _batches(sizes: list[tuple[str, int | None]], session_id: str, batch: int) -> list[sa.Delete]:
    """The record deletes (``deletion.record_deletes``), then the checkpoints."""
    known = [(run_id, top) for run_id, top in sizes if top is not None]
    return [
        *record_deletes(known, batch),
        checkpoints.delete().where(
            checkpoints.c.run_id.in_(
                sa.select(run_tombstones.c.run_id).where(run_tombstones.c.session_id == session_id)
            )
        ),
    ]


def _delete_purged_memory(ctx: Context, session_id: str) -> None:
    """Memory events in batches until none is left, then the accepted-batch keys."""
    params: dict[str, object] = {"session_id": session_id, "batch": ctx.purge_batch}
    while True:
        deleted = timed(ctx, functools.partial(execute, _DELETE_MEMORY_EVENTS, params=params))
        if deleted < ctx.purge_batch:
            break
    ctx.uow.write(functools.partial(execute, _DELETE_MEMORY_BATCHES, params=params))


def _delete_purged_rows(ctx: Context, session_id: str) -> None:
    """Delete the records, checkpoints, seed records and memory of the session's
    tombstoned run IDs, in batches."""
    sizes = ctx.uow.read(
        lambda tx: [
            (row[0], row[1])
            for row in tx.conn.execute(_PURGED_RUN_SIZES, {"session_id": session_id})
        ]
    )
    for statement in _batches(sizes, session_id, ctx.purge_batch):
        timed(ctx, functools.partial(execute, statement))
    delete_seed_records(ctx, _purged_runs(), {"session_id": session_id})
    _delete_purged_memory(ctx, session_id)
