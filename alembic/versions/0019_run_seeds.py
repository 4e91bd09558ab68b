"""Run seeds and preparations (CONTRACT.md 15).

* ``seed_operations``: one per seed-bound run ID (its owner, its published attempt);
  ``seed_attempts``: each candidate upload with its state and counters; ``seed_records``:
  the attempts' records, numbered per attempt.
* ``runs.seed_end_id``: the seed history end a run's first start attached ("" for none).
* PostgreSQL: ``runtime_store_start_run`` takes the run ID's lock that seed writes take and
  refuses (writing nothing) when the run ID is seed-bound, so the Python path answers
  every start of such a run ID with the seed check.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 08:00:00.000000
"""

from collections.abc import Sequence
from typing import Final

import sqlalchemy as sa
from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The fast path's functions this revision changes, as it leaves them, by name.
FUNCTIONS: Final = ("runtime_store_start_run",)


def upgrade() -> None:
    op.add_column("runs", sa.Column("seed_end_id", sa.Text(), nullable=False, server_default=""))
    op.create_table(
        "seed_operations",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("command_id", sa.Text(), nullable=False),
        sa.Column("published_attempt_id", sa.Text(), nullable=True),
        sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
            name="fk_seed_operations_session_id_sessions",
        ),
        sa.PrimaryKeyConstraint("run_id", name="pk_seed_operations"),
    )
    op.create_index(
        "ix_seed_operations_session_id_updated_at_ms",
        "seed_operations",
        ["session_id", "updated_at_ms"],
    )
    op.create_table(
        "seed_attempts",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("attempt_id", sa.Text(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("declaration", sa.Text(), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("history_end", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("body_end", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("prepared_bytes", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("prefix_id", sa.BigInteger(), nullable=True),
        sa.Column("literal_open", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.CheckConstraint(
            "state IN ('open', 'published', 'abandoned')", name="ck_seed_attempts_state"
        ),
        sa.PrimaryKeyConstraint("run_id", "attempt_id", name="pk_seed_attempts"),
    )
    op.create_table(
        "seed_records",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("attempt_id", sa.Text(), nullable=False),
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("final", sa.Boolean(), nullable=True),
        sa.Column("wire_size", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "attempt_id", "id", name="pk_seed_records"),
        sa.UniqueConstraint(
            "run_id", "attempt_id", "key", name="uq_seed_records_run_id_attempt_id_key"
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        for name in FUNCTIONS:
            op.execute(source(name, revision))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(source("runtime_store_start_run", "0012"))
    op.drop_table("seed_records")
    op.drop_table("seed_attempts")
    op.drop_index("ix_seed_operations_session_id_updated_at_ms", table_name="seed_operations")
    op.drop_table("seed_operations")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("seed_end_id")
