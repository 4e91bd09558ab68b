"""Retention (CONTRACT.md 11.4): sessionless tombstones and the ended-sessions index.

A sessionless run deleted by retention leaves a run tombstone without a session, so its
ID stays reserved as a purged session's run IDs do: ``run_tombstones.session_id`` becomes
nullable. ``ix_sessions_status_ended`` makes the ended sessions older than a cutoff one
index range.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # SQLite cannot change a column's nullability in place: batch mode copies the table.
    with op.batch_alter_table("run_tombstones") as batch:
        batch.alter_column("session_id", existing_type=sa.Text(), nullable=True)
    op.create_index("ix_sessions_status_ended", "sessions", ["status", "ended_at_ms", "session_id"])


def downgrade() -> None:
    op.drop_index("ix_sessions_status_ended", table_name="sessions")
    # Sessionless tombstones have no session to keep: their IDs are no longer reserved.
    op.execute("DELETE FROM run_tombstones WHERE session_id IS NULL")
    with op.batch_alter_table("run_tombstones") as batch:
        batch.alter_column("session_id", existing_type=sa.Text(), nullable=False)
