"""Finding sessions and runs (CONTRACT.md 11.1): keyset pages over the search indexes.

Both lists are newest first, ties by ID ascending. Every filter heads an index whose next
column is the status (``schema.py``), so one status is one index range: a page reads at
most ``limit + 1`` rows of each status asked for, and merges them (``UNION ALL`` ordered
and cut again). A label filter reads ``run_labels`` by its first label instead, in the same
order. The other filters only narrow the rows those ranges hold, so a page costs the same
at 10k runs as at 1M when its filters are the indexed ones.

Cursors are sealed (``app.domain.cursors``) and bind a digest of every filter, so a cursor
reused with other filters is ``invalid_argument``. A page reads one snapshot; across pages
the keyset position alone is carried, so a row that matches throughout the paging is seen
exactly once whatever commits in between (new rows sort before the position or after it,
and a row's position never changes: start and creation times are fixed).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import sqlalchemy as sa

from app.domain import cursors, filters
from app.domain import validation as v
from app.domain.limits import check_label_filters
from app.domain.times import to_millis
from app.storage.database.row_mapping import (
    label_text,
    run_from_row,
    run_meta,
    session_from_row,
    session_of,
)
from app.storage.database.tables import run_labels, runs, sessions
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    InvalidArgumentError,
    RunPage,
    RunStatus,
    SessionPage,
    SessionStatus,
)

_ALL_RUN_STATUSES = sorted(status.value for status in RunStatus)
_LISTED_SESSION_STATUSES = sorted(status.value for status in SessionStatus)


def _time(value: datetime | None, what: str) -> int | None:
    return None if value is None else to_millis(value, what)


_P = sa.bindparam


def _range(column: sa.ColumnElement[int], after: bool, before: bool) -> list[Any]:
    """Half-open: ``after`` <= t < ``before`` (bind parameters of those names)."""
    bounds: list[Any] = []
    if after:
        bounds.append(column >= _P("after"))
    if before:
        bounds.append(column < _P("before"))
    return bounds


def _keyset(time: sa.ColumnElement[int], key: sa.ColumnElement[str], positioned: bool) -> list[Any]:
    """Rows after the position ``at_ms``/``at_key`` in (time descending, key ascending)."""
    if not positioned:
        return []
    # ``time <= t`` alone bounds the index range; the OR settles rows of the same time.
    return [time <= _P("at_ms"), sa.or_(time < _P("at_ms"), key > _P("at_key"))]


def _merged(branches: list[sa.Select[Any]], order: list[str]) -> sa.Select[Any]:
    """One status range per branch, each cut at ``limit``, merged in page order."""
    cut = [branch.limit(_P("limit")) for branch in branches]
    if len(cut) == 1:
        return cut[0]
    union = sa.union_all(*(sa.select(b.subquery()) for b in cut)).subquery("merged")
    columns = {"time": union.c[order[0]], "key": union.c[order[1]]}
    return (
        sa.select(union).order_by(columns["time"].desc(), columns["key"].asc()).limit(_P("limit"))
    )


def _params(
    position: list[Any] | None, after: int | None, before: int | None, limit: int
) -> dict[str, Any]:
    params: dict[str, Any] = {"limit": limit}
    if position is not None:
        params["at_ms"], params["at_key"] = position
    if after is not None:
        params["after"] = after
    if before is not None:
        params["before"] = before
    return params


# --- sessions --------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _session_query(statuses: int, after: bool, before: bool, positioned: bool) -> sa.Select[Any]:
    """The statement of one shape of ``list_sessions``, built once (values are bound)."""
    c = sessions.c
    conditions = [
        *_range(c.created_at_ms, after, before),
        *_keyset(c.created_at_ms, c.session_id, positioned),
    ]
    branches = [
        sa.select(sessions)
        .where(c.status == _P(f"status_{i}"), *conditions)
        .order_by(c.created_at_ms.desc(), c.session_id.asc())
        for i in range(statuses)
    ]
    return _merged(branches, ["created_at_ms", "session_id"])


def list_sessions(
    ctx: Context,
    statuses: Sequence[SessionStatus],
    created_after: datetime | None,
    created_before: datetime | None,
    cursor: str,
    limit: int,
) -> SessionPage:
    """Sessions newest first, ties by ID; purged sessions never (11.1)."""
    size = cursors.check_limit(limit, ctx.page_max)
    wanted = filters.statuses(statuses, SessionStatus) or _LISTED_SESSION_STATUSES
    after_ms = _time(created_after, "created_after")
    before_ms = _time(created_before, "created_before")
    binding = cursors.filters_digest([wanted, after_ms, before_ms])
    position, at = (
        ctx.cursors.open_at(cursors.SESSIONS, cursor, binding, 2) if cursor else (None, 0)
    )
    codec = ctx.cursors.codec()  # after ``open``, which may have reloaded the key
    query = _session_query(len(wanted), after_ms is not None, before_ms is not None, bool(position))
    params = _params(position, after_ms, before_ms, size + 1)
    params.update({f"status_{i}": status for i, status in enumerate(wanted)})

    def operation(tx: Tx) -> SessionPage:
        rows, next_cursor = cursors.keyset_page(
            tx.conn.execute(query, params).all(),
            size,
            lambda last: codec.seal(
                cursors.SESSIONS,
                binding,
                [last.created_at_ms, last.session_id],
                at=tx.read_position(),
            ),
        )
        sessions = [session_of(session_from_row(row)) for row in rows]
        return SessionPage(sessions=sessions, next_cursor=next_cursor)

    return ctx.uow.read(operation, at_least=at)


# --- runs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunFilters:
    """A checked ``search_runs`` request."""

    statuses: list[str]
    agent_id: str
    session_id: str
    parent_run_id: str
    labels: dict[str, str]
    after_ms: int | None
    before_ms: int | None

    def digest(self) -> str:
        return cursors.filters_digest(
            [
                self.statuses,
                self.agent_id,
                self.session_id,
                self.parent_run_id,
                sorted(self.labels.items()),
                self.after_ms,
                self.before_ms,
            ]
        )


def check_run_filters(
    statuses: Sequence[RunStatus],
    agent_id: str,
    session_id: str,
    parent_run_id: str,
    labels: Mapping[str, str] | None,
    started_after: datetime | None,
    started_before: datetime | None,
) -> RunFilters:
    for value, what in (
        (agent_id, "agent_id"),
        (session_id, "session_id"),
        (parent_run_id, "parent_run_id"),
    ):
        v.optional_text(value, what)
    check_label_filters(labels)  # first: the count bounds everything after it (2.10)
    checked = v.check_labels(labels, "labels")
    if "" in checked:  # labels are JSON text: NUL allowed, surrogates refused (2.6)
        raise InvalidArgumentError("a label filter needs a non-empty key")
    return RunFilters(
        statuses=filters.statuses(statuses, RunStatus) or _ALL_RUN_STATUSES,
        agent_id=agent_id,
        session_id=session_id,
        parent_run_id=parent_run_id,
        labels=checked,
        after_ms=_time(started_after, "started_after"),
        before_ms=_time(started_before, "started_before"),
    )


@dataclass(frozen=True, slots=True)
class _RunShape:
    """What a ``search_runs`` statement looks like; its values are bound at execution."""

    statuses: int
    columns: tuple[str, ...]  # the equality filters given, of session, parent, agent
    labels: bool  # a label filter drives the statement
    more_labels: bool  # and others are checked on each run it finds
    after: bool
    before: bool
    positioned: bool


_EQUALITY: Final = ("session_id", "parent_run_id", "agent_id")


def _holds_every_label() -> Any:
    """The run holds every label asked for: one correlated count over its ``run_labels``
    rows (a primary-key range of at most ``max_labels`` rows) against one list of
    ``key || value`` pairs, whatever the number of labels. Both are JSON string literals
    (``rows.label_text``), so the concatenation names exactly one pair; a run holds a key
    at most once, so the count reaches the number of labels only when all of them match.

    One ``EXISTS`` per label made PostgreSQL's planner join up to 64 relations: 0.6 s of
    planning at 64 labels and over 10 s when the last label matched nothing."""
    other = run_labels.alias()
    held = (
        sa.select(sa.func.count())
        .select_from(other)
        .where(
            other.c.run_id == runs.c.run_id,
            (other.c.key + other.c.value).in_(_P("label_pairs", expanding=True)),
        )
        .scalar_subquery()
    )
    return held == _P("label_count")


@functools.lru_cache(maxsize=256)
def _run_query(shape: _RunShape) -> sa.Select[Any]:
    """The statement of one shape of ``search_runs``, built once."""
    c = runs.c
    equal = [c[name] == _P(name) for name in shape.columns]
    if shape.labels:  # drive from the first label's range in run_labels, same order
        rl = run_labels.c
        return (
            sa.select(runs)
            .join(run_labels, rl.run_id == c.run_id)
            .where(
                rl.key == _P("label_key_0"),
                rl.value == _P("label_value_0"),
                c.status.in_(_P("statuses", expanding=True)),
                *_range(rl.started_at_ms, shape.after, shape.before),
                *_keyset(rl.started_at_ms, rl.run_id, shape.positioned),
                *equal,
                *([_holds_every_label()] if shape.more_labels else []),
            )
            .order_by(rl.started_at_ms.desc(), rl.run_id.asc())
            .limit(_P("limit"))
        )
    # The first of session, parent, agent given (or none) heads the index each status
    # branch ranges over.
    conditions = [
        *_range(c.started_at_ms, shape.after, shape.before),
        *_keyset(c.started_at_ms, c.run_id, shape.positioned),
        *equal,
    ]
    branches = [
        sa.select(runs)
        .where(c.status == _P(f"status_{i}"), *conditions)
        .order_by(c.started_at_ms.desc(), c.run_id.asc())
        for i in range(shape.statuses)
    ]
    return _merged(branches, ["started_at_ms", "run_id"])


def _run_statement(
    f: RunFilters, position: list[Any] | None, limit: int
) -> tuple[sa.Select[Any], dict[str, Any]]:
    columns = tuple(name for name in _EQUALITY if getattr(f, name))
    shape = _RunShape(
        statuses=len(f.statuses),
        columns=columns,
        labels=bool(f.labels),
        more_labels=len(f.labels) > 1,
        after=f.after_ms is not None,
        before=f.before_ms is not None,
        positioned=position is not None,
    )
    params = _params(position, f.after_ms, f.before_ms, limit)
    params.update({name: getattr(f, name) for name in columns})
    pairs = [(label_text(key), label_text(value)) for key, value in sorted(f.labels.items())]
    if pairs:
        params["label_key_0"], params["label_value_0"] = pairs[0]
    if len(pairs) > 1:
        params["label_pairs"] = [key + value for key, value in pairs]
        params["label_count"] = len(pairs)
    if f.labels:
        params["statuses"] = f.statuses
    else:
        params.update({f"status_{i}": status for i, status in enumerate(f.statuses)})
    return _run_query(shape), params


def search_runs(ctx: Context, filters: RunFilters, cursor: str, limit: int) -> RunPage:
    """Runs newest first, ties by run ID; runs of purged sessions never (11.1)."""
    size = cursors.check_limit(limit, ctx.page_max)
    binding = filters.digest()
    position, at = ctx.cursors.open_at(cursors.RUNS, cursor, binding, 2) if cursor else (None, 0)
    codec = ctx.cursors.codec()  # after ``open``, which may have reloaded the key
    query, params = _run_statement(filters, position, size + 1)

    def operation(tx: Tx) -> RunPage:
        rows, next_cursor = cursors.keyset_page(
            tx.conn.execute(query, params).all(),
            size,
            lambda last: codec.seal(
                cursors.RUNS, binding, [last.started_at_ms, last.run_id], at=tx.read_position()
            ),
        )
        return RunPage(runs=[run_meta(run_from_row(row)) for row in rows], next_cursor=next_cursor)

    return ctx.uow.read(operation, at_least=at)
