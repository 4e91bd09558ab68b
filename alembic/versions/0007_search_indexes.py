"""Finding sessions and runs (CONTRACT.md 11.1): keyset indexes and ``run_labels``.

Sessions and runs are listed newest first, ties by ID ascending. Each filter (session,
parent, agent, or none) heads an index whose next column is the status, then the start
time descending and the ID: every status is one index range, and a page merges the ranges
of the statuses asked for. ``run_labels`` holds one row per label of a run, so a label
filter is an index range too; it is backfilled from ``runs.labels``. The old
``(session_id, status)`` and ``(parent_run_id)`` indexes are prefixes of the new ones.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 04:00:00.000000
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_DESC = sa.literal_column


def upgrade() -> None:
    labels = op.create_table(
        "run_labels",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("started_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "key", name=op.f("pk_run_labels")),
    )
    _backfill_labels(labels)
    op.create_index(
        "ix_run_labels_key_value_started",
        "run_labels",
        ["key", "value", _DESC("started_at_ms DESC"), "run_id"],
    )
    with op.batch_alter_table("runs") as batch:
        batch.drop_index(batch.f("ix_runs_parent_run_id"))
        batch.drop_index(batch.f("ix_runs_session_id_status"))
        for name, head in (
            ("ix_runs_agent_status_started", ["agent_id", "status"]),
            ("ix_runs_parent_status_started", ["parent_run_id", "status"]),
            ("ix_runs_session_status_started", ["session_id", "status"]),
            ("ix_runs_status_started", ["status"]),
        ):
            batch.create_index(name, [*head, _DESC("started_at_ms DESC"), "run_id"])
    op.create_index(
        "ix_sessions_status_created",
        "sessions",
        ["status", _DESC("created_at_ms DESC"), "session_id"],
    )


def _backfill_labels(labels: sa.Table) -> None:
    conn = op.get_bind()
    runs = sa.table(
        "runs",
        sa.column("run_id", sa.Text()),
        sa.column("labels", sa.Text()),
        sa.column("started_at_ms", sa.BigInteger()),
    )
    rows = conn.execute(
        sa.select(runs.c.run_id, runs.c.labels, runs.c.started_at_ms).where(runs.c.labels != "{}")
    ).all()
    # Keys and values as JSON string literals, as the store writes them (rows.label_text).
    values = [
        {
            "run_id": run_id,
            "key": json.dumps(key, ensure_ascii=False),
            "value": json.dumps(value, ensure_ascii=False),
            "started_at_ms": started_at_ms,
        }
        for run_id, text, started_at_ms in rows
        for key, value in json.loads(text).items()
    ]
    for start in range(0, len(values), 1000):
        conn.execute(labels.insert(), values[start : start + 1000])


def downgrade() -> None:
    op.drop_index("ix_sessions_status_created", table_name="sessions")
    with op.batch_alter_table("runs") as batch:
        for name in (
            "ix_runs_status_started",
            "ix_runs_session_status_started",
            "ix_runs_parent_status_started",
            "ix_runs_agent_status_started",
        ):
            batch.drop_index(name)
        batch.create_index(batch.f("ix_runs_session_id_status"), ["session_id", "status"])
        batch.create_index(batch.f("ix_runs_parent_run_id"), ["parent_run_id"])
    op.drop_index("ix_run_labels_key_value_started", table_name="run_labels")
    op.drop_table("run_labels")
