"""The physical floor: the least any store could do for each job, independent of our schema.

Issue 18 compares the service with what a user could do instead of calling it, in the same
run on the same database server, with psycopg 3 and one connection per worker thread:

* **insert**: one transaction that inserts one row into a table with one index (a
  ``bigserial`` key) holding a 1 KB text payload and returns its key
  (``INSERT … RETURNING id``, then ``COMMIT``);
* **select**: the latest 100 rows of a 1,000-row table of the same shape
  (``SELECT id, payload … ORDER BY id DESC LIMIT 100``, then ``COMMIT``).

Every grid row gets a ``floor_ratio`` against the floor of its job (``FLOOR_JOBS``): writes
against the insert, reads against the select. A batch call counts its records: its ratio
is records per second over floor inserts per second.
"""

from __future__ import annotations

from typing import Any

import psycopg

from .config import PAGE_SIZE
from .workloads import Call, CallFactory, payload

BACKEND = "psycopg/floor"
INSERT = "floor insert (1 KB row, one index)"
SELECT = "floor select (latest 100 of 1,000)"
#: Rows of the table the floor select reads.
SELECT_ROWS = 1_000

#: Grid operation -> (floor operation it is judged against, records per call).
FLOOR_JOBS: dict[str, tuple[str, int]] = {
    "start_root_run": (INSERT, 1),
    "append_run_record": (INSERT, 1),
    "append_run_record (exact retry)": (INSERT, 1),
    "append_run_records (16 per call)": (INSERT, 16),
    "record_run_terminal": (INSERT, 1),
    "append_memory_events": (INSERT, 1),
    "list_run_records": (SELECT, 1),
    "list_session_run_records": (SELECT, 1),
    "load_run": (SELECT, 1),
    "load_memory": (SELECT, 1),
}

_CREATE = "CREATE TABLE IF NOT EXISTS {table} (id bigserial PRIMARY KEY, payload text NOT NULL)"
_INSERT = "INSERT INTO floor_insert (payload) VALUES (%s) RETURNING id"
_SELECT = f"SELECT id, payload FROM floor_select ORDER BY id DESC LIMIT {PAGE_SIZE}"
_PAYLOAD = payload().decode()


def prepare(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """Create both tables (empty insert table, ``SELECT_ROWS`` rows to read) and analyse."""
    for table in ("floor_insert", "floor_select"):
        conn.execute(_CREATE.format(table=table))
    conn.execute("TRUNCATE floor_select")
    conn.execute(
        "INSERT INTO floor_select (payload) SELECT %s FROM generate_series(1, %s)",
        (_PAYLOAD, SELECT_ROWS),
    )
    conn.commit()
    conn.execute("ANALYZE floor_insert")
    conn.execute("ANALYZE floor_select")
    conn.commit()


class FloorStore:
    """One worker's connection; a method per floor job."""

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        self.conn = conn

    def close(self) -> None:
        self.conn.close()

    def insert(self) -> int:
        row = self.conn.execute(_INSERT, (_PAYLOAD,)).fetchone()
        self.conn.commit()
        assert row is not None
        return int(row[0])

    def latest(self) -> int:
        rows = self.conn.execute(_SELECT).fetchall()
        self.conn.commit()
        return len(rows)


def calls(operation: str) -> CallFactory:
    method = "insert" if operation == INSERT else "latest"
    call = Call(method, ())
    return lambda _worker, _i: call
