"""Retention of sessionless runs: whole one-shot trees, tombstoned, then their rows in
batches (CONTRACT.md 11.4); a run's seed goes with it, and a sessionless seed whose run
never started goes once its last seed write is older than the runs' age (15.7)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa

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
    seed_records,
)
from app.storage.operation import Context
from app.storage.retention.common import _TERMINAL, PAGE, Step, Sweep
from app.storage.sessions.deletion import delete_run_rows
from app.storage.unit_of_work.transactions import Tx

# --- sessionless runs --------------------------------------------------------------------


@dataclass(frozen=True)
class _Tree:
    """A one-shot root with its descendants: run IDs and their highest record IDs."""

    runs: tuple[tuple[str, int], ...]

    @property
    def records(self) -> int:
        return sum(count for _, count in self.runs)


def _old_roots(tx: Tx, cutoff_ms: int, status: str, after: tuple[int, str] | None) -> list[Any]:
    """A page of terminal sessionless roots of one status last changed before the cutoff,
    along the (session, status, started_at DESC, run_id) index."""
    query = sa.select(runs.c.run_id, runs.c.started_at_ms, runs.c.updated_at_ms).where(
        runs.c.session_id.is_(None), runs.c.status == status
    )
    if after is not None:
        query = query.where(
            sa.or_(
                runs.c.started_at_ms < after[0],
                sa.and_(runs.c.started_at_ms == after[0], runs.c.run_id > after[1]),
            )
        )
    query = query.where(runs.c.parent_run_id == "", runs.c.updated_at_ms < cutoff_ms)
    return list(
        tx.conn.execute(
            query.order_by(runs.c.started_at_ms.desc(), runs.c.run_id).limit(PAGE)
        ).all()
    )


def _tree(tx: Tx, root: str, cutoff_ms: int) -> _Tree | None:
    """The root's tree if every run of it is terminal and older than the cutoff."""
    found: list[tuple[str, int]] = []
    seen = {root}
    level = [root]
    while level:
        rows = tx.conn.execute(
            sa.select(
                runs.c.run_id,
                runs.c.parent_run_id,
                runs.c.status,
                runs.c.updated_at_ms,
                runs.c.record_count,
            ).where(sa.or_(runs.c.run_id.in_(level), runs.c.parent_run_id.in_(level)))
        ).all()
        children = []
        for row in rows:
            if row.run_id in level:
                if row.status not in _TERMINAL or row.updated_at_ms >= cutoff_ms:
                    return None
                found.append((row.run_id, row.record_count))
            elif row.run_id not in seen:
                seen.add(row.run_id)
                children.append(row.run_id)
        level = children
    return _Tree(tuple(found))


def _old_trees(ctx: Context, cutoff_ms: int) -> Iterator[_Tree]:
    for status in _TERMINAL:
        after: tuple[int, str] | None = None
        while True:
            roots = ctx.uow.read(
                functools.partial(_old_roots, cutoff_ms=cutoff_ms, status=status, after=after)
            )
            for root in roots:
                tree = ctx.uow.read(functools.partial(_tree, root=root.run_id, cutoff_ms=cutoff_ms))
                if tree is not None:
                    yield tree
            if len(roots) < PAGE:
                break
            after = (roots[-1].started_at_ms, roots[-1].run_id)


def tombstone_runs(tx: Tx, run_ids: list[str], cutoff_ms: int) -> list[str]:
    """Tombstone the runs still terminal and old (their rows locked first); their IDs."""
    rows = tx.conn.execute(
        sa.select(runs.c.run_id, runs.c.status, runs.c.updated_at_ms)
        .where(runs.c.run_id.in_(run_ids), runs.c.session_id.is_(None))
        .order_by(runs.c.run_id)
        .with_for_update()
    ).all()
    gone = [r.run_id for r in rows if r.status in _TERMINAL and r.updated_at_ms < cutoff_ms]
    if not gone:
        return []
    tx.conn.execute(
        run_tombstones.insert(), [{"run_id": run_id, "session_id": None} for run_id in gone]
    )
    tx.conn.execute(run_labels.delete().where(run_labels.c.run_id.in_(gone)))
    tx.conn.execute(runs.delete().where(runs.c.run_id.in_(gone)))
    _delete_seeds(tx, gone)
    return gone


def _delete_seeds(tx: Tx, run_ids: list[str]) -> None:
    """The seed operations of these run IDs and their attempts; their records, unreachable
    now, go in batches (``delete_run_rows``)."""
    tx.conn.execute(seed_attempts.delete().where(seed_attempts.c.run_id.in_(run_ids)))
    tx.conn.execute(seed_operations.delete().where(seed_operations.c.run_id.in_(run_ids)))


def _delete_group(
    ctx: Context, trees: list[_Tree], cutoff_ms: int, done: Sweep, step: Step
) -> None:
    sizes = dict(run for tree in trees for run in tree.runs)
    gone = ctx.uow.write(lambda tx: tombstone_runs(tx, sorted(sizes), cutoff_ms))
    delete_run_rows(ctx, [(run_id, sizes[run_id]) for run_id in gone])
    records = sum(sizes[run_id] for run_id in gone)
    done.runs += len(gone)
    done.run_records += records
    step.progress("run", len(gone), records)


def sweep_runs(ctx: Context, cutoff_ms: int, done: Sweep, step: Step) -> None:
    group: list[_Tree] = []
    for tree in _old_trees(ctx, cutoff_ms):
        if step.stopped():
            break
        if done.dry_run:
            done.runs += len(tree.runs)
            done.run_records += tree.records
            step.progress("run", len(tree.runs), tree.records)
            continue
        group.append(tree)
        if (
            sum(t.records for t in group) >= ctx.purge_batch
            or sum(len(t.runs) for t in group) >= PAGE
        ):
            _delete_group(ctx, group, cutoff_ms, done, step)
            group = []
    if group:
        _delete_group(ctx, group, cutoff_ms, done, step)


