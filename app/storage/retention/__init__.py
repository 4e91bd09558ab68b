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
  short after a tombstone leaves unreachable rows that the next sweep deletes. A run's
  seed (its operation, attempts and records, CONTRACT.md 15.7) goes with it.
* **Sessionless seeds whose run never started** go once the store-clock time of their
  last seed write (``seed_operations.updated_at_ms``) is older than the sessionless runs'
  age: under each run ID's lock (a start attaching the seed goes first or sees it gone),
  the run ID is tombstoned as a deleted sessionless run's, the operation and its attempts
  deleted; their records follow in batches.
* **Memory of runs that do not exist** (memory may be appended for any run ID, section
  9): an agent's memory of a run without a run row goes once all of it is older than its
  age: its newest event timestamp and its newest append. It goes whole, in transactions
  of at most ``purge_batch`` events, each of which checks again that the run still does
  not exist and deletes only the events and appends it saw as old, so a run started or an
  append made meanwhile keeps what it needs. The run IDs holding memory are read along the
  ``(run_id, id)`` index of ``memory_events``, one index probe per run ID.

A sweep reads its candidates page by page along indexes and never holds more than a page
of IDs. ``Sweeper`` runs sweeps periodically in a service worker; on PostgreSQL an advisory
lock lets one replica sweep at a time (``Dialect.exclusive``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.domain.retention import RetentionPolicy
from app.storage.operation import Context
from app.storage.retention.common import LOCK_NAME, Progress, Step, Sweep, no_progress
from app.storage.retention.memory import sweep_orphan_memory
from app.storage.retention.runs import leftovers, sweep_runs, sweep_seeds
from app.storage.retention.sessions import archive_path, archive_session, sweep_sessions

# --- the sweep ---------------------------------------------------------------------------


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
    step = Step(progress or no_progress, should_stop or (lambda: False))
    session_cutoff = policy.session_cutoff_ms(now_ms)
    if session_cutoff is not None:
        sweep_sessions(ctx, policy, session_cutoff, done, step)
    run_cutoff = policy.run_cutoff_ms(now_ms)
    if run_cutoff is not None:
        if not dry_run:
            leftovers(ctx)
        sweep_runs(ctx, run_cutoff, done, step)
        sweep_seeds(ctx, run_cutoff, done, step)
    memory_cutoff = policy.orphan_memory_cutoff_ms(now_ms)
    if memory_cutoff is not None:
        sweep_orphan_memory(ctx, memory_cutoff, done, step)
    done.seconds = time.perf_counter() - started
    return done


__all__ = ["LOCK_NAME", "Progress", "Sweep", "archive_path", "archive_session", "sweep"]
