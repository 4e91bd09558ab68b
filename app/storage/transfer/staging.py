"""Where an import stages its rows on SQLite (importer.py, CONTRACT.md 2.10 and 11.4).

SQLite has one writer. An import used to hold it for its whole length (a 70 MB file: every
other write of the service waited 16 s). On SQLite an import now writes its rows into a
private temporary database attached to its connection (``ATTACH DATABASE ''`` as
``STAGE``): writing there takes no lock of the store's database, so every other writer
goes on being served while the file is read, checked and staged. Once the whole file has
passed its checks, the import is published in short transactions of the store's database
(``sinks.py``, ``claims.py``): the session and run IDs are checked still free and claimed,
the records copied a slice at a time, then the rest copied and the claims dropped in one,
so the session appears whole or not at all. Detaching the stage deletes it, whether the
import was published or refused; SQLite deletes a temporary database of a process that died
with it.

Each staged table mirrors a live table: the same name, columns, primary key and unique
constraints (a key repeated within the file is refused there as the live table would
refuse it), no foreign keys, defaults or other indexes. Nothing is added to the store's
schema. PostgreSQL imports in one transaction, as before: its row locks stop no other
session's writers.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

from app.storage.database.tables import (
    checkpoints,
    memory_batches,
    memory_events,
    run_labels,
    run_records,
    runs,
    seed_attempts,
    seed_operations,
    seed_records,
)

#: The attached database's name (a schema, to SQLAlchemy).
STAGE: Final = "runtime_store_import"

_stage_metadata = sa.MetaData()


def _mirror(live: sa.Table) -> sa.Table:
    columns = [
        sa.Column(
            column.name,
            column.type,
            primary_key=column.primary_key,
            nullable=column.nullable,
            autoincrement=column.autoincrement,
        )
        for column in live.columns
    ]
    unique = [
        sa.UniqueConstraint(*(column.name for column in constraint.columns))
        for constraint in live.constraints
        if isinstance(constraint, sa.UniqueConstraint)
    ]
    return sa.Table(live.name, _stage_metadata, *columns, *unique, schema=STAGE)


#: Each live table with its staged mirror, in the order the publish copies them: runs
#: after their session (inserted first), memory events in the order they were staged
#: (their ``id``, given by the stage in file order); the seeds' (CONTRACT.md 15.7) last.
STAGED: Final[dict[sa.Table, sa.Table]] = {
    live: _mirror(live)
    for live in (
        runs,
        run_labels,
        checkpoints,
        run_records,
        memory_events,
        memory_batches,
        seed_operations,
        seed_attempts,
        seed_records,
    )
}


def create_stage(conn: sa.Connection) -> None:
    """The staged tables, in the attached stage (inside a transaction of ``conn``)."""
    _stage_metadata.create_all(conn)
