"""One round trip per batch append on PostgreSQL (issue 18, CONTRACT.md 11.2).

``runtime_store_append_records`` is ``runtime_store_append_record`` (migration 0010) for a
batch of one run's records, set-based: the store sends it in autocommit with the batch as
arrays (one element per distinct event key, in input order; the store answers a repeated
key from its first occurrence itself). It takes the same writers' lock (the session's row
through the run; a sessionless run's own row), reads the run, and reads the records stored
under all the batch's keys in one join. Then it either

* answers ``done`` with every record's ID and whether it was inserted: a key already
  holding the same record keeps its original ID; the new records get the next record IDs
  and session positions in input order, inserted by one ``INSERT … SELECT`` (so the
  statement-level NOTIFY trigger of migration 0008 fires once), the run's and the session's
  counters moved by the number inserted; or
* writes nothing and answers ``refused`` whenever any rule would not let the whole batch
  through unchanged: no such run, a purged session, another owner, another record under a
  key, a new record for a run that is not running. ``SqlStore`` then runs its ordinary
  transaction, which applies the append check record by record in the contract's order and
  raises the contract's error naming the failing record (or, if the state changed in
  between, does whatever that state calls for).

SQLite has no such function and keeps its path.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 14:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(source("runtime_store_append_records", revision))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "DROP FUNCTION runtime_store_append_records"
        "(text, text, text, text[], text[], text[], bytea[], bigint[])"
    )
