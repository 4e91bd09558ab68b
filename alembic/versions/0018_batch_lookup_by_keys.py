"""A batch's stored-key lookup bounded by the batch's keys (issue 32).

``runtime_store_append_records`` found the records already stored under a batch's keys by
joining the keys to the run's records. PL/pgSQL keeps a generic plan per statement for the
life of a connection; one made while ``run_records`` was small joined by hashing, which
reads every record of the run on every batch, so a batch cost PostgreSQL more the longer
its run grew. The lookup is now one probe of the key index per key (a ``LATERAL``
subquery with ``LIMIT 1``, which no plan turns into a join over the run). Nothing else
changes; ``tests/storage/test_fast_path_plans.py`` proves the bound.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03 23:50:00.000000
"""

from collections.abc import Sequence
from typing import Final

from alembic import op

from app.storage.fast_path.sources import source

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The fast path's functions this revision changes, as it leaves them, by name.
FUNCTIONS: Final = ("runtime_store_append_records",)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name in FUNCTIONS:
            op.execute(source(name, revision))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(source("runtime_store_append_records", "0011"))
