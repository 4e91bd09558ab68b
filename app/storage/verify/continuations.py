"""Per-run continuation checks (CONTRACT.md 3.13): one successor per predecessor.

Both sides are checked: a run's ``successor_run_id`` names a run whose ``run_started``
payload names it as predecessor, and a run started as a continuation is the one
successor its predecessor remembers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import sqlalchemy as sa

from app.domain.payloads import RUN_STARTED, decode_run_started
from runtime_store_client import RunStatus

from ..schema import runs
from .facts import RunChecks, RunFacts, decoded
from .report import CONTINUATION_SUCCESSOR


def predecessor_side(run: RunFacts) -> Iterator[str]:
    """A remembered successor exists and names this run; the predecessor stays suspended."""
    row = run.row
    if not row.successor_run_id:
        return
    if row.status != RunStatus.SUSPENDED.value:
        yield f"run with successor {row.successor_run_id!r} is {row.status}, not suspended"
    if row.successor_found is None:
        yield f"successor run {row.successor_run_id!r} does not exist"
        return
    started, error = decoded(decode_run_started, row.successor_start_payload or b"")
    if error:
        yield f"successor {row.successor_run_id!r} has no readable run_started: {error}"
    elif started.predecessor_run_id != run.run_id:
        yield (
            f"successor {row.successor_run_id!r} names predecessor {started.predecessor_run_id!r}"
        )


def successor_side(run: RunFacts) -> Iterator[str]:
    """A continuation is the successor its predecessor remembers (only one is admitted)."""
    row = run.row
    if row.start_type != RUN_STARTED or row.start_payload is None:
        return  # the lifecycle checks report a missing or misplaced run_started
    started, error = decoded(decode_run_started, row.start_payload)
    if error or not started.predecessor_run_id:
        return
    predecessor = run.conn.execute(
        sa.select(runs.c.successor_run_id).where(runs.c.run_id == started.predecessor_run_id)
    ).first()
    if predecessor is None:
        return  # a predecessor outside the runs table went with its purged session
    if predecessor.successor_run_id != run.run_id:
        yield (
            f"predecessor {started.predecessor_run_id!r} remembers successor "
            f"{predecessor.successor_run_id or ''!r}, not this run"
        )


CHECKS: Final[RunChecks] = (
    (CONTINUATION_SUCCESSOR, predecessor_side),
    (CONTINUATION_SUCCESSOR, successor_side),
)
