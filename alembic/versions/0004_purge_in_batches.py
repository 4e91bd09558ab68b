"""Purge in batches: records and checkpoints may outlive their run row until purged.

A purge now ends the session and moves its runs to tombstones in one short transaction,
then deletes the runs' records and checkpoints in batches of short transactions, so it
never holds the write lock (SQLite) or the session for long. Until the last batch the
records of a tombstoned run have no run row: the foreign keys to ``runs`` go, and
tombstones are found by session.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 06:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # SQLite cannot drop a constraint in place: batch mode copies the table.
    with op.batch_alter_table("run_records") as batch:
        batch.drop_constraint(op.f("fk_run_records_run_id_runs"), type_="foreignkey")
    with op.batch_alter_table("checkpoints") as batch:
        batch.drop_constraint(op.f("fk_checkpoints_run_id_runs"), type_="foreignkey")
    op.create_index(
        op.f("ix_run_tombstones_session_id"), "run_tombstones", ["session_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_run_tombstones_session_id"), table_name="run_tombstones")
    with op.batch_alter_table("checkpoints") as batch:
        batch.create_foreign_key(op.f("fk_checkpoints_run_id_runs"), "runs", ["run_id"], ["run_id"])
    with op.batch_alter_table("run_records") as batch:
        batch.create_foreign_key(op.f("fk_run_records_run_id_runs"), "runs", ["run_id"], ["run_id"])
