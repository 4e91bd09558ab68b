"""Retention (CONTRACT.md 11.4): old ended sessions purged, old sessionless runs deleted.

* **Ended sessions** whose ``ended_at`` is older than their age and that have no running
  run are purged as ``purge_session`` purges them (purge.py): each in its own first
  transaction (``tombstone_session``), after which it is gone for every caller; the rows
  they leave are then deleted in batches shared by a group of sessions (fewer, fuller
  transactions than one purge each). With an archive directory each session is first
  exported there (export.py, written to a temporary file, synced, then renamed); it is
  purged only if it still holds the records the archive holds (a start in an ended
  session adds two), else left for the next sweep.
* **Sessionless runs** go by one-shot tree (a root and its one-shot children, which
  only ever name each other): a tree whose every run is terminal and last changed longer
  ago than the age is deleted whole, so no link or parent ever names a missing run. As a
  purge does, one short transaction tombstones the runs (``run_tombstones`` without a
  session: their IDs stay reserved, every later use answers ``session_purged``) and
  deletes their rows; their records, checkpoints and memory follow in batches. A sweep cut
  short after a tombstone leaves unreachable rows that the next sweep deletes.

A sweep reads its candidates page by page along indexes and never holds more than a page
of IDs. ``Sweeper`` runs sweeps periodically in a service worker; on PostgreSQL an advisory
lock lets one replica sweep at a time (``Dialect.exclusive``).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import quote

import sqlalchemy as sa

from app.domain.retention import RetentionPolicy
from app.domain.state import SessionRowStatus
from runtime_store_client import RunStatus, StoreError

from . import purge
from .context import Context
from .export import export_session
from .schema import (
    checkpoints,
    memory_batches,
    memory_events,
    run_labels,
    run_records,
    run_tombstones,
    runs,
    sessions,
)
from .unit_of_work import Tx

log = logging.getLogger("runtime_store.retention")
T = TypeVar("T")

#: Candidates read per query.
PAGE: Final = 500
#: Sessions tombstoned per transaction: short enough that a writer waiting for the
#: SQLite write lock waits little, long enough to save most of the per-commit cost.
TOMBSTONES: Final = 20
#: The name of the advisory lock that keeps sweeps to one replica at a time.
LOCK_NAME: Final = "runtime-store retention"
_TERMINAL: Final = tuple(status.value for status in RunStatus if status.is_terminal)


@dataclass
class Sweep:
    """What a sweep did (or, dry, would do)."""

    sessions: int = 0
    session_records: int = 0
    archived: int = 0
    #: Sessions left for the next sweep: a running run, or records added while archiving.
    skipped_sessions: int = 0
    runs: int = 0
    run_records: int = 0
    seconds: float = 0.0
    dry_run: bool = False

    def summary(self) -> str:
        verb = ("would purge", "would delete") if self.dry_run else ("purged", "deleted")
        parts = [
            f"{verb[0]} {self.sessions} ended sessions ({self.session_records} records)",
            f"{verb[1]} {self.runs} sessionless runs ({self.run_records} records)",
        ]
        if self.archived:
            parts.append(f"archived {self.archived} sessions")
        if self.skipped_sessions:
            parts.append(
                f"left {self.skipped_sessions} sessions for a later sweep (a running run, "
                "or records added meanwhile)"
            )
        return "; ".join(parts) + ("" if self.dry_run else f" in {self.seconds:.1f} s")


#: Told the kind of items done (``session`` or ``run``), how many, and their records.
Progress = Callable[[str, int, int], None]


def _no_progress(kind: str, items: int, records: int) -> None:
    del kind, items, records


# --- ended sessions ----------------------------------------------------------------------


def _ended_sessions(ctx: Context, cutoff_ms: int) -> Iterator[tuple[str, int, bool]]:
    """(session ID, records, has a running run) of every ended session older than the
    cutoff, oldest first, a page per read transaction (index on status, ended_at)."""
    running = (
        sa.select(runs.c.run_id)
        .where(runs.c.session_id == sessions.c.session_id, runs.c.status == RunStatus.RUNNING.value)
        .exists()
    )
    query = (
        sa.select(sessions.c.session_id, sessions.c.ended_at_ms, sessions.c.record_count, running)
        .where(
            sessions.c.status == SessionRowStatus.ENDED.value,
            sessions.c.ended_at_ms < cutoff_ms,
            sa.tuple_(sessions.c.ended_at_ms, sessions.c.session_id)
            > sa.tuple_(sa.bindparam("after_ms"), sa.bindparam("after_id")),
        )
        .order_by(sessions.c.ended_at_ms, sessions.c.session_id)
        .limit(PAGE)
    )
    after: dict[str, Any] = {"after_ms": -(2**62), "after_id": ""}
    while True:
        page = ctx.uow.read(functools.partial(_rows, query=query, params=after))
        for row in page:
            yield row.session_id, row.record_count, bool(row[3])
        if len(page) < PAGE:
            return
        after = {"after_ms": page[-1].ended_at_ms, "after_id": page[-1].session_id}


def _rows(tx: Tx, query: sa.Select[Any], params: dict[str, Any]) -> list[Any]:
    return list(tx.conn.execute(query, params).all())


def archive_path(directory: Path, session_id: str) -> Path:
    """``<dir>/<session ID, percent-encoded>.ndjson`` (long IDs end in a digest)."""
    name = quote(session_id, safe="")
    if len(name) > 200:
        name = name[:150] + "-" + hashlib.sha256(session_id.encode()).hexdigest()[:16]
    return directory / f"{name}.ndjson"


def archive_session(ctx: Context, session_id: str, directory: Path) -> int:
    """Export the session into the archive directory, durably; its record count."""
    directory.mkdir(parents=True, exist_ok=True)
    target = archive_path(directory, session_id)
    fd, partial = tempfile.mkstemp(dir=directory, prefix=".partial-", suffix=".ndjson")
    records = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for line in export_session(ctx, session_id):
                out.write(line)
                records += line.startswith(b'{"record":')
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    directory_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(directory_fd)
    finally:
        os.close(directory_fd)
    return records


def _sweep_sessions(
    ctx: Context, policy: RetentionPolicy, cutoff_ms: int, done: Sweep, step: _Step
) -> None:
    """Sessions tombstoned ``TOMBSTONES`` to a transaction (``purge.tombstone_sessions``:
    each the purge as callers see it), then the rows of a group of them deleted in shared
    batches."""
    waiting: list[tuple[str, int]] = []  # archived (if asked), to be tombstoned
    purged: list[tuple[str, int]] = []  # tombstoned, rows to be deleted
    for session_id, counted, has_running in _ended_sessions(ctx, cutoff_ms):
        if step.stopped():
            break
        if has_running:
            done.skipped_sessions += 1
            continue
        if done.dry_run:
            done.sessions += 1
            done.session_records += counted
            step.progress("session", 1, counted)
            continue
        records = counted
        if policy.archive_dir is not None:
            records = archive_session(ctx, session_id, policy.archive_dir)
            done.archived += 1
        waiting.append((session_id, records))
        if len(waiting) >= TOMBSTONES:
            purged += _tombstone(ctx, waiting, done)
            waiting = []
        if sum(n for _, n in purged) >= ctx.purge_batch or len(purged) >= PAGE:
            _delete_sessions_rows(ctx, purged, step)
            purged = []
    purged += _tombstone(ctx, waiting, done)
    if purged:
        _delete_sessions_rows(ctx, purged, step)


def _tombstone(ctx: Context, waiting: list[tuple[str, int]], done: Sweep) -> list[tuple[str, int]]:
    """Tombstone the waiting sessions (each only if it still holds its records); those
    left are skipped for a later sweep."""
    if not waiting:
        return []
    started = time.perf_counter()
    gone = set(purge.tombstone_sessions(ctx, waiting))
    ctx.uow.dialect.pause_between_batches(time.perf_counter() - started)
    purged = [(session_id, records) for session_id, records in waiting if session_id in gone]
    done.sessions += len(purged)
    done.session_records += sum(records for _, records in purged)
    done.skipped_sessions += len(waiting) - len(purged)
    return purged


def _delete_sessions_rows(ctx: Context, group: list[tuple[str, int]], step: _Step) -> None:
    session_ids = [session_id for session_id, _ in group]
    sizes = ctx.uow.read(functools.partial(_tombstoned_sizes, session_ids=session_ids))
    _delete_rows(ctx, sizes)
    step.progress("session", len(group), sum(records for _, records in group))


def _tombstoned_sizes(tx: Tx, session_ids: list[str]) -> list[tuple[str, int]]:
    """The runs the purges of these sessions tombstoned, with their highest record ID."""
    top = (
        sa.select(sa.func.max(run_records.c.seq))
        .where(run_records.c.run_id == run_tombstones.c.run_id)
        .scalar_subquery()
    )
    rows = tx.conn.execute(
        sa.select(run_tombstones.c.run_id, sa.func.coalesce(top, 0)).where(
            run_tombstones.c.session_id.in_(session_ids)
        )
    ).all()
    return [(run_id, count) for run_id, count in rows]


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


def _tombstone_runs(tx: Tx, run_ids: list[str], cutoff_ms: int) -> list[str]:
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
    return gone


def _delete_rows(ctx: Context, sizes: list[tuple[str, int]]) -> None:
    """The records, checkpoints and memory of tombstoned runs (with their highest record
    IDs), in transactions of at most ``purge_batch`` records each, as a purge deletes."""
    batch = ctx.purge_batch
    statements: list[sa.Delete] = []
    small: list[str] = []
    small_records = 0
    for run_id, top in sizes:
        if top >= batch:  # by ranges of record IDs: no batch rescans what one deleted
            statements.extend(
                run_records.delete().where(
                    run_records.c.run_id == run_id,
                    run_records.c.seq > low,
                    run_records.c.seq <= low + batch,
                )
                for low in range(0, top, batch)
            )
            continue
        if small_records + top > batch:
            statements.append(run_records.delete().where(run_records.c.run_id.in_(small)))
            small, small_records = [], 0
        small.append(run_id)
        small_records += top
    if small:
        statements.append(run_records.delete().where(run_records.c.run_id.in_(small)))
    for statement in statements:
        _timed(ctx, functools.partial(_execute, statement))
    ids = [run_id for run_id, _ in sizes]
    for start in range(0, len(ids), PAGE):
        chunk = ids[start : start + PAGE]
        while _timed(ctx, functools.partial(_delete_the_rest, run_ids=chunk, batch=batch)):
            pass


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


def _execute(statement: sa.Delete, tx: Tx) -> int:
    deleted: int = tx.conn.execute(statement).rowcount
    return deleted


def _timed(ctx: Context, operation: Callable[[Tx], T]) -> T:
    started = time.perf_counter()
    result = ctx.uow.write(operation)
    ctx.uow.dialect.pause_between_batches(time.perf_counter() - started)
    return result


def _delete_group(
    ctx: Context, trees: list[_Tree], cutoff_ms: int, done: Sweep, step: _Step
) -> None:
    sizes = dict(run for tree in trees for run in tree.runs)
    gone = ctx.uow.write(lambda tx: _tombstone_runs(tx, sorted(sizes), cutoff_ms))
    _delete_rows(ctx, [(run_id, sizes[run_id]) for run_id in gone])
    records = sum(sizes[run_id] for run_id in gone)
    done.runs += len(gone)
    done.run_records += records
    step.progress("run", len(gone), records)


def _sweep_runs(ctx: Context, cutoff_ms: int, done: Sweep, step: _Step) -> None:
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


def _leftovers(ctx: Context) -> None:
    """Rows of sessionless runs tombstoned by a sweep that was cut short: deleted now."""
    after = ""
    while True:
        ids = ctx.uow.read(functools.partial(_sessionless_tombstones, after=after))
        if not ids:
            return
        left = ctx.uow.read(functools.partial(_with_rows, ids=ids))
        if left:
            _delete_rows(ctx, left)
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
    for table in (checkpoints, memory_events, memory_batches):
        for run_id in tx.conn.execute(
            sa.select(table.c.run_id).where(table.c.run_id.in_(ids)).distinct()
        ).scalars():
            top.setdefault(run_id, 0)
    return sorted(top.items())


# --- the sweep ---------------------------------------------------------------------------


@dataclass
class _Step:
    progress: Progress = _no_progress
    should_stop: Callable[[], bool] = lambda: False

    def stopped(self) -> bool:
        return self.should_stop()


def sweep(
    ctx: Context,
    policy: RetentionPolicy,
    *,
    now_ms: int,
    dry_run: bool = False,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Sweep:
    """One sweep at ``now_ms``; dry, it only counts what it would delete."""
    started = time.perf_counter()
    done = Sweep(dry_run=dry_run)
    step = _Step(progress or _no_progress, should_stop or (lambda: False))
    session_cutoff = policy.session_cutoff_ms(now_ms)
    if session_cutoff is not None:
        _sweep_sessions(ctx, policy, session_cutoff, done, step)
    run_cutoff = policy.run_cutoff_ms(now_ms)
    if run_cutoff is not None:
        if not dry_run:
            _leftovers(ctx)
        _sweep_runs(ctx, run_cutoff, done, step)
    done.seconds = time.perf_counter() - started
    return done


@dataclass
class Sweeper:
    """Sweeps every ``interval`` in a background thread of a service worker, one replica
    at a time; the first sweep comes after a random part of the interval (at most a
    minute), so replicas started together do not all try at once."""

    run_sweep: Callable[[Callable[[], bool]], Sweep]
    exclusive: Callable[[], Any]
    interval: timedelta
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="retention", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop between two sessions or batches, waiting at most ``timeout`` seconds."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        seconds = self.interval.total_seconds()
        delay = random.uniform(0, min(seconds, 60.0))
        while not self._stop.wait(delay):
            delay = seconds
            try:
                with self.exclusive() as mine:
                    if not mine:
                        log.debug("retention: another replica is sweeping; skipped")
                        continue
                    done = self.run_sweep(self._stop.is_set)
                level = logging.INFO if done.sessions or done.runs else logging.DEBUG
                log.log(level, "retention: %s", done.summary())
            except (StoreError, sa.exc.SQLAlchemyError, OSError):
                log.exception("retention sweep failed; the next one retries")
