"""Group commit: concurrent single appends of one store combined into one statement.

Calls of one store that append at the same time (a service worker's calls awaited in
greenlets on its event loop, an application's threads sharing a ``SqlStore``) hand their
validated records to a combiner. One that finds a flush slot free (``MAX_IN_FLIGHT``)
flushes at once, alone: at low load nothing waits. Those arriving while every slot is in
flight queue; when a flush ends, the queue's head flushes everything queued so far (no
timer: a group is what arrived during the flushes in flight). Each append keeps its own
answer and its own error:

* a group is one autocommit statement calling the fast path's one-record function once per
  record (``fast_path.append_group``): the same function, so the same lock, checks, record
  ID, session position and answer as the record appended alone, and all of the group
  committed together or none of it (2.1). Records are sent sorted by their lock (session,
  else sessionless run), so two groups, two processes or two replicas take locks in one
  order (no deadlock among them); records of one run keep their arrival order;
* a record the function refuses goes, in its own call, through the Python path, which
  raises the contract's error, exactly as when appended alone;
* when the group statement fails (after the unit of work's retries) for any reason but the
  database being unavailable (each member then answers ``unavailable``), every record of it is
  appended again alone, in its own call, with its own retries and errors: a failure of
  one never becomes the answer of another, and a group whose commit outcome was unknown is
  retried record by record as exact retries (2.2);
* the live tail is told what the group wrote, once, after its commit
  (``UnitOfWork.committed``), as for every one-statement write.

``RUNTIME_STORE_GROUP_COMMIT=off`` (``SqlStore(group_commit=False)``) appends every record
alone. Only PostgreSQL's fast path groups: SQLite has one writer and the Python path one
transaction per operation.
"""

from __future__ import annotations

import threading
from typing import Final

import sqlalchemy as sa

from app.domain.validation import NewRecord
from app.storage import fast_path
from app.storage.database.waiting import Signal
from app.storage.unit_of_work.transactions import UnitOfWork
from runtime_store_client import AppendResult, StoreError, UnavailableError

#: Most records one group statement carries; more wait for the next flush.
MAX_GROUP: Final = 64
#: Flushes one store sends at once: a group forms while another waits for its commit.
MAX_IN_FLIGHT: Final = 2


class Alone:
    """The group statement failed: append this record alone."""


ALONE: Final = Alone()
#: What a record's append came to in a group: stored or inserted (its result), refused by
#: the fast path (``None``: the Python path decides), to be appended alone, or the error
#: of its statement when it was sent alone (raised in its caller's thread).
Outcome = AppendResult | None | Alone | Exception


class _Pending:
    """One append handed to the combiner; its call waits on ``wake`` (waiting.py: a
    thread sleeps, a greenlet yields to the event loop) until its group is done or it is
    made the leader."""

    __slots__ = ("done", "group", "outcome", "record", "wake")

    def __init__(self, record: NewRecord) -> None:
        self.record = record
        self.done = False
        self.outcome: Outcome = None
        #: The group this append sends when it is made leader (itself first).
        self.group: list[_Pending] = [self]
        self.wake = Signal()


class GroupCommit:
    """The combiner of one store's single appends (see the module docstring).

    At most ``max_in_flight`` flushes are in flight, each sent by its *leader*: an append
    that found a flush slot free, or the first of the queue, made leader when a flush
    ended. Every other append waits on its own signal until its group is done: one
    wake-up each, no herd woken per flush.
    """

    def __init__(
        self, uow: UnitOfWork, *, max_group: int = MAX_GROUP, max_in_flight: int = MAX_IN_FLIGHT
    ) -> None:
        self._uow = uow
        self._max_group = max_group
        self._max_in_flight = max_in_flight
        self._lock = threading.Lock()
        #: Appends waiting for a flush; empty while a flush slot is free.
        self._queue: list[_Pending] = []
        self._leaders = 0
        self._in_flight = 0

    def waiting(self) -> int:
        """Appends handed over and not yet answered (queued or in the flush in flight)."""
        with self._lock:
            return len(self._queue) + self._in_flight

    def append(self, record: NewRecord) -> Outcome:
        """The record's outcome once a group holding it committed (or failed)."""
        pending = _Pending(record)
        with self._lock:
            queued = self._leaders >= self._max_in_flight
            if queued:
                self._queue.append(pending)
            else:
                self._leaders += 1
        if queued:
            pending.wake.wait()  # the group done, or this append made the leader
            if pending.done:
                return pending.outcome
        self._lead(pending, queued=queued)
        return pending.outcome

    def _lead(self, pending: _Pending, *, queued: bool) -> None:
        """Flush ``pending``'s group (given to it with the lead when it was queued), then
        hand the lead, with the next group, to the queue's head, if any."""
        following: _Pending | None = None
        group = pending.group
        if not queued:
            with self._lock:
                self._in_flight += 1
        try:
            try:
                self._flush(group)
            finally:
                for member in group:
                    if not member.done:  # only if the flush itself was interrupted
                        member.outcome, member.done = ALONE, True
                    if member is not pending:
                        member.wake.fire()
        finally:
            with self._lock:
                self._in_flight -= len(group)
                if self._queue:
                    # Taken from the queue here, under the lock: no other leader can
                    # hand the same appends on.
                    following = self._queue[0]
                    following.group = self._queue[: self._max_group]
                    del self._queue[: self._max_group]
                    self._in_flight += len(following.group)
                else:
                    self._leaders -= 1
            if following is not None:
                following.wake.fire()

    def _flush(self, group: list[_Pending]) -> None:
        """Send the group (a group of one as the one-record statement); every member is
        done afterwards, whatever happened."""
        outcomes: list[Outcome]
        try:
            if len(group) == 1:
                record = group[0].record
                outcomes = [self._uow.statement(lambda tx: fast_path.append_one(tx, record))]
            else:
                # Sorted by lock, stably: one run's records keep their arrival order.
                ordered = sorted(group, key=lambda p: lock_key(p.record))
                records = [p.record for p in ordered]
                answers = self._uow.statement(lambda tx: fast_path.append_group(tx, records))
                by_member = dict(zip(map(id, ordered), answers, strict=True))
                outcomes = [by_member[id(p)] for p in group]
        except UnavailableError as exc:
            # No database answered within the bound (the unit of work's retries are
            # spent, or its server stopped answering: a failover, CONTRACT.md 16). Alone
            # each record would wait as long again: every member answers ``unavailable``
            # now and its client's exact retry settles it (2.2).
            outcomes = [exc] * len(group)
        except (StoreError, sa.exc.SQLAlchemyError) as exc:
            # Alone, the record's own error; in a group, each record retries alone and
            # meets its own.
            outcomes = [exc] if len(group) == 1 else [ALONE] * len(group)
        except Exception as exc:  # a bug: every caller sees it, none waits forever
            outcomes = [exc] * len(group)
        for member, outcome in zip(group, outcomes, strict=True):
            member.outcome = outcome
            member.done = True


def lock_key(record: NewRecord) -> tuple[int, str]:
    """The row whose lock serialises the record's writers: its session's, else (a
    sessionless run) its run's. Sessions first, then runs, each by ID."""
    return (0, record.session_id) if record.session_id else (1, record.run_id)
