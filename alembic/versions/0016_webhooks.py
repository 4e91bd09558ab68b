"""Webhooks (CONTRACT.md 13): subscriptions, the outbox and its deliveries.

* ``webhooks``: a subscription (its URL, its secret, which is kept since every delivery is
  signed with it, the event types it wants); ``webhook_event_types``: one row per (event
  type, subscription), so the fan-out of a write is one index range.
* ``webhook_events``: the outbox, one row per event some subscription wanted, written in
  the transaction of its state change; ``webhook_deliveries``: one row per (subscription,
  event), with its status, attempts and due time.
* PostgreSQL: ``runtime_store_finish_run`` takes ``p_event_type`` and refuses (writing
  nothing) when a subscription wants that event, so the Python path writes the terminal
  status with its outbox rows.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 09:00:00.000000
"""

from collections.abc import Sequence
from typing import Final

import sqlalchemy as sa
from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_FINISH: Final = (
    "runtime_store_finish_run"
    "(text, text, text, text[], bigint, text, text, text, text, text, bytea, bigint)"
)
_NEW_FINISH: Final = (
    "runtime_store_finish_run"
    "(text, text, text, text[], bigint, text, text, text, text, text, bytea, bigint, text)"
)

#: The fast path's functions this revision changes, by name.
FUNCTIONS: Final = ("runtime_store_finish_run",)

_BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("webhook_id", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("webhook_id", name="pk_webhooks"),
    )
    op.create_table(
        "webhook_event_types",
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("webhook_id", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("event_type", "webhook_id", name="pk_webhook_event_types"),
    )
    op.create_table(
        "webhook_events",
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("occurred_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name="pk_webhook_events"),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("seq", _BigId, autoincrement=True, nullable=False),
        sa.Column("webhook_id", sa.Text(), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("ordering", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("next_attempt_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("window_start_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_webhook_deliveries"),
        sa.UniqueConstraint(
            "webhook_id", "event_id", name="uq_webhook_deliveries_webhook_id_event_id"
        ),
    )
    for columns in (
        ["status", "next_attempt_at_ms"],
        ["webhook_id", "ordering", "seq"],
        ["webhook_id", "status", "seq"],
        ["event_id"],
    ):
        op.create_index("ix_webhook_deliveries_" + "_".join(columns), "webhook_deliveries", columns)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP FUNCTION {_OLD_FINISH}")
        for name in FUNCTIONS:
            op.execute(source(name, revision))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP FUNCTION {_NEW_FINISH}")
        op.execute(source("runtime_store_finish_run", "0013"))
    for table in ("webhook_deliveries", "webhook_events", "webhook_event_types", "webhooks"):
        op.drop_table(table)
