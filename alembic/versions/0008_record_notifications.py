"""Record notifications: PostgreSQL tells live-tail listeners what each commit wrote.

A statement-level trigger on ``run_records`` sends one ``NOTIFY runtime_store_records``
per (session, run) a statement inserted, and a trigger on ``sessions`` one per purge. The
notifications are part of the writing transaction, so they are delivered at its commit
and never for a rollback; PostgreSQL folds duplicates within a transaction. The payload is
``session_id<US>run_id`` (``""`` for a sessionless run's session, ``""`` run for a purge).
SQLite has no such thing: its listeners poll (``app.storage.live_tail.notifications``).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 09:10:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHANNEL = "runtime_store_records"

_RECORDS_FUNCTION = f"""
CREATE FUNCTION runtime_store_notify_records() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', coalesce(session_id, '') || chr(31) || run_id)
    FROM (SELECT DISTINCT session_id, run_id FROM inserted_records) AS written;
    RETURN NULL;
END
$$
"""

_PURGE_FUNCTION = f"""
CREATE FUNCTION runtime_store_notify_purge() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', NEW.session_id || chr(31));
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_RECORDS_FUNCTION)
    op.execute(
        "CREATE TRIGGER run_records_notify AFTER INSERT ON run_records "
        "REFERENCING NEW TABLE AS inserted_records "
        "FOR EACH STATEMENT EXECUTE FUNCTION runtime_store_notify_records()"
    )
    op.execute(_PURGE_FUNCTION)
    op.execute(
        "CREATE TRIGGER sessions_notify_purge AFTER UPDATE OF status ON sessions "
        "FOR EACH ROW WHEN (NEW.status = 'purged' AND OLD.status <> 'purged') "
        "EXECUTE FUNCTION runtime_store_notify_purge()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS sessions_notify_purge ON sessions")
    op.execute("DROP FUNCTION IF EXISTS runtime_store_notify_purge()")
    op.execute("DROP TRIGGER IF EXISTS run_records_notify ON run_records")
    op.execute("DROP FUNCTION IF EXISTS runtime_store_notify_records()")
