"""Session administration (CONTRACT.md 3.1, 3.2): create, load, end, status, their runs.

Every write takes the session's row lock, so it serialises with the starts and appends of
the session (2.5). Purge has its own module (purge.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from app.domain import cursors, filters
from app.domain import validation as v
from app.domain.state import SessionRowStatus, SessionState
from app.domain.times import from_millis, to_millis
from app.storage.database.row_mapping import run_from_row, run_meta, session_of
from app.storage.database.tables import runs, sessions
from app.storage.operation import Context
from app.storage.unit_of_work import import_holds
from app.storage.unit_of_work.transactions import Tx, purged_error
from runtime_store_client import (
    RunPage,
    RunStatus,
    Session,
    SessionEndedError,
    SessionNotFoundError,
    SessionStatus,
    WebhookEventType,
)


def not_found(session_id: str) -> SessionNotFoundError:
    return SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)


def readable_session(tx: Tx, session_id: str) -> SessionState:
    """A session that exists and is not purged (``""`` is never a session)."""
    v.optional_text(session_id, "session_id")
    return readable(session_id, tx.session(session_id, lock=False) if session_id else None)


def readable(session_id: str, session: SessionState | None) -> SessionState:
    """``session`` (read for ``session_id``) if it exists and is not purged; else the
    error a read of it raises."""
    if session is None:
        raise not_found(session_id)
    if session.purged:
        raise purged_error(session_id)
    return session


def create_session(ctx: Context, session_id: str, created_at: datetime) -> Session:
    """Create an active session, or return the active one unchanged (3.1)."""
    ctx.limits.check_id(session_id, "session_id")
    v.require_id(session_id, "session_id")
    created_ms = to_millis(created_at, "created_at")

    def operation(tx: Tx) -> Session:
        session = tx.session(session_id, lock=True)
        if session is None:
            if tx.dialect.stages_imports:
                import_holds.check_not_claimed(tx.conn, import_holds.SESSION, session_id)
            tx.conn.execute(
                sessions.insert().values(
                    session_id=session_id,
                    status=SessionRowStatus.ACTIVE.value,
                    created_at_ms=created_ms,
                    record_count=0,
                )
            )
            return Session(
                id=session_id, status=SessionStatus.ACTIVE, created_at=from_millis(created_ms)
            )
        if session.purged:
            raise purged_error(session_id)
        if session.status is SessionRowStatus.ENDED:
            raise SessionEndedError(f"session {session_id!r} has ended", session_id=session_id)
        return session_of(session)

    return ctx.uow.write(operation)


def load_session(ctx: Context, session_id: str) -> Session:
    """The session (3.1)."""
    return ctx.uow.read(lambda tx: session_of(readable_session(tx, session_id)))


def load_session_status(ctx: Context, session_id: str) -> SessionStatus:
    """``active`` or ``ended`` (3.2)."""
    return ctx.uow.read(lambda tx: readable_session(tx, session_id).contract_status)


def end_session(ctx: Context, session_id: str, ended_at: datetime) -> Session:
    """End a session: running runs continue, new starts stop (3.1)."""
    v.require_id(session_id, "session_id")
    ended_ms = to_millis(ended_at, "ended_at")

    def operation(tx: Tx) -> Session:
        session = tx.session(session_id, lock=True)
        if session is None:
            raise not_found(session_id)
        if session.purged:
            raise purged_error(session_id)
        if session.status is SessionRowStatus.ACTIVE:
            tx.change_session(session, status=SessionRowStatus.ENDED, ended_at_ms=ended_ms)
            tx.add_event(WebhookEventType.SESSION_ENDED, session_id=session_id)
        return session_of(session)

    return ctx.uow.write(operation)


def list_session_runs(
    ctx: Context,
    session_id: str,
    statuses: Sequence[RunStatus],
    cursor: str,
    limit: int,
) -> RunPage:
    """A page of a session's runs by ``started_at`` then ``run_id`` (3.1)."""
    size = cursors.check_limit(limit, ctx.page_max)
    wanted = filters.statuses(statuses, RunStatus)
    v.optional_text(session_id, "session_id")
    binding = [session_id, wanted]
    after, at = (
        ctx.cursors.open_at(cursors.SESSION_RUNS, cursor, binding, 2) if cursor else (None, 0)
    )
    codec = ctx.cursors.codec()  # after ``open``, which may have reloaded the key

    def operation(tx: Tx) -> RunPage:
        readable_session(tx, session_id)
        query = sa.select(runs).where(runs.c.session_id == session_id)
        if wanted:
            query = query.where(runs.c.status.in_(wanted))
        if after is not None:
            query = query.where(
                sa.tuple_(runs.c.started_at_ms, runs.c.run_id)
                > sa.tuple_(sa.literal(after[0]), sa.literal(after[1]))
            )
        query = query.order_by(runs.c.started_at_ms, runs.c.run_id).limit(size + 1)
        rows, next_cursor = cursors.keyset_page(
            tx.conn.execute(query).all(),
            size,
            lambda last: codec.seal(
                cursors.SESSION_RUNS,
                binding,
                [last.started_at_ms, last.run_id],
                at=tx.read_position(),
            ),
        )
        return RunPage(runs=[run_meta(run_from_row(row)) for row in rows], next_cursor=next_cursor)

    return ctx.uow.read(operation, at_least=at)
