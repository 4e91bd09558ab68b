"""Export (CONTRACT.md 11.4): a session as the lines of its file (``format``), read in one
consistent snapshot, produced one at a time from server-side cursors: memory stays
constant however large the session."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain import validation as v
from app.storage.database import statements as st
from app.storage.database.row_mapping import session_from_row
from app.storage.database.tables import (
    checkpoints,
    memory_batches,
    memory_events,
    run_records,
    runs,
)
from app.storage.operation import Context
from app.storage.sessions.administration import not_found
from app.storage.transfer.format import (
    FORMAT,
    KEY_COLUMNS,
    RECORD_COLUMNS,
    encode_line,
    record_line,
    time_text,
)
from app.storage.unit_of_work.transactions import purged_error

#: Rows fetched per round trip of each cursor.
FETCH_ROWS: Final = 1000


def _session_runs(session_id: str) -> sa.Select[tuple[str]]:
    return sa.select(runs.c.run_id).where(runs.c.session_id == session_id)


def _streamed(conn: Connection, query: sa.Executable) -> Iterator[Any]:
    """The rows of ``query`` from a server-side cursor, ``FETCH_ROWS`` per round trip."""
    result = conn.execute(query.execution_options(yield_per=FETCH_ROWS))
    try:
        yield from result
    finally:
        result.close()


def _header(conn: Connection, session_id: str) -> bytes:
    row = conn.execute(st.SELECT_SESSION, {"session_id": session_id}).first()
    if row is None:
        raise not_found(session_id)
    session = session_from_row(row)
    if session.purged:
        raise purged_error(session_id)
    return encode_line(
        {
            "format": FORMAT,
            "session": {
                "id": session.session_id,
                "status": session.status.value,
                "created_at": time_text(session.created_at_ms),
                "ended_at": time_text(session.ended_at_ms),
            },
        }
    )


def _run_line(row: Any) -> bytes:
    digest = None if row.request_digest is None else bytes(row.request_digest).hex()
    checkpoint = None
    if row.checkpoint_id is not None:
        data = base64.b64encode(bytes(row.data)).decode("ascii")
        checkpoint = {"id": row.checkpoint_id, "data": data}
    return encode_line(
        {
            "run": {
                "run_id": row.run_id,
                "agent_id": row.agent_id,
                "session_id": row.session_id,
                "parent_run_id": row.parent_run_id,
                "status": row.status,
                "start_outcome": row.start_outcome,
                "started_at": time_text(row.started_at_ms),
                "updated_at": time_text(row.updated_at_ms),
                "labels": json.loads(row.labels),
                "cancellation_reason": row.cancellation_reason,
                "successor_run_id": row.successor_run_id or "",
                "keys": {name: getattr(row, column) or "" for name, column in KEY_COLUMNS.items()},
                "checkpoint": checkpoint,
                "request_digest": digest,
                "start_kind": row.start_kind,
            }
        }
    )


def _memory_event_line(row: Any) -> bytes:
    return encode_line(
        {
            "memory_event": {
                "agent_id": row.agent_id,
                "run_id": row.run_id,
                "type": row.type,
                "timestamp": time_text(row.timestamp_ms),
                "data": json.loads(row.data),
                "labels": json.loads(row.labels),
            }
        }
    )


def _memory_batch_line(row: Any) -> bytes:
    return encode_line(
        {
            "memory_batch": {
                "agent_id": row.agent_id,
                "run_id": row.run_id,
                "idempotency_key": row.idempotency_key,
                "appended_at": time_text(row.appended_at_ms),
                "digest": row.digest,
            }
        }
    )


def _body(conn: Connection, session_id: str) -> Iterator[bytes]:
    """Every line after the header, the trailer last."""
    counts = {"runs": 0, "records": 0, "memory_events": 0, "memory_batches": 0}
    run_rows = (
        sa.select(runs, checkpoints.c.checkpoint_id, checkpoints.c.data)
        .outerjoin(checkpoints, checkpoints.c.run_id == runs.c.run_id)
        .where(runs.c.session_id == session_id)
        .order_by(runs.c.started_at_ms, runs.c.run_id)
    )
    for row in _streamed(conn, run_rows):
        counts["runs"] += 1
        yield _run_line(row)
    record_rows = (
        sa.select(*(run_records.c[name] for name in RECORD_COLUMNS))
        .where(run_records.c.session_id == session_id)
        .order_by(run_records.c.session_seq)
    )
    for row in _streamed(conn, record_rows):
        counts["records"] += 1
        yield record_line(row)
    event_rows = (
        sa.select(memory_events)
        .where(memory_events.c.run_id.in_(_session_runs(session_id)))
        .order_by(memory_events.c.id)
    )
    for row in _streamed(conn, event_rows):
        counts["memory_events"] += 1
        yield _memory_event_line(row)
    batch_rows = (
        sa.select(memory_batches)
        .where(memory_batches.c.run_id.in_(_session_runs(session_id)))
        .order_by(
            memory_batches.c.agent_id, memory_batches.c.run_id, memory_batches.c.idempotency_key
        )
    )
    for row in _streamed(conn, batch_rows):
        counts["memory_batches"] += 1
        yield _memory_batch_line(row)
    yield encode_line({"end": counts})


def export_session(ctx: Context, session_id: str) -> Iterator[bytes]:
    """The lines of the session's export (section 11.4), each ending in ``\\n``.

    A generator holding one read transaction: the first ``next()`` opens the snapshot and
    raises ``session_not_found`` or ``session_purged`` before any line; close it (or
    exhaust it) to end the transaction.
    """
    v.require_id(session_id, "session_id")
    with ctx.uow.engine.connect() as conn, conn.begin():
        ctx.uow.dialect.begin_snapshot(conn)
        yield _header(conn, session_id)
        yield from _body(conn, session_id)
