"""Transcript prefix reads (CONTRACT.md 12.3): a partial index of the transcript records.

``list_run_transcript_records`` reads a run's ``transcript_messages_seeded`` and
``transcript_messages_appended`` records in record order between two record IDs. The
primary key ``(run_id, seq)`` serves that range but visits every record of it, whatever its
type; this index holds the transcript records only, so a page is one index range of at
most ``limit + 2`` entries however many tool calls and notes lie between them. The types
are literals in the predicate and in the store's statement (``schema.TRANSCRIPT_RECORD``),
so both databases match the two, prepared or not.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Frozen here (a migration never reads the package); sorted, as ``schema.py`` writes it.
_TRANSCRIPT_RECORD = sa.text(
    "type IN ('transcript_messages_appended', 'transcript_messages_seeded')"
)


def upgrade() -> None:
    op.create_index(
        "ix_run_records_transcript",
        "run_records",
        ["run_id", "seq"],
        sqlite_where=_TRANSCRIPT_RECORD,
        postgresql_where=_TRANSCRIPT_RECORD,
    )


def downgrade() -> None:
    op.drop_index("ix_run_records_transcript", table_name="run_records")
