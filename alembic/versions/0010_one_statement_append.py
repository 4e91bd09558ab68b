"""One round trip per append on PostgreSQL (issue 18).

``runtime_store_append_record`` does what ``SqlStore.append_run_record`` does on its common
paths, in one statement the store sends in autocommit (no ``BEGIN``, no ``COMMIT``): it
takes the lock that serialises the run's writers (its session's row, found through the run;
a sessionless run's own row), reads the run and the record stored under the event key, and
then either

* answers ``stored`` with the record's ID when the same record is already stored (an exact
  retry, 2.2; also on a stopped run),
* inserts the record with the next record ID and session position, moving the run's and
  the session's counters as the fused statement does (``inserted``), or
* writes nothing and answers ``refused`` whenever any rule would not let the append through
  unchanged: no such run, a purged session, another owner, another record under the key, a
  terminal run. ``SqlStore`` then runs its ordinary transaction, which applies the append
  check in the contract's order and raises the contract's error (or, if the state changed
  in between, does whatever that state calls for).

The statement-level NOTIFY trigger of migration 0008 fires on the insert as before. SQLite
has no such function and keeps its path.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 12:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(source("runtime_store_append_record", revision))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "DROP FUNCTION runtime_store_append_record"
        "(text, text, text, text, text, text, bytea, bigint)"
    )
