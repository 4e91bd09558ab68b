"""Initial schema: sessions, runs, tombstones, checkpoints, run records, memory.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 03:07:20.950134
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_events")),
    )
    op.create_index(
        op.f("ix_memory_events_agent_id_run_id_id"),
        "memory_events",
        ["agent_id", "run_id", "id"],
        unique=False,
    )
    op.create_table(
        "sessions",
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("ended_at_ms", sa.BigInteger(), nullable=True),
        sa.Column("purged_at_ms", sa.BigInteger(), nullable=True),
        sa.Column("record_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.CheckConstraint(
            "status IN ('active', 'ended', 'purged')", name=op.f("ck_sessions_status")
        ),
        sa.PrimaryKeyConstraint("session_id", name=op.f("pk_sessions")),
    )
    op.create_table(
        "run_tombstones",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
            name=op.f("fk_run_tombstones_session_id_sessions"),
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_tombstones")),
    )
    op.create_table(
        "runs",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("parent_run_id", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("start_outcome", sa.String(length=8), nullable=False),
        sa.Column("started_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("labels", sa.Text(), server_default="{}", nullable=False),
        sa.Column("cancellation_reason", sa.Text(), nullable=False),
        sa.Column("record_count", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("start_key", sa.Text(), nullable=False),
        sa.Column("parent_link_key", sa.Text(), nullable=True),
        sa.Column("cancellation_key", sa.Text(), nullable=True),
        sa.Column("suspension_key", sa.Text(), nullable=True),
        sa.Column("terminal_key", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "start_outcome IN ('proceed', 'stop')", name=op.f("ck_runs_start_outcome")
        ),
        sa.CheckConstraint(
            "status IN ('running', 'suspended', 'completed', 'failed', 'canceled')",
            name=op.f("ck_runs_status"),
        ),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.session_id"], name=op.f("fk_runs_session_id_sessions")
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_runs")),
    )
    op.create_index(op.f("ix_runs_parent_run_id"), "runs", ["parent_run_id"], unique=False)
    op.create_index(
        op.f("ix_runs_session_id_started_at_ms_run_id"),
        "runs",
        ["session_id", "started_at_ms", "run_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_runs_session_id_status"), "runs", ["session_id", "status"], unique=False
    )
    op.create_table(
        "checkpoints",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("checkpoint_id", sa.Text(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=op.f("fk_checkpoints_run_id_runs")
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_checkpoints")),
    )
    op.create_table(
        "run_records",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("event_key", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("session_seq", sa.BigInteger(), nullable=True),
        sa.Column("turn_id", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=op.f("fk_run_records_run_id_runs")
        ),
        sa.PrimaryKeyConstraint("run_id", "seq", name=op.f("pk_run_records")),
        sa.UniqueConstraint("run_id", "event_key", name=op.f("uq_run_records_run_id_event_key")),
        sa.UniqueConstraint(
            "session_id", "session_seq", name=op.f("uq_run_records_session_id_session_seq")
        ),
    )


def downgrade() -> None:
    op.drop_table("run_records")
    op.drop_table("checkpoints")
    op.drop_index(op.f("ix_runs_session_id_status"), table_name="runs")
    op.drop_index(op.f("ix_runs_session_id_started_at_ms_run_id"), table_name="runs")
    op.drop_index(op.f("ix_runs_parent_run_id"), table_name="runs")
    op.drop_table("runs")
    op.drop_table("run_tombstones")
    op.drop_table("sessions")
    op.drop_index(op.f("ix_memory_events_agent_id_run_id_id"), table_name="memory_events")
    op.drop_table("memory_events")
