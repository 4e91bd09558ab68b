"""API tokens: name, role and the keyed hash of each bearer token.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 03:30:32.071097
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at_ms", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(
            "role IN ('admin', 'worker', 'reader')", name=op.f("ck_api_tokens_role")
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("digest", name=op.f("uq_api_tokens_digest")),
    )


def downgrade() -> None:
    op.drop_table("api_tokens")
