"""The seed tables as the seed operations read and write them (CONTRACT.md 15.1)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from app.domain import seeds
from app.domain.seeds import Attempt, AttemptState, NewSeedRecord, Owner, Variant
from app.domain.state import SessionState
from app.storage.database.tables import (
    run_tombstones,
    seed_attempts,
    seed_operations,
    seed_records,
)
from app.storage.unit_of_work import import_holds
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import SessionPurgedError


def lock(tx: Tx, run_id: str, session_id: str = "") -> SessionState | None:
    """The locks of a seed write, in the order every writer takes them: the session's row
    (a begin or settlement that names one: purges and starts of the session serialise
    with it), then the run ID (15.8). The session's row, ``None`` when there is none."""
    session = tx.session(session_id, lock=True) if session_id else None
    tx.dialect.lock_run_id(tx.conn, run_id)
    return session


def reserved(tx: Tx, run_id: str) -> bool:
    """Whether a purge or retention reserved the run ID (its run or seed was deleted)."""
    query = sa.select(run_tombstones.c.run_id).where(run_tombstones.c.run_id == run_id)
    return tx.conn.execute(query).first() is not None


def reserved_error(run_id: str) -> SessionPurgedError:
    return SessionPurgedError(
        f"run {run_id!r} belonged to a purged session (or was deleted by retention)",
        run_id=run_id,
    )


# --- operations ---------------------------------------------------------------------


def operation(tx: Tx, run_id: str, *, lock: bool = False) -> tuple[Owner, str | None] | None:
    """The run ID's seed operation (its owner, its published attempt ID), or ``None``.
    ``lock``: its row locked (an append or publication, which takes no session lock, waits
    for a purge that deletes the row and then finds it gone)."""
    query = sa.select(
        seed_operations.c.agent_id,
        seed_operations.c.session_id,
        seed_operations.c.command_id,
        seed_operations.c.published_attempt_id,
    ).where(seed_operations.c.run_id == run_id)
    row = tx.conn.execute(query.with_for_update() if lock else query).first()
    if row is None:
        return None
    owner = Owner(agent_id=row.agent_id, session_id=row.session_id or "", command_id=row.command_id)
    return owner, row.published_attempt_id


def bind(tx: Tx, run_id: str, owner: Owner) -> None:
    """Bind the run ID to its operation; ``unavailable`` while an SQLite import that holds
    the ID publishes (its seed records may already be copied: import_holds.py)."""
    if tx.dialect.stages_imports:
        import_holds.check_not_claimed(tx.conn, import_holds.RUN, run_id)
    tx.conn.execute(
        seed_operations.insert().values(
            run_id=run_id,
            agent_id=owner.agent_id,
            session_id=owner.session_id or None,
            command_id=owner.command_id,
            published_attempt_id=None,
            updated_at_ms=tx.now_ms,
        )
    )


def touch(tx: Tx, run_id: str, **changes: Any) -> None:
    """Record a seed write's store-clock time (retention, 15.7), with ``changes``."""
    tx.conn.execute(
        seed_operations.update()
        .where(seed_operations.c.run_id == run_id)
        .values(updated_at_ms=tx.now_ms, **changes)
    )


# --- attempts -----------------------------------------------------------------------


def attempt_from_row(row: Any) -> Attempt:
    declaration = row.declaration
    source = row.source
    return Attempt(
        run_id=row.run_id,
        attempt_id=row.attempt_id,
        state=AttemptState(row.state),
        declaration=None
        if declaration is None
        else seeds.declaration_from_json(json.loads(declaration)),
        source=None if source is None else seeds.prefix_from_json(json.loads(source)),
        history_end=row.history_end,
        body_end=row.body_end,
        prepared_bytes=row.prepared_bytes,
        prefix_id=row.prefix_id,
        literal_open=bool(row.literal_open),
    )


def attempt(tx: Tx, run_id: str, attempt_id: str) -> Attempt | None:
    row = tx.conn.execute(
        sa.select(seed_attempts).where(
            seed_attempts.c.run_id == run_id, seed_attempts.c.attempt_id == attempt_id
        )
    ).first()
    return None if row is None else attempt_from_row(row)


