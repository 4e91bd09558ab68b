"""Where an import's rows go: straight into the live tables in the import's transaction
(PostgreSQL, ``_Direct``), or staged outside SQLite's only writer and published in one
short transaction (``_Staged``)."""

from __future__ import annotations

import abc
import contextlib
import functools
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain.state import SessionRowStatus
from app.domain.times import now_millis
from app.storage.database import read_deadlines
from app.storage.database import statements as st
from app.storage.database.dialects import Dialect
from app.storage.database.engines import WRITE_OPTION
from app.storage.database.tables import (
    import_claims,
    memory_batches,
    memory_events,
    run_records,
    run_tombstones,
    runs,
    seed_operations,
    seed_records,
    sessions,
)
from app.storage.database.waiting import pause
from app.storage.transfer.reading import T, log
from app.storage.transfer.staging import STAGE, STAGED, create_stage
from app.storage.unit_of_work import import_holds
from runtime_store_client import ImportConflictError, UnavailableError

#: Where a run ID in use is found, and how ``import_conflict`` says so.
_TAKEN: Final = (
    (runs, "already exists"),
    (run_tombstones, "was purged; its ID stays reserved"),
    (memory_events, "already has memory events"),
    (memory_batches, "already has memory appends"),
    (seed_operations, "is bound by a seed operation"),
)
#: Where a seed operation's run ID in use is found (CONTRACT.md 15.7).
_SEED_TAKEN: Final = (
    (runs, "already exists"),
    (seed_operations, "already has a seed operation"),
    (run_tombstones, "was purged; its ID stays reserved"),
)


#: Tables whose batches go through ``Dialect.insert_many`` (PostgreSQL: ``COPY``).
_BULK: Final = (run_records, memory_events, memory_batches)


