"""Does the psycopg ceiling still send the statements ``SqlStore`` sends?

``SqlStore`` is free to change its SQL; the ceiling copies it by hand. Before measuring,
one call of every workload goes through each with its statements recorded (SQLAlchemy's
``before_cursor_execute`` event, the ceiling's ``trace``), and their *shapes* (verb,
tables in order, row lock) are compared. A difference is reported on the ceiling's rows:
its ratios are then not like for like until ``ceiling.py`` follows the store
(``app/storage/store.py``, ``app/storage/unit_of_work/tx.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from .ceiling import CeilingStore
from .purge import prepare_purge
from .workloads import WORKLOADS, Call, Cell, Database, new_prefix

_TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|(?<!FOR )UPDATE)\s+([a-z_]+)", re.IGNORECASE)
_LOCK = re.compile(r"\bFOR UPDATE(?: OF [a-z_]+)?", re.IGNORECASE)


def shape(statement: str) -> str:
    """``VERB table+table… [FOR UPDATE [OF table]]``: what a statement does, not its spelling."""
    text = " ".join(statement.split())
    verb = text.split(" ", 1)[0].upper()
    tables = "+".join(match.lower() for match in _TABLE.findall(text))
    lock = _LOCK.search(text)
    return f"{verb} {tables}{' ' + lock.group(0).upper() if lock else ''}"


@contextmanager
def _sqlalchemy_trace(engine: sa.Engine) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def _traced(
    db: Database, ceiling: CeilingStore, store_call: Call, ceiling_call: Call
) -> dict[str, Any]:
    with _sqlalchemy_trace(db.engine) as store_statements:
        getattr(db.store, store_call.method)(*store_call.args)
    ceiling.trace = []
    try:
        getattr(ceiling, ceiling_call.method)(*ceiling_call.args)
        ceiling_statements = ceiling.trace
    finally:
        ceiling.trace = None
    # A store reads its cursor key once, on its first cursor: not part of any operation.
    store_shapes = [
        shape(statement) for statement in store_statements if "service_keys" not in statement
    ]
    ceiling_shapes = [shape(statement) for statement in ceiling_statements]
    return {
        "same": store_shapes == ceiling_shapes,
        "sqlstore": store_shapes,
        "ceiling": ceiling_shapes,
    }


def compare(db: Database, ceiling: CeilingStore) -> dict[str, dict[str, Any]]:
    """Per operation: the statement shapes of ``SqlStore`` and of the ceiling, and whether
    they are the same (fixtures are written before tracing starts)."""
    found: dict[str, dict[str, Any]] = {}
    for operation, prepare in WORKLOADS:
        store_call = prepare(Cell(db, new_prefix("mirror"), 1, 2))(0, 0)
        ceiling_call = prepare(Cell(db, new_prefix("mirror"), 1, 2))(0, 0)
        if store_call is not None and ceiling_call is not None:
            found[operation] = _traced(db, ceiling, store_call, ceiling_call)
    purges = [prepare_purge(db, records=4, runs=2).session_id for _ in range(2)]
    found["purge_session"] = _traced(
        db, ceiling, Call("purge_session", (purges[0],)), Call("purge_session", (purges[1],))
    )
    return found