def declared(tx: Tx, run_id: str) -> bool:
    """Whether some attempt of the run ID has a declaration (a tombstone has none)."""
    query = (
        sa.select(seed_attempts.c.attempt_id)
        .where(seed_attempts.c.run_id == run_id, seed_attempts.c.declaration.is_not(None))
        .limit(1)
    )
    return tx.conn.execute(query).first() is not None


def insert_attempt(tx: Tx, attempt: Attempt) -> None:
    tx.conn.execute(
        seed_attempts.insert().values(
            run_id=attempt.run_id,
            attempt_id=attempt.attempt_id,
            state=attempt.state.value,
            declaration=None
            if attempt.declaration is None
            else seeds.canonical(seeds.declaration_json(attempt.declaration)).decode(),
            source=None
            if attempt.source is None
            else seeds.canonical(seeds.prefix_json(attempt.source)).decode(),
            history_end=attempt.history_end,
            body_end=attempt.body_end,
            prepared_bytes=attempt.prepared_bytes,
            prefix_id=attempt.prefix_id,
            literal_open=attempt.literal_open,
        )
    )


def update_attempt(tx: Tx, attempt: Attempt) -> None:
    tx.conn.execute(
        seed_attempts.update()
        .where(
            seed_attempts.c.run_id == attempt.run_id,
            seed_attempts.c.attempt_id == attempt.attempt_id,
        )
        .values(
            state=attempt.state.value,
            history_end=attempt.history_end,
            body_end=attempt.body_end,
            prepared_bytes=attempt.prepared_bytes,
            prefix_id=attempt.prefix_id,
            literal_open=attempt.literal_open,
        )
    )


# --- records ------------------------------------------------------------------------


def record_from_row(row: Any) -> tuple[int, NewSeedRecord]:
    """A ``seed_records`` row as (its position, the record)."""
    return _record_from_row(row)


def _record_from_row(row: Any) -> tuple[int, NewSeedRecord]:
    variant = Variant(row.variant)
    data = bytes(row.data)
    prefix = None
    if variant is Variant.PREFIX:
        prefix = seeds.prefix_from_json(json.loads(data))
    final = None if row.final is None else bool(row.final)
    record = NewSeedRecord(
        key=row.key, previous=row.id - 1, variant=variant, data=data, final=final, prefix=prefix
    )
    return row.id, record


def record_by_key(
    tx: Tx, run_id: str, attempt_id: str, key: str
) -> tuple[int, NewSeedRecord] | None:
    row = tx.conn.execute(
        sa.select(seed_records).where(
            seed_records.c.run_id == run_id,
            seed_records.c.attempt_id == attempt_id,
            seed_records.c.key == key,
        )
    ).first()
    return None if row is None else _record_from_row(row)


def insert_record(
    tx: Tx, run_id: str, attempt_id: str, position: int, record: NewSeedRecord
) -> None:
    tx.conn.execute(
        seed_records.insert().values(
            run_id=run_id,
            attempt_id=attempt_id,
            id=position,
            key=record.key,
            variant=record.variant.value,
            data=record.data,
            final=record.final,
            wire_size=record.wire_size(position),
        )
    )


def record_sizes(
    tx: Tx, run_id: str, attempt_id: str, after: int, last: int, limit: int
) -> Sequence[Any]:
    """(id, wire_size) of up to ``limit`` records after ``after`` through ``last``."""
    return tx.conn.execute(
        sa.select(seed_records.c.id, seed_records.c.wire_size)
        .where(
            seed_records.c.run_id == run_id,
            seed_records.c.attempt_id == attempt_id,
            seed_records.c.id > after,
            seed_records.c.id <= last,
        )
        .order_by(seed_records.c.id)
        .limit(limit)
    ).all()


def records(
    tx: Tx, run_id: str, attempt_id: str, after: int, through: int
) -> list[tuple[int, NewSeedRecord]]:
    rows = tx.conn.execute(
        sa.select(seed_records)
        .where(
            seed_records.c.run_id == run_id,
            seed_records.c.attempt_id == attempt_id,
            seed_records.c.id > after,
            seed_records.c.id <= through,
        )
        .order_by(seed_records.c.id)
    ).all()
    return [_record_from_row(row) for row in rows]
