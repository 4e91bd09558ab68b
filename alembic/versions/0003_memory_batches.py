"""Memory batches: the idempotency keys of accepted memory appends.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 04:04:10.421793
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_batches",
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("idempotency_key", sa.Text(), nullable=False),
        sa.Column("appended_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "agent_id", "run_id", "idempotency_key", name=op.f("pk_memory_batches")
        ),
    )


def downgrade() -> None:
    op.drop_table("memory_batches")
