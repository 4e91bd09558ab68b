"""The unit of work: one transaction per operation, its retries, and its error mapping.

``UnitOfWork.write``/``read`` run an operation inside one database transaction and commit
or roll back whole. A ``Tx`` (tx.py) is what the operation sees. Record IDs and session
positions are computed from counters read under the locks this transaction holds:

* a sessionful run is only ever written while holding its session's row lock
  (``SELECT … FOR UPDATE``), so the session lock serialises the session *and* its runs;
* a sessionless run is written while holding its own row lock;
* on SQLite every write transaction starts with ``BEGIN IMMEDIATE`` and so holds the
  database's single write lock from its first statement.

How the locks are taken and how the flush is sent differ by database: ``dialects.py``.
Transient database failures are retried a few times and then answered ``unavailable``;
every write is idempotent (records by their event keys, memory appends by their
idempotency keys), so a retry after a commit whose outcome is unknown is an exact retry.
The retries end with the engine's read deadline too, and a write whose server stops
answering is cut (``read_deadlines.unanswered_bound``): while no primary answers (a
failover, CONTRACT.md 16) every call ends within its bound.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Final, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.observability import metrics
from app.storage.database import positions, read_deadlines, replicas
from app.storage.database.dialects import dialect_of
from app.storage.database.engines import WRITE_OPTION
from app.storage.database.explicit_begin import CONNECTIONS_IN_AUTOCOMMIT, NO_BEGIN_OPTION
from app.storage.database.failures import raise_unless_transient, unavailable_message
from app.storage.database.waiting import pause
from app.storage.unit_of_work.tx import Tx, purged_error
from runtime_store_client import (
    InvalidArgumentError,
    StoreError,
    UnavailableError,
)

# The operations import ``Tx`` and ``purged_error`` with the unit of work.
__all__ = ["DEFAULT_ATTEMPTS", "Tx", "UnitOfWork", "purged_error"]

T = TypeVar("T")

DEFAULT_ATTEMPTS: Final = 5


class UnitOfWork:
    """Runs each operation in one transaction of one engine, retrying transient failures
    (a one-statement write, and a read on PostgreSQL, in autocommit: ``statement``,
    ``read``)."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], int],
        attempts: int = DEFAULT_ATTEMPTS,
        fast_path: bool = True,
    ) -> None:
        self.engine = engine
        self.dialect = dialect_of(engine, fast_path=fast_path)
        self._clock = clock
        self._attempts = attempts
        self._reads_in_autocommit: bool | None = None if self.dialect.reads_in_autocommit else False
        #: Told what each committed write changed (``Tx.changes``); the live tail's
        #: in-process wake-ups. Called on the writing thread, after the commit.
        self.committed: Callable[[set[tuple[str, str]]], None] | None = None
        #: Read replicas (CONTRACT.md 14); ``None``: the primary serves everything.
        self.replicas: replicas.ReplicaSet | replicas.PrimaryReads | None = None

    def write(self, operation: Callable[[Tx], T]) -> T:
        """Run a write: on SQLite it holds the write lock from its first statement."""
        return self._transact(operation, write=True)

    def read(self, operation: Callable[[Tx], T], *, at_least: int = 0) -> T:
        """Run a read. On PostgreSQL it runs in autocommit: at READ COMMITTED every
        statement takes its own snapshot whether or not a transaction is open, so a
        read-only transaction adds only its ``BEGIN`` and ``COMMIT`` round trips
        (``load_run``: three round trips become one; a run's page: four become two). On SQLite
        a read transaction is one snapshot, which the pages rely on: it stays.

        A read of an HTTP request that allows it may be served by a read replica that has
        replayed past the request's position and ``at_least`` (a list cursor's position):
        replicas.py. A replica that fails is left out and the primary serves the read."""
        if self.replicas is not None:
            served = self.replicas.serve(operation, at_least, self._read_on_replica)
            if served is not replicas.NOT_SERVED:
                return served  # type: ignore[return-value]
        # Under the read deadline and the caller's cancellation (read_deadlines.py, 2.10).
        return self._transact(
            read_deadlines.bounded(operation, self.engine), write=False, single=None
        )

    def read_in_autocommit(self) -> bool:
        """Only at READ COMMITTED (the default): an engine made with a stricter level gets
        the snapshot of a read transaction it asked for. Known once connected."""
        if self._reads_in_autocommit is None:
            with self.engine.connect() as conn:
                level = conn.default_isolation_level
            self._reads_in_autocommit = level == "READ COMMITTED"
        return self._reads_in_autocommit

    def statement(self, operation: Callable[[Tx], T]) -> T:
        """Run a write that is one statement, in autocommit: the statement is its own
        transaction, so no ``BEGIN`` or ``COMMIT`` round trip (PostgreSQL's one-statement
        append, migration 0010). Nothing is buffered or flushed: the operation sends its
        statement itself and records what it wrote in ``tx.written`` for the live tail's
        wake-ups. The same retries and error mapping as a transaction."""
        return self._transact(operation, write=True, single=True)

    def _transact(
        self, operation: Callable[[Tx], T], *, write: bool, single: bool | None = False
    ) -> T:
        """``single=None``: a read, in autocommit where ``read_in_autocommit`` says so."""
        attempt = 0
        # Retries end a read deadline after the call began (a call that waited for a group
        # commit's leader has spent part of it already).
        budget = read_deadlines.read_timeout_of(self.engine)
        call = read_deadlines.current()
        began = time.monotonic() if call is None else call.started
        give_up = None if budget is None else began + budget
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                if single or (single is None and self.read_in_autocommit()):
                    return self._single(operation, write=write)
                return self._once(operation, write=write)
            except StoreError:
                raise
            except (sa.exc.DataError, UnicodeEncodeError) as exc:
                # A value the database cannot hold. Validation refuses these first (2.6:
                # NUL, lone surrogates); this keeps any it missed a 4xx, never a 500.
                raise InvalidArgumentError("a value cannot be stored or looked up") from exc
            except sa.exc.IntegrityError:
                # A concurrent writer stored the same key first; the next attempt sees it.
                if attempt >= self._attempts:
                    raise
                metrics.transaction_retried("integrity")
            except (sa.exc.DBAPIError, sa.exc.TimeoutError) as exc:
                raise_unless_transient(exc)
                out_of_time = give_up is not None and time.monotonic() >= give_up
                if attempt >= self._attempts or out_of_time:
                    metrics.transaction_unavailable()
                    raise UnavailableError(unavailable_message(exc)) from exc
                pool_timeout = isinstance(exc, sa.exc.TimeoutError)
                metrics.transaction_retried("pool_timeout" if pool_timeout else "transient")
            finally:
                metrics.transaction_finished(write=write, seconds=time.perf_counter() - started)
            pause(random.uniform(0, min(0.2, 0.01 * 2**attempt)))

    def _single(
        self,
        operation: Callable[[Tx], T],
        replica: replicas.Replica | None = None,
        *,
        write: bool = False,
    ) -> T:
        engine = self.engine if replica is None else replica.engine
        with engine.connect() as conn:
            if conn.get_execution_options().get(CONNECTIONS_IN_AUTOCOMMIT):
                # Already in autocommit (explicit_begin.py): only kept from sending BEGIN.
                autocommit = conn.execution_options(**{NO_BEGIN_OPTION: True})
            else:
                autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
            tx = Tx(autocommit, self.dialect, self._clock(), replica=replica)
            tx.tracks_positions = self.replicas is not None
            if replica is None and write:
                with read_deadlines.unanswered_bound(conn, engine):
                    result = operation(tx)
            else:
                result = operation(tx)
            if tx.written:
                self._note_position(autocommit)
        if tx.written and self.committed is not None:
            self.committed(tx.written)
        return result

    def _once(self, operation: Callable[[Tx], T], *, write: bool) -> T:
        with self.engine.connect() as conn:
            if write:
                conn.execution_options(**{WRITE_OPTION: True})
            with self._bounded_write(conn, write), conn.begin():
                tx = Tx(conn, self.dialect, self._clock())
                tx.tracks_positions = self.replicas is not None
                result = operation(tx)
                tx.flush()
            if write:
                self._note_position(conn)
        if write and self.committed is not None and (tx.records or tx.purged):
            self.committed(tx.changes())
        return result

    def _bounded_write(self, conn: Connection, write: bool) -> AbstractContextManager[None]:
        """A write, its commit included, cut when its server stops answering."""
        return read_deadlines.unanswered_bound(conn, self.engine) if write else nullcontext()

    def _read_on_replica(self, operation: Callable[[Tx], T], replica: replicas.Replica) -> T:
        return self._single(read_deadlines.bounded(operation, replica.engine), replica=replica)

    def _note_position(self, conn: Connection) -> None:
        if self.replicas is not None:
            positions.note_write(conn)
