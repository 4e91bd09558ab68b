"""One successor per predecessor (3.13); memory idempotency keys are exact (2.7).

``runs.successor_run_id`` remembers the continuation admitted for a suspended run. Runs
started before it was kept are backfilled from their ``run_started`` payloads: the first
continuation of each predecessor (by start time, then run ID) becomes its successor; a
second one, which the store no longer admits, is left for ``db verify`` to report.

``memory_batches.digest`` lets a repeated idempotency key with other events be refused;
batches accepted before it was kept have none and stay plain no-ops. The ``run_id``
indexes let a purge delete the memory of its session's runs.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 03:17:24.172315
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("memory_batches") as batch:
        batch.add_column(sa.Column("digest", sa.String(length=64), nullable=True))
        batch.create_index(batch.f("ix_memory_batches_run_id"), ["run_id"], unique=False)
    with op.batch_alter_table("memory_events") as batch:
        batch.create_index(batch.f("ix_memory_events_run_id_id"), ["run_id", "id"], unique=False)
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("successor_run_id", sa.Text(), nullable=True))
    _backfill_successors()


def _backfill_successors() -> None:
    conn = op.get_bind()
    runs = sa.table(
        "runs",
        sa.column("run_id", sa.Text()),
        sa.column("started_at_ms", sa.BigInteger()),
        sa.column("start_key", sa.Text()),
        sa.column("successor_run_id", sa.Text()),
    )
    records = sa.table(
        "run_records",
        sa.column("run_id", sa.Text()),
        sa.column("event_key", sa.Text()),
        sa.column("type", sa.Text()),
        sa.column("payload", sa.LargeBinary()),
    )
    started = conn.execute(
        sa.select(runs.c.run_id, records.c.payload)
        .select_from(
            runs.join(
                records,
                sa.and_(records.c.run_id == runs.c.run_id, records.c.event_key == runs.c.start_key),
            )
        )
        .where(records.c.type == "run_started")
        .order_by(runs.c.started_at_ms, runs.c.run_id)
        .execution_options(yield_per=1000)
    )
    successors: dict[str, str] = {}
    for run_id, payload in started:
        try:
            predecessor = json.loads(bytes(payload)).get("PredecessorRunID") or ""
        except (ValueError, AttributeError):
            continue  # db verify reports an unreadable run_started
        if isinstance(predecessor, str) and predecessor:
            successors.setdefault(predecessor, run_id)
    update = (
        runs.update()
        .where(runs.c.run_id == sa.bindparam("predecessor"))
        .values(successor_run_id=sa.bindparam("successor"))
    )
    rows = [{"predecessor": p, "successor": s} for p, s in successors.items()]
    for start in range(0, len(rows), 1000):
        conn.execute(update, rows[start : start + 1000])


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("successor_run_id")
    with op.batch_alter_table("memory_events") as batch:
        batch.drop_index(batch.f("ix_memory_events_run_id_id"))
    with op.batch_alter_table("memory_batches") as batch:
        batch.drop_index(batch.f("ix_memory_batches_run_id"))
        batch.drop_column("digest")
