"""Export (CONTRACT.md 11.4): a session as NDJSON lines, read in one consistent snapshot.

The file, one JSON object per line, each line ending in ``\\n``:

1. the header: ``{"format": "runtime-store.session/2", "session": {id, status, created_at,
   ended_at}}``;
2. one ``{"run": {…}}`` per run, by ``started_at`` then ``run_id``: its meta (section 1.5),
   its remembered lifecycle keys (``keys``, "" for none), its checkpoint (``{id, data}``,
   ``data`` as standard base64, or null), its ``request_digest`` (64 lowercase hex, or
   null: 12.1) and its ``start_kind`` (12.2; always ``engine`` in a session). Version 1
   files (``runtime-store.session/1``) have neither key and still import;
3. one ``{"record": {…}}`` per record in session order, as a page shows it (the payload a
   string holding the exact JSON text);
4. one ``{"memory_event": {…}}`` per memory event of the session's runs, in append order,
   and one ``{"memory_batch": {…}}`` per accepted memory append (its idempotency key);
5. the trailer: ``{"end": {"runs", "records", "memory_events", "memory_batches"}}``, the
   counts of the lines above.

Every value has one spelling (times as the API writes them, labels in their stored key
order, no optional whitespace), so an export of an imported session is byte for byte the
original export, whichever database either came from. Lines are produced one at a time
from server-side cursors: memory stays constant however large the session.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain import validation as v
from app.domain.times import from_millis
from runtime_store_client.times import format_rfc3339

from . import statements as st
from .context import Context
from .rows import RECORD_COLUMNS as PAGE_COLUMNS
from .rows import session_from_row
from .schema import checkpoints, memory_batches, memory_events, run_records, runs
from .sessions import not_found
from .unit_of_work import purged_error

#: The ``format`` of the header line: version 2 adds ``request_digest`` and ``start_kind``
#: to each run line (CONTRACT.md 12.1, 12.2).
FORMAT: Final = "runtime-store.session/2"
#: The format of version 1 files (no request digests, every run engine-started), which
#: still import.
FORMAT_1: Final = "runtime-store.session/1"
#: Rows fetched per round trip of each cursor.
FETCH_ROWS: Final = 1000

#: The remembered lifecycle keys (1.8) by their name in a run line, with their column.
KEY_COLUMNS: Final = {
    "start": "start_key",
    "parent_link": "parent_link_key",
    "cancellation": "cancellation_key",
    "suspension": "suspension_key",
    "terminal": "terminal_key",
}


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
#: A JSON string as ``_ENCODER`` writes it (the same C function).
_string: Final[Callable[[str], str]] = json.encoder.encode_basestring


def encode_line(value: dict[str, Any]) -> bytes:
    """One line: compact JSON, non-ASCII text as itself, ``\\n`` at the end."""
    return (_ENCODER.encode(value) + "\n").encode()


def time_text(ms: int | None) -> str | None:
    """A stored time as the API writes it (``format_rfc3339``), computed directly."""
    if ms is None:
        return None
    seconds, milli = divmod(ms, 1000)
    try:
        t = time.gmtime(seconds)
    except (OverflowError, OSError, ValueError):
        return format_rfc3339(from_millis(ms))
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:"
        f"{t.tm_sec:02d}.{milli:03d}Z"
    )


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


#: A record line's columns, in its order: the order a page reads them in.
RECORD_COLUMNS: Final = tuple(column.name for column in PAGE_COLUMNS)


def record_line(row: Any) -> bytes:
    """The line of a record row (``RECORD_COLUMNS``): what ``encode_line`` writes for
    ``{"record": {"id", "event_key", …, "payload", "timestamp"}}``, built directly because
    it is the line written a million times."""
    seq, event_key, run_id, agent_id, session_id, turn_id, type_, payload, ms = row
    return (
        f'{{"record":{{"id":"{seq}","event_key":{_string(event_key)},"run_id":'
        f'{_string(run_id)},"agent_id":{_string(agent_id)},"session_id":'
        f'{_string(session_id)},"turn_id":{_string(turn_id)},"type":{_string(type_)},'
        f'"payload":{_string(bytes(payload).decode("utf-8"))},"timestamp":"{time_text(ms)}"}}}}\n'
    ).encode()


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
