"""Record counts of runs and sessions by ID (the console's lists, issue 33): the counters
the runs and sessions rows keep (``record_count``, the last record ID or session position
handed out), one primary-key lookup per ID."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from app.domain import validation as v
from app.domain.filters import MAX_RECORD_COUNT_IDS
from app.domain.state import SessionRowStatus
from app.storage.database.tables import runs, sessions
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import InvalidArgumentError, RecordCounts


def count_records(ctx: Context, run_ids: Sequence[str], session_ids: Sequence[str]) -> RecordCounts:
    """The number of records of each run and session named; unknown and purged ones are
    left out. One primary-key lookup per ID."""
    if len(run_ids) + len(session_ids) > MAX_RECORD_COUNT_IDS:
        raise InvalidArgumentError(f"at most {MAX_RECORD_COUNT_IDS} IDs per call")
    for ids, what in ((run_ids, "run_id"), (session_ids, "session_id")):
        for value in ids:
            v.optional_text(value, what)
    wanted_runs, wanted_sessions = sorted(set(run_ids)), sorted(set(session_ids))

    def operation(tx: Tx) -> RecordCounts:
        found_runs: dict[str, int] = {}
        found_sessions: dict[str, int] = {}
        if wanted_runs:
            rows = tx.conn.execute(
                sa.select(runs.c.run_id, runs.c.record_count).where(runs.c.run_id.in_(wanted_runs))
            )
            found_runs = {row.run_id: row.record_count for row in rows}
        if wanted_sessions:
            rows = tx.conn.execute(
                sa.select(sessions.c.session_id, sessions.c.record_count).where(
                    sessions.c.session_id.in_(wanted_sessions),
                    sessions.c.status != SessionRowStatus.PURGED,  # a tombstone holds nothing
                )
            )
            found_sessions = {row.session_id: row.record_count for row in rows}
        return RecordCounts(runs=found_runs, sessions=found_sessions)

    return ctx.uow.read(operation)
