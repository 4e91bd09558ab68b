"""Service keys: the cursor key, shared by every replica through the database.

Page cursors are sealed with an HMAC under this key (``app.domain.cursors``), so a cursor
the store did not issue is refused. Cursors handed out before this revision were not
sealed and are no longer accepted; clients start their lists again.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 03:50:00.000000
"""

import os
import time
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    keys = op.create_table(
        "service_keys",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_service_keys")),
    )
    op.bulk_insert(
        keys,
        [{"name": "cursor", "secret": os.urandom(32), "created_at_ms": int(time.time() * 1000)}],
    )


def downgrade() -> None:
    op.drop_table("service_keys")