def leftovers(ctx: Context) -> None:
    """Rows of sessionless runs tombstoned by a sweep that was cut short: deleted now."""
    after = ""
    while True:
        ids = ctx.uow.read(functools.partial(_sessionless_tombstones, after=after))
        if not ids:
            return
        left = ctx.uow.read(functools.partial(_with_rows, ids=ids))
        if left:
            delete_run_rows(ctx, left)
        after = ids[-1]


def _sessionless_tombstones(tx: Tx, after: str) -> list[str]:
    return list(
        tx.conn.execute(
            sa.select(run_tombstones.c.run_id)
            .where(run_tombstones.c.session_id.is_(None), run_tombstones.c.run_id > after)
            .order_by(run_tombstones.c.run_id)
            .limit(PAGE)
        ).scalars()
    )


def _with_rows(tx: Tx, ids: list[str]) -> list[tuple[str, int]]:
    """The runs among ``ids`` that still hold rows, with their highest record ID."""
    top = dict(
        tx.conn.execute(
            sa.select(run_records.c.run_id, sa.func.max(run_records.c.seq))
            .where(run_records.c.run_id.in_(ids))
            .group_by(run_records.c.run_id)
        ).all()
    )
    for table in (checkpoints, memory_events, memory_batches, seed_records):
        for run_id in tx.conn.execute(
            sa.select(table.c.run_id).where(table.c.run_id.in_(ids)).distinct()
        ).scalars():
            top.setdefault(run_id, 0)
    return sorted(top.items())


# --- sessionless seeds whose run never started ----------------------------------------------

#: Seed operations tombstoned per transaction: each holds its run ID's lock meanwhile.
SEED_GROUP: Final = 100


def _old_seeds(tx: Tx, cutoff_ms: int, after: tuple[int, str] | None) -> list[Any]:
    """A page of sessionless seed operations whose run does not exist and whose last seed
    write is older than the cutoff, with their records, along the (session_id,
    updated_at_ms) index."""
    ops = seed_operations.c
    records = (
        sa.select(sa.func.count())
        .where(seed_records.c.run_id == ops.run_id)
        .scalar_subquery()
        .label("records")
    )
    query = sa.select(ops.run_id, ops.updated_at_ms, records).where(
        ops.session_id.is_(None),
        ops.updated_at_ms < cutoff_ms,
        ~sa.exists().where(runs.c.run_id == ops.run_id),
    )
    if after is not None:
        query = query.where(
            sa.or_(
                ops.updated_at_ms > after[0],
                sa.and_(ops.updated_at_ms == after[0], ops.run_id > after[1]),
            )
        )
    return list(tx.conn.execute(query.order_by(ops.updated_at_ms, ops.run_id).limit(PAGE)).all())


def tombstone_seeds(tx: Tx, run_ids: list[str], cutoff_ms: int) -> list[str]:
    """Under each run ID's lock (a start or seed write of it waits, or went first), the
    operations still sessionless, old and without a run: their run IDs reserved, their
    operations and attempts deleted. Their IDs."""
    for run_id in sorted(run_ids):
        tx.dialect.lock_run_id(tx.conn, run_id)
    ops = seed_operations.c
    gone = list(
        tx.conn.execute(
            sa.select(ops.run_id)
            .where(
                ops.run_id.in_(run_ids),
                ops.session_id.is_(None),
                ops.updated_at_ms < cutoff_ms,
                ~sa.exists().where(runs.c.run_id == ops.run_id),
                ~sa.exists().where(run_tombstones.c.run_id == ops.run_id),
            )
            .order_by(ops.run_id)
        ).scalars()
    )
    if not gone:
        return []
    tx.conn.execute(
        run_tombstones.insert(), [{"run_id": run_id, "session_id": None} for run_id in gone]
    )
    _delete_seeds(tx, gone)
    return gone


def _delete_seed_group(
    ctx: Context, group: dict[str, int], cutoff_ms: int, done: Sweep, step: Step
) -> None:
    gone = ctx.uow.write(lambda tx: tombstone_seeds(tx, sorted(group), cutoff_ms))
    delete_run_rows(ctx, [(run_id, 0) for run_id in gone])
    records = sum(group[run_id] for run_id in gone)
    done.seeds += len(gone)
    done.seed_records += records
    step.progress("seed", len(gone), records)


def sweep_seeds(ctx: Context, cutoff_ms: int, done: Sweep, step: Step) -> None:
    """Sessionless seed operations whose run never started, deleted with their attempts
    and records once their last seed write is older than the cutoff (15.7)."""
    after: tuple[int, str] | None = None
    while not step.stopped():
        page = ctx.uow.read(functools.partial(_old_seeds, cutoff_ms=cutoff_ms, after=after))
        if done.dry_run:
            done.seeds += len(page)
            done.seed_records += sum(row.records for row in page)
            if page:
                step.progress("seed", len(page), sum(row.records for row in page))
        else:
            for start in range(0, len(page), SEED_GROUP):
                if step.stopped():
                    return
                chunk = page[start : start + SEED_GROUP]
                group = {row.run_id: row.records for row in chunk}
                _delete_seed_group(ctx, group, cutoff_ms, done, step)
        if len(page) < PAGE:
            return
        after = (page[-1].updated_at_ms, page[-1].run_id)
