"""The memory store (CONTRACT.md section 9): per-run event history, keyed by agent and run.

Memory events carry no event keys, so each append has one: the caller's idempotency key
(the HTTP client sends one per call and keeps it across its retries), or a fresh one. An
append whose key was already accepted for the agent's run with the same events is a no-op,
so a retry after a lost answer never stores the events twice; the same key with other
events is an ``event_conflict`` (2.7), never a silent drop. The memory of a run whose
session was purged is gone with it (3.1): naming such a run answers ``session_purged``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from app.domain import validation as v
from app.domain.json_bounds import check_value_depth
from app.domain.limits import Limits
from app.domain.text import check_unicode
from app.domain.times import from_millis, to_millis
from app.storage.database.raw_statements import DriverStatement
from app.storage.database.tables import memory_batches, memory_events
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    EventConflictError,
    InvalidArgumentError,
    MemoryEvent,
    SessionPurgedError,
    Snapshot,
)
from runtime_store_client.types import MEMORY_EVENT_TYPES

# Statements built once (SQLAlchemy then reuses their compiled form and cache key).

#: A run's events in append order, read by position (on PostgreSQL on the driver
#: connection).
_SELECT_EVENTS = DriverStatement(
    sa.select(
        memory_events.c.type,
        memory_events.c.timestamp_ms,
        memory_events.c.data,
        memory_events.c.labels,
    )
    .where(
        memory_events.c.agent_id == sa.bindparam("agent_id"),
        memory_events.c.run_id == sa.bindparam("run_id"),
    )
    .order_by(memory_events.c.id)
)

#: An append's idempotency key as already accepted for the run, with its batch's digest.
_SELECT_BATCH = sa.select(memory_batches.c.digest).where(
    memory_batches.c.agent_id == sa.bindparam("agent_id"),
    memory_batches.c.run_id == sa.bindparam("run_id"),
    memory_batches.c.idempotency_key == sa.bindparam("idempotency_key"),
)
_INSERT_BATCH = memory_batches.insert()
_INSERT_EVENTS = memory_events.insert()

#: ``json.loads`` without its per-call argument checks (two per event read).
_decode = json.JSONDecoder().decode


def _refuse_purged(tx: Tx, run_id: str) -> None:
    if tx.run_was_purged(run_id):
        raise SessionPurgedError(f"run {run_id!r} belonged to a purged session", run_id=run_id)


def _digest(rows: Sequence[Mapping[str, Any]]) -> str:
    """The batch's content, independent of key order inside ``data`` and ``labels``."""
    content = [
        [row["type"], row["timestamp_ms"], json.loads(row["data"]), json.loads(row["labels"])]
        for row in rows
    ]
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_ids(ctx: Context, agent_id: str, run_id: str) -> None:
    v.require_id(agent_id, "agent_id")
    v.require_id(run_id, "run_id")
    ctx.limits.check_id(agent_id, "agent_id")
    ctx.limits.check_id(run_id, "run_id")


def load_memory(ctx: Context, agent_id: str, run_id: str) -> Snapshot:
    """Every memory event of an agent's run, in append order; none for an unknown run."""
    v.require_id(agent_id, "agent_id")
    v.require_id(run_id, "run_id")

    def operation(tx: Tx) -> Snapshot:
        _refuse_purged(tx, run_id)
        rows = tx.dialect.fetch_all(
            tx.conn, _SELECT_EVENTS, {"agent_id": agent_id, "run_id": run_id}
        )
        return Snapshot(
            agent_id=agent_id,
            run_id=run_id,
            events=[
                MemoryEvent(
                    type=type_,
                    timestamp=from_millis(timestamp_ms),
                    data=_decode(data),
                    labels={} if labels == "{}" else _decode(labels),
                )
                for type_, timestamp_ms, data, labels in rows
            ],
        )

    return ctx.uow.read(operation)


def append_memory_events(
    ctx: Context, agent_id: str, run_id: str, events: Sequence[MemoryEvent], idempotency_key: str
) -> None:
    """Append memory events atomically; none is a no-op."""
    _check_ids(ctx, agent_id, run_id)
    ctx.limits.check_id(idempotency_key, "idempotency_key")
    v.optional_text(idempotency_key, "idempotency_key")
    rows = [
        memory_row(agent_id, run_id, event, index, ctx.limits) for index, event in enumerate(events)
    ]
    if not rows:
        return
    key = idempotency_key or uuid.uuid4().hex
    digest = _digest(rows)

    def operation(tx: Tx) -> None:
        _refuse_purged(tx, run_id)
        batch = {"agent_id": agent_id, "run_id": run_id, "idempotency_key": key}
        accepted = tx.conn.execute(_SELECT_BATCH, batch).first()
        if accepted is not None:
            if accepted.digest is not None and accepted.digest != digest:
                raise EventConflictError(
                    f"idempotency key {key!r} of run {run_id!r} was used for other events",
                    run_id=run_id,
                    event_key=key,
                )
            return
        tx.conn.execute(_INSERT_BATCH, {**batch, "appended_at_ms": tx.now_ms, "digest": digest})
        tx.conn.execute(_INSERT_EVENTS, rows)

    ctx.uow.write(operation)


def _mapping_as_dict(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json_text(data: Mapping[str, Any], what: str) -> str:
    try:
        return json.dumps(
            dict(data),
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
            default=_mapping_as_dict,
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidArgumentError(f"{what} is not JSON: {exc}") from None


def memory_row(
    agent_id: str, run_id: str, event: MemoryEvent, index: int, limits: Limits
) -> dict[str, Any]:
    """The ``memory_events`` row of a valid event (section 9); also checks imported ones."""
    what = f"events[{index}]"
    if not isinstance(event, MemoryEvent):
        raise InvalidArgumentError(f"{what} must be a MemoryEvent")
    if event.type not in MEMORY_EVENT_TYPES:
        raise InvalidArgumentError(
            f"{what}.type must be one of {sorted(MEMORY_EVENT_TYPES)}, not {event.type!r}"
        )
    if not isinstance(event.data, Mapping):
        raise InvalidArgumentError(f"{what}.data must be a JSON object")
    check_value_depth(event.data, f"{what}.data")  # before json.dumps recurses into it (2.8)
    data = _json_text(event.data, f"{what}.data")
    check_unicode(data, f"{what}.data")
    limits.check_data_size(len(data.encode()), f"{what}.data")
    limits.check_labels(event.labels, f"{what}.labels")
    labels = v.check_labels(event.labels, f"{what}.labels")
    return {
        "agent_id": agent_id,
        "run_id": run_id,
        "type": event.type,
        "timestamp_ms": to_millis(event.timestamp, f"{what}.timestamp"),
        "data": data,
        "labels": v.labels_json(labels),
    }
