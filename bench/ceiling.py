"""The raw ceiling: the transactions ``SqlStore`` issues, sent directly with psycopg 3.

One connection per worker, no HTTP, no SQLAlchemy, no validation: each method sends the
statements ``SqlStore`` sends for the same call on PostgreSQL (``app/storage/store.py``
and ``unit_of_work/tx.py``), in the same order and with the same locks, and keeps only the Python it
needs to compute the next record ID and session position. What ``SqlStore`` adds on top
(validation, SQLAlchemy, its pool) is what its ratio to this ceiling measures.
``mirror.py`` checks at the start of every run that both still send the same statements.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from app.domain.cursors import SESSION_RECORDS, CursorCodec, decode_record_id_cursor
from app.domain.times import now_millis, to_millis
from app.storage.database.engines import normalize_url
from app.storage.operation import DEFAULT_PURGE_BATCH
from runtime_store_client import MemoryEvent, Record, RunStart, RunStatus

_RUN_COLUMNS = (
    "run_id, agent_id, session_id, parent_run_id, status, start_outcome, started_at_ms, "
    "updated_at_ms, labels, cancellation_reason, record_count, start_key, parent_link_key, "
    "cancellation_key, suspension_key, terminal_key"
)
_SESSION_COLUMNS = "session_id, status, created_at_ms, ended_at_ms, purged_at_ms, record_count"
SELECT_RUN = f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = %s"
SELECT_SESSION = f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = %s"
SELECT_CURSOR_KEY = "SELECT secret FROM service_keys WHERE name = 'cursor'"
LOCK_SESSION = SELECT_SESSION + " FOR UPDATE"
SELECT_TOMBSTONE = "SELECT run_id FROM run_tombstones WHERE run_id = %s"


#: ``SqlStore.append_run_record`` on PostgreSQL (migration 0010): one statement in autocommit.
APPEND_RECORD = (
    "SELECT outcome, record_id, session_status FROM "
    "runtime_store_append_record(%s, %s, %s, %s, %s, %s, %b, %s)"
)
#: ``SqlStore.append_run_records`` on PostgreSQL (migration 0011): one statement in
#: autocommit, the batch as arrays in binary format.
APPEND_RECORDS = (
    "SELECT outcome, record_ids, inserted, session_status FROM "
    "runtime_store_append_records(%s, %s, %s, %b::text[], %b::text[], %b::text[], "
    "%b::bytea[], %b::bigint[])"
)
#: ``SqlStore.start_root_run`` on PostgreSQL (migration 0012): one statement in autocommit
#: (a root: no parent, no link record).
START_RUN = (
    "SELECT outcome, link_record_id, session_status FROM runtime_store_start_run("
    "%s, %s, %s, %s, %s, %s, %b::text[], %b::text[], %s, %s, %s, %s, %b, %s, "
    "%s, %s, %s, %s, %b, %s)"
)
#: ``SqlStore.record_run_terminal`` on PostgreSQL (migration 0012): one statement in
#: autocommit.
FINISH_RUN = (
    "SELECT outcome, record_id, session_status FROM runtime_store_finish_run("
    "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %b, %s, %s)"
)
SELECT_MEMORY_BATCH = (
    "SELECT idempotency_key FROM memory_batches "
    "WHERE agent_id = %s AND run_id = %s AND idempotency_key = %s"
)
INSERT_MEMORY_BATCH = (
    "INSERT INTO memory_batches (agent_id, run_id, idempotency_key, appended_at_ms, digest) "
    "VALUES (%s, %s, %s, %s, %s)"
)
INSERT_MEMORY = (
    "INSERT INTO memory_events (agent_id, run_id, type, timestamp_ms, data, labels) "
    "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id"
)
SELECT_MEMORY = (
    "SELECT id, agent_id, run_id, type, timestamp_ms, data, labels FROM memory_events "
    "WHERE agent_id = %s AND run_id = %s ORDER BY id"
)


_PAGE_COLUMNS = "seq, event_key, run_id, agent_id, session_id, turn_id, type, payload, timestamp_ms"


def _page_query(where: str, position: str) -> tuple[str, str]:
    """``records._page_query``: the next ``limit + 1`` positions with their payload sizes,
    then the rows of the records the byte budget keeps."""
    return (
        f"SELECT {position}, length(payload) FROM run_records "
        f"WHERE {where} = %s AND {position} > %s ORDER BY {position} LIMIT %s",
        f"SELECT {_PAGE_COLUMNS}, {position} FROM run_records "
        f"WHERE {where} = %s AND {position} > %s AND {position} <= %s ORDER BY {position}",
    )


RUN_PAGE = _page_query("run_id", "seq")
SESSION_PAGE = _page_query("session_id", "session_seq")
PAGE_BYTE_BUDGET = 4 * 1024 * 1024
PURGE_BATCH = DEFAULT_PURGE_BATCH

# run and session row indexes
_R_COUNT = 10
_S_STATUS = 1


def connect(database_url: str) -> psycopg.Connection[tuple[Any, ...]]:
    """A psycopg connection (READ COMMITTED, not autocommit: one transaction per call)."""
    url = normalize_url(database_url).set(drivername="postgresql")
    return psycopg.connect(url.render_as_string(hide_password=False))


def _record_params(record: Record) -> tuple[Any, ...]:
    """A record's parameters in the order the one-statement functions take them (event
    key, agent, session, turn, type, payload, timestamp)."""
    return (
        record.event_key,
        record.agent_id,
        record.session_id or None,
        record.turn_id,
        record.type,
        record.payload,
        to_millis(record.timestamp, "timestamp"),
    )


class CeilingStore:
    """The subset of ``Store``/``MemoryStore`` the benchmark drives, as raw transactions."""

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        self.conn = conn
        self._cursor_codec: CursorCodec | None = None
        #: When a list, every statement sent is appended to it (see ``mirror.py``).
        self.trace: list[str] | None = None

    def _codec(self) -> CursorCodec:
        """``SqlStore`` loads the cursor key once; so does the ceiling."""
        if self._cursor_codec is None:
            row = self._one(SELECT_CURSOR_KEY)
            self.conn.commit()
            assert row is not None, "the database has no cursor key (migration 0006)"
            self._cursor_codec = CursorCodec(bytes(row[0]))
        return self._cursor_codec

    def close(self) -> None:
        self.conn.close()

    def _execute(self, query: str, params: Sequence[Any] = ()) -> psycopg.Cursor[tuple[Any, ...]]:
        if self.trace is not None:
            self.trace.append(query)
        return self.conn.execute(query, params)

    def _one(self, query: str, *params: Any) -> tuple[Any, ...] | None:
        return self._execute(query, params).fetchone()

    def start_root_run(self, run: RunStart, started: Record, _canceled: Record) -> str:
        """One statement in autocommit, as ``SqlStore`` sends it (migration 0012): the
        session is active and the run new, so ``canceled`` is never written."""
        labels = sorted(run.labels.items())
        row = self._autocommit_one(
            START_RUN,
            run.run_id,
            run.agent_id,
            run.session_id,
            run.parent_run_id,
            to_millis(run.started_at, "started_at"),
            json.dumps(dict(labels), separators=(",", ":"), ensure_ascii=False),
            [json.dumps(key, ensure_ascii=False) for key, _ in labels],
            [json.dumps(value, ensure_ascii=False) for _, value in labels],
            now_millis(),
            started.event_key,
            started.turn_id,
            started.type,
            started.payload,
            to_millis(started.timestamp, "timestamp"),
            *(None,) * 6,
        )
        if row is None or row[0] != "inserted":
            raise RuntimeError(f"ceiling start of {run.run_id!r} needs a new run: {row}")
        return "1"

    def _autocommit_one(self, query: str, *params: Any) -> tuple[Any, ...] | None:
        """One statement in autocommit (no BEGIN, no COMMIT), its first row."""
        self.conn.autocommit = True
        try:
            return self._one(query, *params)
        finally:
            self.conn.autocommit = False

    def append_run_record(self, record: Record) -> str:
        """One statement in autocommit, as ``SqlStore`` sends it (no BEGIN, no COMMIT)."""
        row = self._autocommit_one(APPEND_RECORD, record.run_id, *_record_params(record))
        if row is None or row[0] == "refused":
            raise RuntimeError(f"the ceiling appends new records or exact retries only: {row}")
        return str(row[1])

    def append_run_records(self, run_id: str, records: Sequence[Record]) -> list[str]:
        """One statement in autocommit, as ``SqlStore`` sends it (no BEGIN, no COMMIT)."""
        first = records[0]
        row = self._autocommit_one(
            APPEND_RECORDS,
            run_id,
            first.agent_id,
            first.session_id or None,
            [record.event_key for record in records],
            [record.turn_id for record in records],
            [record.type for record in records],
            [record.payload for record in records],
            [to_millis(record.timestamp, "timestamp") for record in records],
        )
        if row is None or row[0] != "done":
            raise RuntimeError(f"the ceiling appends new records or exact retries only: {row}")
        return [str(record_id) for record_id in row[1]]

    def record_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> str:
        """One statement in autocommit, as ``SqlStore`` sends it (migration 0012); the
        bench finishes its runs ``completed`` with the run's labels."""
        row = self._autocommit_one(
            FINISH_RUN,
            run_id,
            status.value,
            json.dumps(
                json.loads(record.payload).get("labels", {}),
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
            ),
            None,
            now_millis(),
            *_record_params(record),
            "run.finished",  # the event a subscription would want (there is none: refused never)
        )
        if row is None or row[0] == "refused":
            raise RuntimeError(f"the ceiling finishes running runs or exact retries only: {row}")
        return str(row[1])

    def load_run(self, run_id: str) -> tuple[Any, ...] | None:
        """One statement in autocommit, as ``SqlStore`` sends it (no BEGIN, no COMMIT)."""
        return self._autocommit_one(SELECT_RUN, run_id)

    def _page(
        self, query: tuple[str, str], key: str, after: int, limit: int
    ) -> list[tuple[Any, ...]]:
        keys = self._execute(query[0], (key, after, limit + 1)).fetchall()
        if not keys:
            return []
        total, kept = 0, 0
        for kept, (_, size) in enumerate(keys[:limit]):
            total += size
            if kept and total > PAGE_BYTE_BUDGET:
                break
        else:
            kept = min(len(keys), limit)
        return self._execute(query[1], (key, after, keys[kept - 1][0])).fetchall()

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> int:
        run = self._one(SELECT_RUN, run_id)
        if run is None:
            self.conn.rollback()
            raise RuntimeError(f"run {run_id!r} not found")
        rows = self._page(RUN_PAGE, run_id, decode_record_id_cursor(cursor, run[_R_COUNT]), limit)
        self.conn.commit()
        return len(rows)

    def list_session_run_records(self, session_id: str, cursor: str = "", limit: int = 100) -> int:
        session = self._one(SELECT_SESSION, session_id)
        if session is None:
            self.conn.rollback()
            raise RuntimeError(f"session {session_id!r} not found")
        after = self._codec().open(SESSION_RECORDS, cursor, session_id, 1)[0] if cursor else 0
        rows = self._page(SESSION_PAGE, session_id, after, limit)
        self.conn.commit()
        return len(rows)

    def append_memory_events(
        self, agent_id: str, run_id: str, events: Sequence[MemoryEvent]
    ) -> None:
        """A fresh idempotency key, its lookup and row, then the events (as ``SqlStore``)."""
        key = uuid.uuid4().hex
        if self._one(SELECT_TOMBSTONE, run_id) is not None:
            self.conn.rollback()
            raise RuntimeError(f"run {run_id!r} belonged to a purged session")
        if self._one(SELECT_MEMORY_BATCH, agent_id, run_id, key) is not None:
            self.conn.commit()
            return
        digest = hashlib.sha256(repr(events).encode()).hexdigest()
        self._execute(INSERT_MEMORY_BATCH, (agent_id, run_id, key, now_millis(), digest))
        for event in events:  # the benchmark sends one event per call: one INSERT, as SqlStore
            self._execute(
                INSERT_MEMORY,
                (
                    agent_id,
                    run_id,
                    event.type,
                    to_millis(event.timestamp, "timestamp"),
                    json.dumps(dict(event.data), ensure_ascii=False, separators=(",", ":")),
                    json.dumps(dict(event.labels), sort_keys=True, separators=(",", ":")),
                ),
            ).fetchone()
        self.conn.commit()

    def load_memory(self, agent_id: str, run_id: str) -> int:
        if self._one(SELECT_TOMBSTONE, run_id) is not None:
            self.conn.rollback()
            raise RuntimeError(f"run {run_id!r} belonged to a purged session")
        rows = self._execute(SELECT_MEMORY, (agent_id, run_id)).fetchall()
        self.conn.commit()
        return len(rows)

    def purge_session(self, session_id: str) -> None:
        """``SqlStore.purge_session``: lock, running check, tombstones, mark; then the
        records in batches of ``PURGE_BATCH`` (whole small runs, ranges of large ones) and
        the checkpoints, a transaction each."""
        session = self._one(LOCK_SESSION, session_id)
        if session is None or session[_S_STATUS] != "ended":
            self.conn.rollback()
            raise RuntimeError(f"session {session_id!r} is not an ended session")
        running = self._one(
            "SELECT run_id FROM runs WHERE session_id = %s AND status = 'running' LIMIT 1",
            session_id,
        )
        if running is not None:
            self.conn.rollback()
            raise RuntimeError(f"session {session_id!r} has a running run")
        self._execute(
            "INSERT INTO run_tombstones (run_id, session_id) "
            "SELECT run_id, session_id FROM runs WHERE session_id = %s",
            (session_id,),
        )
        self._execute(
            "DELETE FROM run_labels WHERE run_id IN "
            "(SELECT run_id FROM runs WHERE session_id = %s)",
            (session_id,),
        )
        self._execute("DELETE FROM runs WHERE session_id = %s", (session_id,))
        self._execute(
            "UPDATE sessions SET status = 'purged', purged_at_ms = %s WHERE session_id = %s",
            (now_millis(), session_id),
        )
        self.conn.commit()
        sizes = self._execute(
            "SELECT run_tombstones.run_id, (SELECT max(run_records.seq) FROM run_records "
            "WHERE run_records.run_id = run_tombstones.run_id) FROM run_tombstones "
            "WHERE run_tombstones.session_id = %s",
            (session_id,),
        ).fetchall()
        self.conn.commit()
        small: list[str] = []
        small_records = 0
        for run_id, top in sizes:
            if top is None:
                continue
            if top >= PURGE_BATCH:
                for low in range(0, top, PURGE_BATCH):
                    self._execute(
                        "DELETE FROM run_records WHERE run_id = %s AND seq > %s AND seq <= %s",
                        (run_id, low, low + PURGE_BATCH),
                    )
                    self.conn.commit()
                continue
            if small_records + top > PURGE_BATCH:
                self._delete_runs_records(small)
                small, small_records = [], 0
            small.append(run_id)
            small_records += top
        if small:
            self._delete_runs_records(small)
        self._execute(
            "DELETE FROM checkpoints WHERE run_id IN "
            "(SELECT run_id FROM run_tombstones WHERE session_id = %s)",
            (session_id,),
        )
        self.conn.commit()
        self._delete_purged_memory(session_id)

    def _delete_purged_memory(self, session_id: str) -> None:
        """The memory of the session's runs, in batches, then the accepted-batch keys."""
        tombstoned = "SELECT run_id FROM run_tombstones WHERE session_id = %s"
        while True:
            deleted = self._execute(
                "DELETE FROM memory_events WHERE id IN (SELECT memory_events.id FROM "
                f"memory_events WHERE memory_events.run_id IN ({tombstoned}) LIMIT %s)",
                (session_id, PURGE_BATCH),
            ).rowcount
            self.conn.commit()
            if deleted < PURGE_BATCH:
                break
        self._execute(f"DELETE FROM memory_batches WHERE run_id IN ({tombstoned})", (session_id,))
        self.conn.commit()

    def _delete_runs_records(self, run_ids: list[str]) -> None:
        self._execute("DELETE FROM run_records WHERE run_id = ANY(%s)", (run_ids,))
        self.conn.commit()