class _Sink(abc.ABC):
    """Where an import's rows go, and how it reads the live tables meanwhile."""

    @abc.abstractmethod
    def read(self, query: sa.Executable, params: dict[str, Any]) -> list[Any]:
        """Rows of a query over the live tables."""

    @abc.abstractmethod
    def claim_session(self, row: dict[str, Any]) -> None:
        """The session's row: the import's ID is taken (or, staged, about to be)."""

    @abc.abstractmethod
    def insert(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Rows of a live table; ``IntegrityError`` when one repeats a unique key."""

    @abc.abstractmethod
    def publish(self, session_id: str, record_count: int) -> None:
        """Every row written and checked: make the session visible, whole."""


class _Direct(_Sink):
    """PostgreSQL: the live tables, in the import's one transaction (savepoints per
    batch, so a repeated key can be found row by row)."""

    def __init__(self, conn: Connection, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect

    def read(self, query: sa.Executable, params: dict[str, Any]) -> list[Any]:
        return list(self.conn.execute(query, params).all())

    def claim_session(self, row: dict[str, Any]) -> None:
        try:
            with self.conn.begin_nested():
                self.conn.execute(sessions.insert(), row)
        except sa.exc.IntegrityError:  # another import or a create_session got there first
            raise _session_conflict(row["session_id"], "") from None

    def insert(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        read_deadlines.check_not_canceled()  # the client went away: the transaction rolls back
        with self.conn.begin_nested():
            if table in _BULK:
                self.dialect.insert_many(self.conn, table, rows)
            else:
                self.conn.execute(table.insert(), rows)

    def publish(self, session_id: str, record_count: int) -> None:
        read_deadlines.check_not_canceled()
        self.conn.execute(
            sessions.update()
            .where(sessions.c.session_id == session_id)
            .values(record_count=record_count)
        )


class _Staged(_Sink):
    """SQLite: a private temporary database attached to the import's connection
    (staging.py), written without any lock of the store's database, and one final
    transaction that publishes the session (``publish``). ``close`` detaches (deletes)
    the stage."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.session: dict[str, Any] | None = None
        self._dbapi().execute(f"ATTACH DATABASE '' AS {STAGE}")
        try:
            self.stage(create_stage)
        except BaseException:
            self.close()
            raise

    def _dbapi(self) -> Any:
        return self.conn.connection.dbapi_connection

    def close(self) -> None:
        """Detach the stage, which deletes it; the connection goes back to the pool as it
        came."""
        try:
            if self.conn.in_transaction():
                self.conn.rollback()
            self._dbapi().execute(f"DETACH DATABASE {STAGE}")
        except Exception as exc:  # never pooled with a stage attached: closing deletes it
            log.warning("could not detach an import's stage (%s); its connection is closed", exc)
            self.conn.invalidate()

    def read(self, query: sa.Executable, params: dict[str, Any]) -> list[Any]:
        with self.conn.begin():
            return list(self.conn.execute(query, params).all())

    def stage(self, operation: Callable[[Connection], T]) -> T:
        """A transaction that writes the stage only: the store's database stays unlocked.
        Refused once the request that asked for the import has gone (``interrupts``)."""
        read_deadlines.check_not_canceled()
        with self.conn.begin():
            return operation(self.conn)

    def claim_session(self, row: dict[str, Any]) -> None:
        self.session = row  # inserted by the publish, if the ID is still free then

    def insert(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        self.stage(functools.partial(_execute, statement=STAGED[table].insert(), rows=rows))

    def publish(self, session_id: str, record_count: int) -> None:
        """Claim the IDs, copy the records a slice per transaction, then publish the rest
        and drop the claims in one (import_holds.py says why); on any failure, give back what
        was copied and claimed."""
        assert self.session is not None
        session = {**self.session, "record_count": record_count}
        del session_id
        import_holds.sweep_abandoned(self.conn)
        import_id = uuid.uuid4().hex
        with self._checkpointing() as checkpoint:
            self._write(functools.partial(_claim, session=session, import_id=import_id))
            try:
                turns = _Turns(checkpoint)
                for table, copy in (
                    (run_records, _copy_records),
                    (seed_records, _copy_seed_records),
                ):
                    for first, last in self._slices(table):
                        with turns.holding():
                            self._write(
                                functools.partial(copy, import_id=import_id, first=first, last=last)
                            )
                self._write(functools.partial(_finish, session=session, import_id=import_id))
            except BaseException:
                try:
                    import_holds.give_back(self.conn, import_id)
                except Exception as exc:  # the lease runs out and a sweep gives them back
                    log.warning("an import could not give back its claims yet (%s)", exc)
                raise

    @contextlib.contextmanager
    def _checkpointing(self) -> Iterator[Callable[[], None]]:
        """The publish's WAL checkpoints, between its transactions rather than in them.

        SQLite checkpoints the WAL in the commit that takes it past ``wal_autocheckpoint``
        pages, after the write lock is released: the publish's commits would do that, and
        the time looked like a hold (the longest "hold" of a 97 MB import, 1.1 s at load 7,
        was mostly its commit's checkpoint). Here the publish's connection does not, and
        checkpoints (passively: never waiting for a writer or a reader) in each pause of
        ``_Turns`` and at the end, so its transactions are only what they hold and the WAL
        it wrote is copied back by it, not by a small append's commit."""
        dbapi = self._dbapi()
        pages = dbapi.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        dbapi.execute("PRAGMA wal_autocheckpoint = 0")

        def checkpoint() -> None:
            dbapi.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

        try:
            yield checkpoint
            checkpoint()
        finally:
            try:
                dbapi.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}")
            except Exception as exc:  # never pooled without its checkpoints
                log.warning("could not restore an import connection's checkpoints (%s)", exc)
                self.conn.invalidate()

    def _write(self, operation: Callable[[Connection], None]) -> None:
        """One transaction of the store's database: BEGIN IMMEDIATE, the only writer."""
        read_deadlines.check_not_canceled()
        self.conn.execution_options(**{WRITE_OPTION: True})
        try:
            with self.conn.begin():
                operation(self.conn)
        finally:
            self.conn.execution_options(**{WRITE_OPTION: False})

    def _slices(self, table: sa.Table) -> list[tuple[int, int]]:
        """Row ranges of the staged records (or seed records), each at most ``SLICE_ROWS``
        rows and (unless one record alone is larger) ``SLICE_BYTES`` of content."""
        slices: list[tuple[int, int]] = []
        first = last = rows = size = 0
        with self.conn.begin():
            for rowid, length in self.conn.execute(_SLICED[table][0]):
                if rows and (rows == SLICE_ROWS or size + length > SLICE_BYTES):
                    slices.append((first, last))
                    rows = size = 0
                if not rows:
                    first = rowid
                last, rows, size = rowid, rows + 1, size + length
        if rows:
            slices.append((first, last))
        return slices


