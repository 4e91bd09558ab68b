"""Deleting what a purge or a retention sweep left unreachable, in short transactions.

Rows of tombstoned runs go in transactions of at most ``purge_batch`` records each
(``record_deletes``: whole small runs together, large runs by ranges of record IDs, so no
batch rescans what an earlier one deleted), each followed by the dialect's pause so a
waiting writer gets in between (``timed``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from typing import Any, Final, TypeVar

import sqlalchemy as sa

from app.observability import metrics
from app.storage.database.tables import (
    checkpoints,
    memory_batches,
    memory_events,
    run_records,
    seed_records,
)
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx

T = TypeVar("T")

#: Run IDs per statement of the non-record deletes.
PAGE: Final = 500
#: Seed records deleted per transaction, at most (and never more than ``purge_batch``).
SEED_BATCH: Final = 256


def record_deletes(sizes: Iterable[tuple[str, int]], batch: int) -> list[sa.Delete]:
    """Deletes of the records of runs (each with its highest record ID), at most ``batch``
    records each."""
    deletes: list[sa.Delete] = []
    small: list[str] = []
    small_records = 0
    for run_id, top in sizes:
        if top >= batch:
            deletes.extend(
                run_records.delete().where(
                    run_records.c.run_id == run_id,
                    run_records.c.seq > low,
                    run_records.c.seq <= low + batch,
                )
                for low in range(0, top, batch)
            )
            continue
        if small_records + top > batch:
            deletes.append(run_records.delete().where(run_records.c.run_id.in_(small)))
            small, small_records = [], 0
        small.append(run_id)
        small_records += top
    if small:
        deletes.append(run_records.delete().where(run_records.c.run_id.in_(small)))
    return deletes


def execute(statement: sa.Delete, tx: Tx, params: dict[str, object] | None = None) -> int:
    """Run one delete; counted by table (``rows_purged``)."""
    deleted: int = tx.conn.execute(statement, params or {}).rowcount
    metrics.rows_purged(getattr(statement.table, "name", "other"), deleted)
    return deleted


def timed(ctx: Context, operation: Callable[[Tx], T]) -> T:
    """One write transaction, then the dialect's pause (SQLite: as long as it took)."""
    started = time.perf_counter()
    result = ctx.uow.write(operation)
    ctx.uow.dialect.pause_between_batches(time.perf_counter() - started)
    return result


def delete_run_rows(ctx: Context, sizes: list[tuple[str, int]]) -> None:
    """The records, checkpoints and memory of tombstoned runs (with their highest record
    IDs), in transactions of at most ``purge_batch`` records each."""
    batch = ctx.purge_batch
    for statement in record_deletes(sizes, batch):
        timed(ctx, functools.partial(execute, statement))
    ids = [run_id for run_id, _ in sizes]
    for start in range(0, len(ids), PAGE):
        chunk = ids[start : start + PAGE]
        while timed(ctx, functools.partial(_delete_the_rest, run_ids=chunk, batch=batch)):
            pass
        delete_seed_records(ctx, chunk)


def _delete_the_rest(tx: Tx, run_ids: list[str], batch: int) -> bool:
    """Checkpoints, accepted memory appends and up to ``batch`` memory events of the runs;
    whether memory events may remain."""
    tx.conn.execute(checkpoints.delete().where(checkpoints.c.run_id.in_(run_ids)))
    tx.conn.execute(memory_batches.delete().where(memory_batches.c.run_id.in_(run_ids)))
    events = memory_events.delete().where(
        memory_events.c.id.in_(
            sa.select(memory_events.c.id)
            .where(memory_events.c.run_id.in_(run_ids))
            .limit(batch)
            .scalar_subquery()
        )
    )
    deleted: int = tx.conn.execute(events).rowcount
    return deleted >= batch


def _seed_record_batch(
    tx: Tx, run_ids: sa.Select[tuple[str]] | list[str], params: dict[str, Any], batch: int
) -> int:
    sr = seed_records.c
    doomed = sa.select(sr.run_id, sr.attempt_id, sr.id).where(sr.run_id.in_(run_ids)).limit(batch)
    statement = seed_records.delete().where(sa.tuple_(sr.run_id, sr.attempt_id, sr.id).in_(doomed))
    return execute(statement, tx, params)


def delete_seed_records(
    ctx: Context,
    run_ids: sa.Select[tuple[str]] | list[str],
    params: dict[str, Any] | None = None,
) -> None:
    """The seed records of the run IDs (a list, or a query of them with its ``params``),
    whose seed operations and attempts are gone, in batches until none is left."""
    batch = max(1, min(ctx.purge_batch, SEED_BATCH))
    call = functools.partial(_seed_record_batch, run_ids=run_ids, params=params or {}, batch=batch)
    while timed(ctx, call) >= batch:
        pass
