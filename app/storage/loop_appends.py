"""Single appends sent from the service's event loop, grouped, on async psycopg connections.

An HTTP append on PostgreSQL is one statement (the fast path's one-record function). Sent
from a database thread it cost a hand-off to the thread and back, a pooled SQLAlchemy
connection checked out and in with its isolation level set and reset, and the threads'
group commit (docs/performance.md, "Appends from the event loop"). Here the same statement
goes out from the event loop on a connection of this module's own, in autocommit:

* **The same rules.** The record has passed ``SqlStore.loop.checked_append`` (the store's own
  checks). The statements are ``fast_path``'s (``APPEND_ONE``, ``APPEND_GROUP``), the rows
  are read by ``fast_path.record_answer``: the same lock, checks, record ID, session
  position and answer as on a database thread.
* **Group commit, as ``group_commit.py`` does it for threads.** An append that finds a
  flush slot free (``MAX_IN_FLIGHT``) is sent at once, alone: at low load nothing waits.
  Appends arriving while every slot is busy queue; when a flush ends, everything queued
  (up to ``MAX_GROUP``) goes in the next one, sorted by lock (session, else sessionless
  run; one run's records in arrival order), so that groups, workers and replicas take
  locks in one order.
* **Batches** (``POST …/records/batch``) that one statement can take (``batch.py``,
  ``OneStatementBatch``) go out the same way, each alone, at most ``MAX_IN_FLIGHT`` at once;
  the others wait their turn, which costs less than a database thread's hand-off
  (docs/performance.md, "Loop reads and batches wait their turn").
* **Anything unusual goes to the store.** A record the statement refuses (the Python path
  decides), and every record of a flush that failed (a lost connection, a deadline, any
  database error: committed or not, the store's own retries then see an exact retry), is
  answered ``None``: the caller appends it with ``SqlStore.append_run_record`` on a
  database thread, which raises the contract's error or retries as it always does.

A flush runs in a task of its own: a request whose client leaves does not cut it short.
The connections are the worker's ``LoopConnections``, shared with ``LoopReads``.
PostgreSQL's triggers tell every worker of the commit (the live tail), so nothing is left
to do after it. ``RUNTIME_STORE_LOOP_APPENDS=off`` sends every append through the store.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from app.domain.validation import NewRecord
from app.observability import metrics
from runtime_store_client import AppendResult

from . import fast_path
from .batch import OneStatementBatch
from .driver import DriverStatement
from .group_commit import MAX_GROUP, MAX_IN_FLIGHT, lock_key
from .loop_connections import LoopConnections


class _Pending:
    __slots__ = ("future", "record")

    def __init__(self, record: NewRecord, future: asyncio.Future[AppendResult | None]) -> None:
        self.record = record
        self.future = future


class LoopAppends:
    """The event loop's combiner of single appends for one worker (see the module)."""

    def __init__(
        self,
        connections: LoopConnections,
        *,
        max_group: int = MAX_GROUP,
        max_in_flight: int = MAX_IN_FLIGHT,
    ) -> None:
        self._connections = connections
        self._max_group = max_group
        self._max_in_flight = max_in_flight
        self._queue: list[_Pending] = []
        self._in_flight = 0
        self._batch_slots = asyncio.Semaphore(max_in_flight)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    async def append(self, record: NewRecord) -> AppendResult | None:
        """The record's answer, or ``None``: the store must append it (see the module)."""
        if self._closed:
            return None
        future: asyncio.Future[AppendResult | None] = asyncio.get_running_loop().create_future()
        pending = _Pending(record, future)
        if self._in_flight < self._max_in_flight:
            self._start([pending])
        else:
            self._queue.append(pending)
        # Shielded: a cancelled request leaves its flush, and the others' answers, alone.
        return await asyncio.shield(future)

    async def close(self) -> None:
        """Let the flushes in flight end (at shutdown; the connections are closed by
        their owner afterwards)."""
        self._closed = True
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for pending in self._queue:
            if not pending.future.done():
                pending.future.set_result(None)
        self._queue.clear()

    def _start(self, group: list[_Pending]) -> None:
        self._in_flight += 1
        task = asyncio.get_running_loop().create_task(self._flush(group))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush(self, group: list[_Pending]) -> None:
        answers: list[AppendResult | None] = [None] * len(group)
        try:
            answers = await self._send([pending.record for pending in group])
        except Exception:
            pass  # every record goes to the store, which retries or raises its error
        finally:
            for pending, answer in zip(group, answers, strict=True):
                if not pending.future.done():
                    pending.future.set_result(answer)
            self._in_flight -= 1
            if self._queue and not self._closed:
                following = self._queue[: self._max_group]
                del self._queue[: self._max_group]
                self._start(following)

    async def append_batch(self, batch: OneStatementBatch) -> list[AppendResult] | None:
        """A batch's answers, or ``None``: the store must append it. Batches are never
        grouped; at most ``max_in_flight`` are sent at once, the others wait their turn."""
        if self._closed:
            return None
        task = asyncio.get_running_loop().create_task(self._send_batch(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # Shielded: a cancelled request leaves the statement in flight to its end.
        return await asyncio.shield(task)

    async def _send_batch(self, batch: OneStatementBatch) -> list[AppendResult] | None:
        statement = fast_path.APPEND_MANY
        async with self._batch_slots:
            if self._closed:
                return None
            try:
                rows = await self._execute(
                    statement, fast_path.many_params(batch.run_id, batch.distinct)
                )
            except Exception:
                return None  # the store appends it, retrying or raising its error
        answers = fast_path.many_answers(statement.row(rows[0]) if rows else None)
        return None if answers is None else batch.results(answers)

    async def _send(self, records: list[NewRecord]) -> list[AppendResult | None]:
        """The group in one autocommit statement; answers in the records' order."""
        if len(records) == 1:
            statement = fast_path.APPEND_ONE
            rows = await self._execute(statement, fast_path.one_params(records[0]))
            return [fast_path.record_answer(statement.row(rows[0]) if rows else None)]
        # Sorted by lock, stably: one run's records keep their arrival order.
        order = sorted(range(len(records)), key=lambda n: lock_key(records[n]))
        ordered = [records[n] for n in order]
        rows = await self._execute(fast_path.APPEND_GROUP, fast_path.group_params(ordered))
        by_position = fast_path.group_answers(ordered, rows)
        answers: list[AppendResult | None] = [None] * len(records)
        for position, n in enumerate(order):
            answers[n] = by_position[position]
        return answers

    async def _execute(
        self, statement: DriverStatement, params: dict[str, Any] | None
    ) -> list[tuple[Any, ...]]:
        """``statement``'s rows, sent in autocommit on one of the worker's connections."""
        started = time.perf_counter()
        try:
            async with self._connections.connection() as conn:
                return await self._connections.rows(conn, statement, params)
        finally:
            metrics.transaction_finished(write=True, seconds=time.perf_counter() - started)
