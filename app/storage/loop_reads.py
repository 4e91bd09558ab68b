"""Pages of records read from the service's event loop, on async psycopg connections.

A page on PostgreSQL is two autocommit statements (the run or the session with the
page's keys, then its rows).
Read on a database thread it also cost a hand-off to the thread and back and a pooled
SQLAlchemy connection checked out and in (docs/performance.md, "Pages from the event
loop"). Here the same statements go out from the event loop, on the worker's
``LoopConnections``:

* **The same rule.** ``RunPageRead.steps``, ``SessionPageRead.steps`` (records.py) and
  ``TranscriptPageRead.steps`` (record_reads.py) are the page: which statement comes
  next, from the rows of the ones before, and the answer. A database thread drives the
  same steps in ``UnitOfWork.read``; here they are driven with ``await``. Each statement
  is its own snapshot on both, as the store's reads on PostgreSQL always are.
* **The same bounds.** The read runs under the store's read deadline
  (``RUNTIME_STORE_READ_TIMEOUT_SECONDS``): past it the statement is cancelled in the
  database (psycopg does so when its wait is cancelled) and the read answers the store's
  ``unavailable``. A request whose client leaves is cancelled the same way.
* **A few connections, shared in turn.** At most ``max_in_flight`` reads run at once; a
  read that finds them all running waits for one to finish (inside its deadline). Waiting
  on the loop costs less than a database thread's hand-off, and a few connections keep
  PostgreSQL as busy as more would (docs/performance.md, "Loop reads and batches wait their turn").
* **Anything unusual goes to the store.** Steps that end unsure (the run missing, records
  deleted between the reads, a transcript range that may have been purged), a rule's
  error, a database error or a lost connection are answered ``None``: the caller reads
  the page with ``SqlStore.list_run_records`` (or ``list_session_run_records``,
  ``list_run_transcript_records``) on a database thread, which raises the contract's
  error or retries as it always does. A session page whose cursor needs the cursor key read from
  the database is never started here.

``RUNTIME_STORE_LOOP_READS=off`` leaves every page to the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Final, TypeVar

import psycopg

from app.observability import metrics
from runtime_store_client import StoreError

from .interrupts import timed_out
from .loop_connections import LoopConnections
from .records import Steps, Unsure

T = TypeVar("T")

#: Reads sent at once from one worker's event loop; more wait for one of them to finish.
MAX_IN_FLIGHT: Final = 4


class LoopReads:
    """Pages read from one worker's event loop (see the module)."""

    def __init__(
        self,
        connections: LoopConnections,
        *,
        timeout: float | None,
        allowed: Callable[[], bool],
        max_in_flight: int = MAX_IN_FLIGHT,
    ) -> None:
        """``allowed``: whether the store's own reads now run in autocommit, each
        statement its own snapshot, as the loop's do (a stricter level reads a page in
        one snapshot, which only a database thread gives here)."""
        self._connections = connections
        self._timeout = timeout
        self._allowed = allowed
        self._slots = asyncio.Semaphore(max_in_flight)

    async def read(self, steps: Steps[T | Unsure]) -> T | None:
        """The answer of ``steps``, or ``None``: the store must read it (see the module)."""
        if not self._allowed():
            return None
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self._timeout), self._slots:
                return await self._drive(steps)
        except TimeoutError:
            metrics.transaction_unavailable()
            raise timed_out(self._timeout or 0) from None
        except (psycopg.Error, OSError):
            return None  # the store reads it again: its retries, its errors
        finally:
            metrics.transaction_finished(write=False, seconds=time.perf_counter() - started)

    async def _drive(self, steps: Steps[T | Unsure]) -> T | None:
        async with self._connections.connection() as conn:
            try:
                statement = next(steps)
                while True:
                    rows = await self._connections.rows(conn, statement.statement, statement.params)
                    statement = steps.send(rows)
            except StopIteration as done:
                answer: T | Unsure = done.value
                return None if isinstance(answer, Unsure) else answer
            except StoreError:
                return None  # a rule's error (a cursor past the run): the store raises it