#: Records copied per publishing transaction, at most (CONTRACT.md 2.10).
SLICE_ROWS: Final = 2_000
SLICE_BYTES: Final = 4 * 1024 * 1024

#: After this long holding the writer (slices back to back), the publish leaves it free
#: for ``BREATHER_SECONDS`` (``_Turns``).
TURN_SECONDS: Final = 0.075
#: Longer than the busy handler's polling interval in a waiter's first 128 ms (25 ms).
BREATHER_SECONDS: Final = 0.03


class _Turns:
    """Bounded waits for other writers, not just bounded holds (CONTRACT.md 2.10).

    SQLite gives its write lock to no one in particular: a writer that finds it taken
    sleeps in the busy handler and tries again, 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50,
    then every 100 ms. A publish that commits slice after slice leaves the lock free only
    for the moments between two of its transactions, which such a waiter mostly sleeps
    through: each slice was short, yet a small append waited through several (an
    append's p99 was 100-160 ms and its longest 0.4-1.1 s over HTTP during a 97 MB
    import). So after at most ``TURN_SECONDS`` of holding, the publish pauses for
    ``BREATHER_SECONDS``: a writer that began waiting during that turn (within its first
    ~128 ms of waiting it tries at least every 25 ms) takes the lock in the pause, and
    waits about one turn and one slice at most. The pause begins with the publish's WAL
    checkpoint (``_Staged._checkpointing``), which holds no lock a writer needs. The price
    is up to 40 % more publishing time when slices come back to back, none when they are
    few.
    """

    def __init__(self, checkpoint: Callable[[], None]) -> None:
        self.held = 0.0
        self.checkpoint = checkpoint

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """One transaction of the publish; a pause first when its turn is used up (its
        checkpoint, then the rest of the pause)."""
        if self.held >= TURN_SECONDS:
            began = time.monotonic()
            self.checkpoint()
            left = BREATHER_SECONDS - (time.monotonic() - began)
            if left > 0:
                pause(left)
            self.held = 0.0
        began = time.monotonic()
        try:
            yield
        finally:
            self.held += time.monotonic() - began


def _slice_statements(table: sa.Table, sized: str) -> tuple[sa.TextClause, sa.TextClause]:
    """The sizes of a staged table's rows (by rowid), and the copy of a rowid range."""
    columns = ", ".join(column.name for column in table.columns)
    sizes = sa.text(f"SELECT rowid, length({sized}) FROM {STAGE}.{table.name} ORDER BY rowid")
    copy = sa.text(
        f"INSERT INTO main.{table.name} ({columns}) SELECT {columns}"
        f" FROM {STAGE}.{table.name} WHERE rowid BETWEEN :first AND :last ORDER BY rowid"
    )
    return sizes, copy


#: The tables copied in slices before the last transaction, with their statements: they
#: are reached only through rows that last one inserts (runs, seed operations and
#: attempts), so no read sees them early.
_SLICED: Final = {
    run_records: _slice_statements(run_records, "payload"),
    seed_records: _slice_statements(seed_records, "data"),
}


