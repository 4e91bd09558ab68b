"""PostgreSQL's fast path contained (issue 28): its functions as their ``.sql`` files say.

The source of each fast-path function is a versioned file,
``app/storage/fast_path/sql/<name>/<revision>.sql``, which the migration that creates that
version executes by name and which is never edited afterwards. Changes against 0010-0012:

* ``runtime_store_finish_run`` no longer spells the cancellation-provenance rule in SQL
  (``COALESCE(NULLIF(reason, ''), 'engine_canceled')``): the store passes the stored
  reasons the ``run_completed`` accepts, computed by ``app/domain/commands.py``, as
  ``p_cancellation_reasons`` (NULL: any), and the function only compares.
* The store calls every function with named arguments.

``tests/storage/test_fast_path_source.py`` checks that every version a migration runs
exists and keeps its digest, and that a migrated database holds the latest versions.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 07:40:00.000000
"""

from collections.abc import Sequence
from typing import Final

from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_FINISH: Final = (
    "runtime_store_finish_run"
    "(text, text, text, text, bigint, text, text, text, text, text, bytea, bigint)"
)
_NEW_FINISH: Final = (
    "runtime_store_finish_run"
    "(text, text, text, text[], bigint, text, text, text, text, text, bytea, bigint)"
)

#: The fast path's functions this revision changes (the other three are unchanged).
FUNCTIONS: Final = ("runtime_store_finish_run",)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"DROP FUNCTION {_OLD_FINISH}")
    for name in FUNCTIONS:
        op.execute(source(name, revision))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"DROP FUNCTION {_NEW_FINISH}")
    # The other three are unchanged in substance; 0012's terminal function comes back.
    op.execute(source("runtime_store_finish_run", down_revision))
