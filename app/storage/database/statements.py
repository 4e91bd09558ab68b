"""The unit of work's prebuilt statements, every value a bind parameter.

Built once: SQLAlchemy then reuses their compiled form and cache key instead of rebuilding
both on every call (the hot paths run several per operation). The UPDATE statements and
the fused append take their columns from the tables (``MUTABLE`` columns, every record
column), never from a hand-written list.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY

from app.storage.database.raw_statements import DriverStatement
from app.storage.database.row_mapping import (
    NEW_RECORD_FIELDS,
    PREFIXED_RECORD_COLUMNS,
    RUN_MUTABLE,
    SESSION_MUTABLE,
)
from app.storage.database.tables import (
    checkpoints,
    run_labels,
    run_records,
    run_tombstones,
    runs,
    sessions,
)

_P = sa.bindparam

SELECT_SESSION: Final = sa.select(sessions).where(sessions.c.session_id == _P("session_id"))
LOCK_SESSION: Final = SELECT_SESSION.with_for_update()
SELECT_RUN: Final = sa.select(runs).where(runs.c.run_id == _P("run_id"))
LOCK_RUN: Final = SELECT_RUN.with_for_update()
#: PostgreSQL: the unlocked read of a run (``load_run``) on the driver connection.
SELECT_RUN_DRIVER: Final = DriverStatement(SELECT_RUN)
SELECT_TOMBSTONE: Final = sa.select(run_tombstones.c.run_id).where(
    run_tombstones.c.run_id == _P("run_id")
)
#: PostgreSQL: the lock that serialises the writers of a sessionful run, found through it.
LOCK_SESSION_OF_RUN: Final = DriverStatement(
    sa.select(sessions)
    .join(runs, runs.c.session_id == sessions.c.session_id)
    .where(runs.c.run_id == _P("run_id"))
    .with_for_update(of=sessions)
)
_RUN_AND_RECORD = (
    sa.select(runs, *PREFIXED_RECORD_COLUMNS)
    .select_from(
        runs.outerjoin(
            run_records,
            sa.and_(
                run_records.c.run_id == runs.c.run_id,
                run_records.c.event_key == _P("event_key"),
            ),
        )
    )
    .where(runs.c.run_id == _P("run_id"))
)
#: A run with the record stored under an event key (if any): the append check's one read.
SELECT_RUN_AND_RECORD: Final = DriverStatement(_RUN_AND_RECORD)
LOCK_RUN_AND_RECORD: Final = _RUN_AND_RECORD.with_for_update(of=runs)
SELECT_RECORD: Final = sa.select(*PREFIXED_RECORD_COLUMNS).where(
    run_records.c.run_id == _P("run_id"), run_records.c.event_key == _P("event_key")
)
#: The stored records of a run under a list of keys (a batch's append check, one read).
SELECT_RECORDS_BY_KEYS: Final = sa.select(*PREFIXED_RECORD_COLUMNS).where(
    run_records.c.run_id == _P("run_id"),
    run_records.c.event_key.in_(_P("event_keys", expanding=True)),
)
_BATCH_KEYS = (
    sa.func.unnest(sa.cast(_P("event_keys"), ARRAY(sa.Text)))
    .table_valued("event_key")
    .render_derived(name="batch_keys")
)
_STORED_UNDER_KEY = (
    sa.select(*PREFIXED_RECORD_COLUMNS)
    .where(run_records.c.run_id == _P("run_id"), run_records.c.event_key == _BATCH_KEYS.c.event_key)
    .limit(sa.literal_column("1"))
    .lateral("stored")
)
#: PostgreSQL: the same read as one probe of the key index per key. A generic plan of the
#: ``IN`` form, made while the table was small, may read the run's whole index range and
#: filter the keys, so a batch would cost more the longer its run; a ``LATERAL`` subquery
#: with ``LIMIT`` is probed key by key whatever the plan (tests/storage/test_fast_path_plans.py).
SELECT_RECORDS_BY_KEYS_PROBED: Final = sa.select(_STORED_UNDER_KEY).select_from(
    _BATCH_KEYS.join(_STORED_UNDER_KEY, sa.true())
)
SELECT_CHECKPOINT: Final = sa.select(checkpoints.c.checkpoint_id, checkpoints.c.data).where(
    checkpoints.c.run_id == _P("run_id")
)
INSERT_RUN: Final = runs.insert()
INSERT_RECORD: Final = run_records.insert()
INSERT_CHECKPOINT: Final = checkpoints.insert()
INSERT_RUN_LABELS: Final = run_labels.insert()

#: Bind-parameter prefixes: a column's own name may not name a bind parameter in an UPDATE.
KEY: Final = "key_"
RUN: Final = "u_run_"
SESSION: Final = "u_session_"
RECORD: Final = "r_"

UPDATE_RUN: Final = (
    runs.update()
    .where(runs.c.run_id == _P(KEY + "run_id"))
    .values({name: _P(RUN + name) for name in RUN_MUTABLE})
)
UPDATE_SESSION: Final = (
    sessions.update()
    .where(sessions.c.session_id == _P(KEY + "session_id"))
    .values({name: _P(SESSION + name) for name in SESSION_MUTABLE})
)
#: The counter alone: an append changes nothing else, and an UPDATE that sets an indexed
#: column (the status) makes SQLite rewrite that column's index entries even when unchanged.
COUNTED: Final = ("record_count",)
UPDATE_RUN_COUNT: Final = (
    runs.update()
    .where(runs.c.run_id == _P(KEY + "run_id"))
    .values({name: _P(RUN + name) for name in COUNTED})
)
UPDATE_SESSION_COUNT: Final = (
    sessions.update()
    .where(sessions.c.session_id == _P(KEY + "session_id"))
    .values({name: _P(SESSION + name) for name in COUNTED})
)


def _fused_append(run_update: sa.Update, session_update: sa.Update | None) -> DriverStatement:
    """PostgreSQL only: the run's update, the session's update and the record's insert as
    one statement (data-modifying CTEs), one round trip instead of three."""
    ctes = [run_update.cte("u_run")]
    if session_update is not None:
        ctes.append(session_update.cte("u_session"))
    columns = ("seq", "session_seq", *NEW_RECORD_FIELDS)
    return DriverStatement(
        run_records.insert().values({name: _P(RECORD + name) for name in columns}).add_cte(*ctes)
    )


#: The fused appends by (run state changed, session: None / state changed / counter only).
FUSED_APPENDS: Final = {
    (run_changed, session_kind): _fused_append(
        UPDATE_RUN if run_changed else UPDATE_RUN_COUNT,
        None
        if session_kind is None
        else (UPDATE_SESSION if session_kind else UPDATE_SESSION_COUNT),
    )
    for run_changed in (False, True)
    for session_kind in (None, False, True)
}
