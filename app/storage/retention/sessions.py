"""Retention of ended sessions: purged as ``purge_session`` purges, optionally archived
first (CONTRACT.md 11.4)."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa

from app.domain.retention import RetentionPolicy
from app.domain.state import SessionRowStatus
from app.storage.database.tables import run_records, run_tombstones, runs, sessions
from app.storage.operation import Context
from app.storage.retention.common import PAGE, TOMBSTONES, Step, Sweep, rows
from app.storage.sessions import purge
from app.storage.sessions.deletion import delete_run_rows
from app.storage.transfer import export_session
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import RunStatus

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
        page = ctx.uow.read(functools.partial(rows, query=query, params=after))
        for row in page:
            yield row.session_id, row.record_count, bool(row[3])
        if len(page) < PAGE:
            return
        after = {"after_ms": page[-1].ended_at_ms, "after_id": page[-1].session_id}


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


def sweep_sessions(
    ctx: Context, policy: RetentionPolicy, cutoff_ms: int, done: Sweep, step: Step
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


def _delete_sessions_rows(ctx: Context, group: list[tuple[str, int]], step: Step) -> None:
    session_ids = [session_id for session_id, _ in group]
    sizes = ctx.uow.read(functools.partial(_tombstoned_sizes, session_ids=session_ids))
    delete_run_rows(ctx, sizes)
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
