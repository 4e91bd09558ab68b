"""Per-run continuation checks (CONTRACT.md 3.13): one successor per predecessor.

Both sides are checked: a run's ``successor_run_id`` names a run whose ``run_started``
payload names it as predecessor, and a run started as a continuation is the one
successor its predecessor remembers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import sqlalchemy as sa

from app.domain.payloads import RUN_STARTED, decode_child_run_linked, decode_run_started
from app.domain.starts import LinkFacts, link_difference
from app.storage.database.tables import run_records, runs
from app.storage.verify.facts import RunChecks, RunFacts, decoded
from app.storage.verify.report import CONTINUATION_SUCCESSOR
from runtime_store_client import RunStatus


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
        sa.select(runs.c.successor_run_id, runs.c.parent_run_id, runs.c.parent_link_key).where(
            runs.c.run_id == started.predecessor_run_id
        )
    ).first()
    if predecessor is None:
        return  # a predecessor outside the runs table went with its purged session
    if predecessor.successor_run_id != run.run_id:
        yield (
            f"predecessor {started.predecessor_run_id!r} remembers successor "
            f"{predecessor.successor_run_id or ''!r}, not this run"
        )
    if predecessor.parent_run_id != row.parent_run_id:
        yield from _moved_parent(run, predecessor)


def _moved_parent(run: RunFacts, predecessor: Any) -> Iterator[str]:
    """12.4: a child continued under another parent repeats its predecessor's link (tool
    name, tool call ID, child agent) and its parent's agent wrote both links."""
    row = run.row
    if not (predecessor.parent_run_id and row.parent_run_id):
        yield (
            f"continuation has parent {row.parent_run_id!r}, its predecessor "
            f"{predecessor.parent_run_id!r}"
        )
        return
    links = [
        run.conn.execute(
            sa.select(run_records.c.agent_id, run_records.c.payload).where(
                run_records.c.run_id == parent, run_records.c.event_key == key
            )
        ).first()
        for parent, key in (
            (predecessor.parent_run_id, predecessor.parent_link_key),
            (row.parent_run_id, row.parent_link_key),
        )
    ]
    facts = []
    for link in links:
        if link is None:
            return  # the link checks report a missing link
        linked, _ = decoded(decode_child_run_linked, link.payload)
        if linked is None:
            return  # ... or an unreadable one
        facts.append(LinkFacts.of(linked, link.agent_id))
    differs = link_difference(facts[0], facts[1])
    if differs is not None:
        name, expected, actual = differs
        yield (
            f"continuation under parent {row.parent_run_id!r} does not repeat its "
            f"predecessor's link: {name} {expected!r}, not {actual!r}"
        )


CHECKS: Final[RunChecks] = (
    (CONTINUATION_SUCCESSOR, predecessor_side),
    (CONTINUATION_SUCCESSOR, successor_side),
)
