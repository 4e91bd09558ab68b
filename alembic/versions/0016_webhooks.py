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
FUNCTIONS: Final = {
    "runtime_store_finish_run": """\
CREATE OR REPLACE FUNCTION runtime_store_finish_run(
    p_run_id text, p_status text, p_labels text, p_cancellation_reasons text[],
    p_now_ms bigint, p_event_key text, p_agent_id text, p_session_id text, p_turn_id text,
    p_type text, p_payload bytea, p_timestamp_ms bigint, p_event_type text,
    OUT outcome text, OUT record_id bigint, OUT session_status text)
LANGUAGE plpgsql AS $$
DECLARE
    s_id text;
    s_status text;
    s_count bigint;
    run runs%ROWTYPE;
    stored run_records%ROWTYPE;
BEGIN
    outcome := 'refused';
    -- The writers' lock: the session's row through the run, else the sessionless run's own.
    SELECT sessions.session_id, sessions.status, sessions.record_count
      INTO s_id, s_status, s_count
      FROM sessions JOIN runs ON runs.session_id = sessions.session_id
     WHERE runs.run_id = p_run_id
       FOR UPDATE OF sessions;
    IF FOUND THEN
        IF s_status = 'purged' THEN
            RETURN;
        END IF;
        SELECT * INTO run FROM runs WHERE runs.run_id = p_run_id;
    ELSE
        SELECT * INTO run FROM runs WHERE runs.run_id = p_run_id FOR UPDATE;
        IF NOT FOUND OR run.session_id IS NOT NULL THEN
            RETURN;
        END IF;
    END IF;
    -- The run as the store's Python rules expect it (app/domain/commands.py): the record's
    -- labels, a stored cancellation reason the record accepts (any, when the array is
    -- NULL), running or already in this status (a retry), the record's owner.
    IF run.labels <> p_labels
       OR run.cancellation_reason <> ALL (p_cancellation_reasons)
       OR (run.status <> 'running' AND run.status <> p_status)
       OR run.agent_id IS DISTINCT FROM p_agent_id
       OR run.session_id IS DISTINCT FROM p_session_id THEN
        RETURN;
    END IF;
    SELECT * INTO stored FROM run_records
     WHERE run_records.run_id = p_run_id AND run_records.event_key = p_event_key;
    IF FOUND THEN
        IF stored.agent_id = p_agent_id
           AND stored.session_id IS NOT DISTINCT FROM p_session_id
           AND stored.turn_id = p_turn_id
           AND stored.type = p_type
           AND stored.timestamp_ms = p_timestamp_ms
           AND stored.payload = p_payload THEN
            outcome := 'stored';
            record_id := stored.seq;
            session_status := s_status;
        END IF;
        RETURN;
    END IF;
    IF run.status <> 'running' THEN
        RETURN;
    END IF;
    -- A subscription wants this change's event (CONTRACT.md 13.2): the Python path writes
    -- the change with its outbox rows. Read in this statement, so a subscription that
    -- another replica committed first is never missed.
    IF EXISTS (SELECT 1 FROM webhook_event_types
                WHERE webhook_event_types.event_type = p_event_type) THEN
        RETURN;
    END IF;
    UPDATE runs
       SET status = p_status, terminal_key = p_event_key, updated_at_ms = p_now_ms,
           record_count = run.record_count + 1
     WHERE runs.run_id = p_run_id;
    IF s_id IS NOT NULL THEN
        UPDATE sessions SET record_count = s_count + 1 WHERE sessions.session_id = s_id;
    END IF;
    INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                             turn_id, type, payload, timestamp_ms)
    VALUES (p_run_id, run.record_count + 1, p_event_key, p_agent_id, p_session_id,
            CASE WHEN s_id IS NULL THEN NULL ELSE s_count + 1 END,
            p_turn_id, p_type, p_payload, p_timestamp_ms);
    outcome := 'inserted';
    record_id := run.record_count + 1;
    session_status := s_status;
END
$$
""",
}

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
        for source in FUNCTIONS.values():
            op.execute(source)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP FUNCTION {_NEW_FINISH}")
        from importlib.util import module_from_spec, spec_from_file_location
        from pathlib import Path

        path = Path(__file__).with_name("0013_fast_path_sources.py")
        spec = spec_from_file_location("revision_0013", path)
        assert spec is not None
        assert spec.loader is not None
        previous = module_from_spec(spec)
        spec.loader.exec_module(previous)
        op.execute(previous.FUNCTIONS["runtime_store_finish_run"])
    for table in ("webhook_deliveries", "webhook_events", "webhook_event_types", "webhooks"):
        op.drop_table(table)
