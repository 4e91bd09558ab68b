"""Request digests and start kinds (CONTRACT.md 12.1, 12.2).

``runs.request_digest`` keeps the 32-byte digest a run's first engine start carried (NULL
when it carried none); ``runs.start_kind`` says whether the run was started by a workflow
engine (``engine``, every run before this revision) or synchronously (``synchronous``).
Both are fixed when the run is inserted. The fast path's functions are unchanged: they
insert engine runs without a digest, which the defaults give; a start with a digest and a
synchronous start take the Python path.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("request_digest", sa.LargeBinary(), nullable=True))
        batch.add_column(
            sa.Column("start_kind", sa.String(16), nullable=False, server_default="engine")
        )
        batch.create_check_constraint("start_kind", "start_kind IN ('engine', 'synchronous')")


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("start_kind", type_="check")
        batch.drop_column("start_kind")
        batch.drop_column("request_digest")