def _claim(conn: Connection, *, session: dict[str, Any], import_id: str) -> None:
    """The IDs are checked free under the write lock, then claimed. An ID another import
    holds is taken, as if that import had already published it: racing imports of one
    session commit once, the others are ``import_conflict``."""
    session_id = session["session_id"]
    _check_free(conn, session_id)
    try:
        import_holds.check_not_claimed(conn, import_holds.SESSION, session_id)
    except UnavailableError:
        raise ImportConflictError(
            f"session {session_id!r} is being imported by another import", session_id=session_id
        ) from None
    claimed = conn.execute(
        sa.select(import_claims.c.claimed_id)
        .where(
            import_claims.c.kind == import_holds.RUN,
            import_claims.c.claimed_id.in_(_staged_run_ids()),
        )
        .limit(1)
    ).scalar()
    if claimed is not None:
        raise ImportConflictError(
            f"run {claimed!r} is being imported by another import", run_id=claimed
        )
    lease = now_millis() + import_holds.LEASE_MS
    ids = _staged_run_ids().subquery()
    conn.execute(
        import_claims.insert(),
        {
            "kind": import_holds.SESSION,
            "claimed_id": session["session_id"],
            "import_id": import_id,
            "expires_at_ms": lease,
        },
    )
    conn.execute(
        import_claims.insert().from_select(
            ["kind", "claimed_id", "import_id", "expires_at_ms"],
            sa.select(
                sa.literal(import_holds.RUN),
                ids.c.run_id,
                sa.literal(import_id),
                sa.literal(lease),
            ),
        )
    )


def _staged_run_ids() -> sa.CompoundSelect[tuple[str]]:
    """The run IDs the import claims: its runs' and its seed operations' (each once)."""
    return sa.union(sa.select(STAGED[runs].c.run_id), sa.select(STAGED[seed_operations].c.run_id))


def _copy_slice(
    conn: Connection, *, table: sa.Table, import_id: str, first: int, last: int
) -> None:
    if not import_holds.renew(conn, import_id):
        raise UnavailableError("the import took too long and gave its IDs back; retry it")
    conn.execute(_SLICED[table][1], {"first": first, "last": last})


def _copy_records(conn: Connection, *, import_id: str, first: int, last: int) -> None:
    _copy_slice(conn, table=run_records, import_id=import_id, first=first, last=last)


def _copy_seed_records(conn: Connection, *, import_id: str, first: int, last: int) -> None:
    _copy_slice(conn, table=seed_records, import_id=import_id, first=first, last=last)


def _finish(conn: Connection, *, session: dict[str, Any], import_id: str) -> None:
    """Still claimed, the IDs still free: the session and everything but its records
    (already copied) become live, and the claims go, in this one transaction."""
    if not import_holds.renew(conn, import_id):
        raise UnavailableError("the import took too long and gave its IDs back; retry it")
    _check_free(conn, session["session_id"])
    conn.execute(sessions.insert(), session)
    for live, staged in STAGED.items():
        if live in _SLICED:
            continue
        names = [c.name for c in live.columns if not (live is memory_events and c.name == "id")]
        rows = sa.select(*(staged.c[name] for name in names)).order_by(*staged.primary_key.columns)
        conn.execute(live.insert().from_select(names, rows))
    conn.execute(import_claims.delete().where(import_claims.c.import_id == import_id))


def _check_free(conn: Connection, session_id: str) -> None:
    """``import_conflict`` when the session or a run ID of the file is taken."""
    existing = conn.execute(st.SELECT_SESSION, {"session_id": session_id}).first()
    if existing is not None:
        raise _session_conflict(session_id, existing.status)
    staged_runs = STAGED[runs]
    for table, reason in _TAKEN:
        taken = conn.execute(
            sa.select(table.c.run_id)
            .join(staged_runs, staged_runs.c.run_id == table.c.run_id)
            .limit(1)
        ).scalar()
        if taken is not None:
            raise ImportConflictError(f"run {taken!r} {reason}", run_id=taken)
    staged_seeds = STAGED[seed_operations]
    for table, reason in _SEED_TAKEN:
        taken = conn.execute(
            sa.select(table.c.run_id)
            .join(staged_seeds, staged_seeds.c.run_id == table.c.run_id)
            .limit(1)
        ).scalar()
        if taken is not None:
            raise ImportConflictError(
                f"the seed operation's run ID {taken!r} {reason}", run_id=taken
            )


def _execute(conn: Connection, *, statement: sa.Insert, rows: list[dict[str, Any]]) -> None:
    conn.execute(statement, rows)


def _session_conflict(session_id: str, status: str) -> ImportConflictError:
    if status == SessionRowStatus.PURGED.value:
        message = f"session {session_id!r} was purged; its ID stays reserved"
    else:
        message = f"session {session_id!r} already exists"
    return ImportConflictError(message, session_id=session_id)
