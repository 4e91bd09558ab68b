"""Import claims (CONTRACT.md 2.10, 11.4).

An SQLite import publishes its records in slices, each a short transaction, and claims its
session and run IDs meanwhile (``app/storage/unit_of_work/import_holds.py``). Nothing else changes.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 19:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "import_claims",
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("claimed_id", sa.Text(), nullable=False),
        sa.Column("import_id", sa.Text(), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "claimed_id", name="pk_import_claims"),
    )
    op.create_index("ix_import_claims_import_id", "import_claims", ["import_id"])


def downgrade() -> None:
    op.drop_index("ix_import_claims_import_id", table_name="import_claims")
    op.drop_table("import_claims")
