"""The lists' counts (CONTRACT.md 11.5): sessions and runs per status, each bounded, by
the very statements ``search`` pages with (its filters, their checks and its index
ranges), and record counts of runs and sessions by ID (``record_counts``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from app.domain.filters import MAX_COUNT_LIMIT, count_limit
from app.storage.database.tables import runs, sessions
from app.storage.operation import Context
from app.storage.search.finding import (
    _ALL_RUN_STATUSES,
    _LISTED_SESSION_STATUSES,
    RunFilters,
    _params,
    _run_statement,
    _session_query,
    _time,
    check_run_filters,
)
from app.storage.search.record_counts import count_records
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import RecordCounts, StatusCounts


def _bounded_count(page: sa.Select[Any], key: sa.ColumnElement[str]) -> sa.Select[Any]:
    """``count(*)`` of a one-status list statement cut at ``limit``: the same index range
    as its page, read no further than ``limit`` rows (unordered: any rows do)."""
    rows = page.with_only_columns(key).order_by(None).subquery("counted")
    return sa.select(sa.func.count()).select_from(rows)


def count_sessions(
    ctx: Context, created_after: datetime | None, created_before: datetime | None, limit: int
) -> StatusCounts:
    """How many sessions of each status ``list_sessions`` lists with these filters, each
    at most ``limit`` (a count equal to ``limit`` means at least that many)."""
    cap = count_limit(limit)
    after_ms = _time(created_after, "created_after")
    before_ms = _time(created_before, "created_before")
    query = _bounded_count(
        _session_query(1, after_ms is not None, before_ms is not None, False),
        sessions.c.session_id,
    )
    params = _params(None, after_ms, before_ms, cap)

    def operation(tx: Tx) -> StatusCounts:
        counts = {
            status: tx.conn.execute(query, {**params, "status_0": status}).scalar_one()
            for status in _LISTED_SESSION_STATUSES
        }
        return StatusCounts(counts=counts, limit=cap)

    return ctx.uow.read(operation)


def count_runs(ctx: Context, filters: RunFilters, limit: int) -> StatusCounts:
    """How many runs of each status ``search_runs`` finds with these filters (their
    statuses ignored), each at most ``limit``."""
    cap = count_limit(limit)
    statements = {
        status: _run_statement(replace(filters, statuses=[status]), None, cap)
        for status in _ALL_RUN_STATUSES
    }
    counted = {
        status: (_bounded_count(query, runs.c.run_id), params)
        for status, (query, params) in statements.items()
    }

    def operation(tx: Tx) -> StatusCounts:
        counts = {
            status: tx.conn.execute(query, params).scalar_one()
            for status, (query, params) in counted.items()
        }
        return StatusCounts(counts=counts, limit=cap)

    return ctx.uow.read(operation)


class Counts:
    """``SqlStore``'s counting calls (``RunCounts``): the lists' status counts, bounded, and
    record counts of runs and sessions by ID."""

    _ctx: Context

    def count_sessions(
        self,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        limit: int = MAX_COUNT_LIMIT,
    ) -> StatusCounts:
        """Sessions per status ``list_sessions`` would list, each at most ``limit``."""
        return count_sessions(self._ctx, created_after, created_before, limit)

    def count_runs(
        self,
        agent_id: str = "",
        session_id: str = "",
        parent_run_id: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        limit: int = MAX_COUNT_LIMIT,
    ) -> StatusCounts:
        """Runs per status ``search_runs`` would find, each at most ``limit``."""
        filters = check_run_filters(
            (), agent_id, session_id, parent_run_id, labels, started_after, started_before
        )
        return count_runs(self._ctx, filters, limit)

    def count_records(
        self, run_ids: Sequence[str] = (), session_ids: Sequence[str] = ()
    ) -> RecordCounts:
        """Records of each run and session named (at most 100 IDs); unknown ones left out."""
        return count_records(self._ctx, run_ids, session_ids)
