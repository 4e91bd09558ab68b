"""One round trip for a run start and a terminal write on PostgreSQL (issue 18).

Two functions in the manner of ``runtime_store_append_record`` (migration 0010), which the
store sends in autocommit (no ``BEGIN``, no ``COMMIT``). Each does its operation's common
path and nothing else; whenever any rule would not let the write through unchanged it
writes nothing and answers ``refused``, and ``SqlStore`` runs its ordinary transaction,
which checks in the contract's order and raises the contract's error (or, if the state
changed in between, does whatever that state calls for).

* ``runtime_store_start_run`` (3.3-3.6): takes the start's lock (the session's row; for a
  one-shot child its parent's row) and, in an *active* session or none, starts a run whose
  ID was never used (no run, no tombstone): for a child first the ``child_run_linked``
  record on its parent (which must be running, of the start's session, the link record's
  owner, with the link's key free), then the run row, its label rows, the ``run_started``
  record with record ID 1, the next session positions and the session's counter. It
  refuses an unknown, ended or purged session, a parent that fails a check and an ID in
  use, so retries, stops in an ended session and every error take the transaction; the
  store never sends it a continuation (the predecessor's checks stay in Python).
* ``runtime_store_finish_run`` (3.10): takes the run's writers' lock (its session's row
  through the run; a sessionless run's own row) and, when the ``run_completed`` record
  passes the run's checks (labels, cancellation reason, owner), either answers ``stored``
  for the same record already stored under its key on a run already in that status (an
  exact retry), or finishes a *running* run: status, terminal key, ``updated_at``, the
  record with the next record ID and session position, and both counters.

The statement-level NOTIFY trigger of migration 0008 fires on each record insert as
before. SQLite has no such functions and keeps its path.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 17:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(source("runtime_store_start_run", revision))
    op.execute(source("runtime_store_finish_run", revision))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "DROP FUNCTION runtime_store_start_run(text, text, text, text, bigint, text, text[], "
        "text[], bigint, text, text, text, bytea, bigint, text, text, text, text, bytea, bigint)"
    )
    op.execute(
        "DROP FUNCTION runtime_store_finish_run"
        "(text, text, text, text, bigint, text, text, text, text, text, bytea, bigint)"
    )
