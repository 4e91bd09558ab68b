"""Export (CONTRACT.md 11.4, 15.7): a session as the lines of its file (``format``), read in
one consistent snapshot, produced one at a time from server-side cursors: memory stays
constant however large the session.

Every order by text compares UTF-8 bytes on either database (PostgreSQL: the ``C``
collation, whatever the database's default), so both write the same lines in the same
order. The seed lines come from two cursors read side by side: the session's seed
operations joined with their attempts, and the attempts' records, both in the same order
(run ID, attempt ID, position)."""

from __future__ import annotations

import base64
import json
from collections.abc import Generator, Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain import seeds
from app.domain import validation as v
from app.storage.database import statements as st
from app.storage.database.row_mapping import session_from_row
from app.storage.database.tables import (
    checkpoints,
    memory_batches,
    memory_events,
    run_records,
    runs,
    seed_attempts,
    seed_operations,
    seed_records,
)
from app.storage.operation import Context
from app.storage.seeds import rows as seed_rows
from app.storage.sessions.administration import not_found
from app.storage.transfer.format import (
    COUNT_KEYS,
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


def _streamed(conn: Connection, query: sa.Executable) -> Generator[Any, None, None]:
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
                "seed_end_id": row.seed_end_id,
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


def _bytewise(conn: Connection, column: Any) -> Any:
    """``column`` ordered by its UTF-8 bytes: SQLite's own text order; PostgreSQL's ``C``
    collation (byte order, which for UTF-8 is code point order)."""
    return column.collate("C") if conn.dialect.name == "postgresql" else column


def _seed_attempt_line(row: Any) -> bytes:
    attempt = seed_rows.attempt_from_row(row)
    declaration = attempt.declaration
    source = attempt.source
    return encode_line(
        {
            "seed_attempt": {
                "run_id": attempt.run_id,
                "attempt_id": attempt.attempt_id,
                "state": attempt.state.value,
                "declaration": None if declaration is None else seeds.declaration_json(declaration),
                "source": None if source is None else seeds.prefix_json(source),
                "seed_end_id": seeds.position_text(attempt.history_end),
                "end_id": seeds.position_text(attempt.body_end),
                "prepared_bytes": attempt.prepared_bytes,
            }
        }
    )


def _seed_record_line(row: Any) -> bytes:
    position, record = seed_rows.record_from_row(row)
    return encode_line(
        {
            "seed_record": {
                "run_id": row.run_id,
                "attempt_id": row.attempt_id,
                **seeds.record_wire(record, position),
            }
        }
    )


def _seeds(conn: Connection, session_id: str, counts: dict[str, int]) -> Iterator[bytes]:
    """The session's seed operations, each followed by its attempts, each attempt by its
    records: two cursors in the same order, merged."""
    ops, attempts, records = seed_operations.c, seed_attempts.c, seed_records.c
    attempt_rows = (
        sa.select(
            ops.run_id.label("op_run_id"),
            ops.agent_id.label("op_agent_id"),
            ops.command_id.label("op_command_id"),
            seed_attempts,
        )
        .outerjoin(seed_attempts, attempts.run_id == ops.run_id)
        .where(ops.session_id == session_id)
        .order_by(_bytewise(conn, ops.run_id), _bytewise(conn, attempts.attempt_id))
    )
    record_rows = (
        sa.select(seed_records)
        .where(records.run_id.in_(sa.select(ops.run_id).where(ops.session_id == session_id)))
        .order_by(_bytewise(conn, records.run_id), _bytewise(conn, records.attempt_id), records.id)
    )
    pending = _streamed(conn, record_rows)
    try:
        record = next(pending, None)
        current = None
        for row in _streamed(conn, attempt_rows):
            if row.op_run_id != current:
                current = row.op_run_id
                counts["seed_operations"] += 1
                yield encode_line(
                    {
                        "seed_operation": {
                            "run_id": row.op_run_id,
                            "agent_id": row.op_agent_id,
                            "session_id": session_id,
                            "command_id": row.op_command_id,
                        }
                    }
                )
            if row.attempt_id is None:
                continue  # an operation without attempts (never written so)
            counts["seed_attempts"] += 1
            yield _seed_attempt_line(row)
            # Python compares strings by code point: the cursors' byte order.
            attempt = (row.run_id, row.attempt_id)
            while record is not None and (record.run_id, record.attempt_id) <= attempt:
                if (record.run_id, record.attempt_id) == attempt:
                    counts["seed_records"] += 1
                    yield _seed_record_line(record)
                record = next(pending, None)  # else a record of no attempt: unreachable
    finally:
        pending.close()


def _body(conn: Connection, session_id: str) -> Iterator[bytes]:
    """Every line after the header, the trailer last."""
    counts = dict.fromkeys(COUNT_KEYS, 0)
    run_rows = (
        sa.select(runs, checkpoints.c.checkpoint_id, checkpoints.c.data)
        .outerjoin(checkpoints, checkpoints.c.run_id == runs.c.run_id)
        .where(runs.c.session_id == session_id)
        .order_by(runs.c.started_at_ms, _bytewise(conn, runs.c.run_id))
    )
    for row in _streamed(conn, run_rows):
        counts["runs"] += 1
        yield _run_line(row)
    yield from _seeds(conn, session_id, counts)
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
            _bytewise(conn, memory_batches.c.agent_id),
            _bytewise(conn, memory_batches.c.run_id),
            _bytewise(conn, memory_batches.c.idempotency_key),
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
