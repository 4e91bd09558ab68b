"""``SqlStore``: the whole contract over one SQLAlchemy engine, one transaction per call.

Every public method validates what it can without state, then runs one function inside
one transaction (``_transact``). That function takes the locks it needs (see ``tx.py``),
checks the rules in the order CONTRACT.md gives them, buffers its writes and flushes them
just before the commit; any contract error rolls the whole transaction back. Transient
database failures are retried here a few times and then surface as ``unavailable``.
"""

from __future__ import annotations

import functools
import json
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain import cursors
from app.domain import validation as v
from app.domain.limits import Limits
from app.domain.payloads import RunCompletedPayload
from app.domain.times import from_millis, now_millis, to_millis
from runtime_store_client import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
    InvalidArgumentError,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
    RepairOutcome,
    RepairResult,
    RootRunStartResult,
    RunCancellationConflictError,
    RunConflictError,
    RunMeta,
    RunNotActiveError,
    RunPage,
    RunSessionMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    RunSuspensionConflictError,
    RunSuspensionNotFoundError,
    RunTerminalConflictError,
    Session,
    SessionActiveError,
    SessionEndedError,
    SessionHasActiveRunsError,
    SessionNotFoundError,
    SessionPurgedError,
    SessionStatus,
    Snapshot,
    StoreError,
    UnavailableError,
)
from runtime_store_client.types import MEMORY_EVENT_TYPES

from .engine import WRITE_OPTION, is_transient
from .schema import (
    checkpoints,
    memory_batches,
    memory_events,
    run_records,
    run_tombstones,
    runs,
    sessions,
)
from .tx import PURGED, RunState, SessionState, Tx, record_from_row, run_from_row

T = TypeVar("T")

DEFAULT_PAGE_MAX = 1000
DEFAULT_PAGE_BYTE_BUDGET = 4 * 1024 * 1024


def _execute(statement: sa.Executable, tx: Tx) -> None:
    tx.conn.execute(statement)


#: Most records one transaction of a purge deletes.
DEFAULT_PURGE_BATCH = 2000

#: The tombstoned runs of a session with their highest record ID (``None``: no records
#: left); record IDs run 1..n, so that is also how many records each still holds.
_PURGED_RUN_SIZES = sa.select(
    run_tombstones.c.run_id,
    sa.select(sa.func.max(run_records.c.seq))
    .where(run_records.c.run_id == run_tombstones.c.run_id)
    .scalar_subquery(),
).where(run_tombstones.c.session_id == sa.bindparam("session_id"))


def _purged(session_id: str, run_id: str = "") -> SessionPurgedError:
    return SessionPurgedError(
        f"session {session_id!r} was purged", session_id=session_id, run_id=run_id
    )


def _run_meta(run: RunState) -> RunMeta:
    return RunMeta(
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        parent_run_id=run.parent_run_id,
        status=run.status,
        start_outcome=run.start_outcome,
        started_at=from_millis(run.started_at_ms),
        updated_at=from_millis(run.updated_at_ms),
        labels=json.loads(run.labels_json),
        cancellation_reason=run.cancellation_reason,
    )


def _session(state: SessionState) -> Session:
    return Session(
        id=state.session_id,
        status=state.contract_status,
        created_at=from_millis(state.created_at_ms),
        ended_at=None if state.ended_at_ms is None else from_millis(state.ended_at_ms),
    )


def _same_identity(run: RunState, new: v.NewRun) -> bool:
    return (
        run.agent_id == new.agent_id
        and run.session_id == new.session_id
        and run.parent_run_id == new.parent_run_id
        and run.started_at_ms == new.started_at_ms
        and run.labels_json == new.labels_json
    )


def _page_query(owner: sa.ColumnElement[Any], position: sa.ColumnElement[Any]) -> sa.Select[Any]:
    """One page of records by index range, cut at a byte budget, as one statement.

    The inner query picks ``limit + 1`` keys by index range with their payload sizes;
    window sums cut the page at the budget, so payloads past the cut never leave the
    database. Built once per list; every value is a bind parameter.
    """
    keys = (
        sa.select(
            run_records.c.run_id,
            run_records.c.seq,
            position.label("pos"),
            sa.func.length(run_records.c.payload).label("size"),
        )
        .where(owner == sa.bindparam("owner"), position > sa.bindparam("after"))
        .order_by(position)
        .limit(sa.bindparam("limit_plus_one"))
        .cte("page_keys")
    )
    sized = sa.select(
        keys.c.run_id,
        keys.c.seq,
        keys.c.pos,
        sa.func.sum(keys.c.size).over(order_by=keys.c.pos).label("total_size"),
        sa.func.row_number().over(order_by=keys.c.pos).label("n"),
        sa.func.count().over().label("found"),
    ).cte("page_sized")
    return (
        sa.select(run_records, sized.c.pos, sized.c.found)
        .join(
            sized,
            sa.and_(run_records.c.run_id == sized.c.run_id, run_records.c.seq == sized.c.seq),
        )
        .where(
            sized.c.n <= sa.bindparam("limit"),
            sa.or_(sized.c.n == 1, sized.c.total_size <= sa.bindparam("budget")),
        )
        .order_by(sized.c.pos)
    )


_RUN_PAGE = _page_query(run_records.c.run_id, run_records.c.seq)
_SESSION_PAGE = _page_query(run_records.c.session_id, run_records.c.session_seq)


class SqlStore:
    """The in-process store: implements ``Store``, ``SessionAdmin`` and ``MemoryStore``."""

    def __init__(
        self,
        engine: Engine,
        *,
        page_max: int = DEFAULT_PAGE_MAX,
        page_byte_budget: int = DEFAULT_PAGE_BYTE_BUDGET,
        clock: Callable[[], int] = now_millis,
        attempts: int = 5,
        limits: Limits | None = None,
        purge_batch: int = DEFAULT_PURGE_BATCH,
    ) -> None:
        self._engine = engine
        self._purge_batch = purge_batch
        self._limits = limits or Limits()
        self._page_max = page_max
        self._page_byte_budget = page_byte_budget
        self._clock = clock
        self._attempts = attempts

    # --- input bounds -----------------------------------------------------------------

    def _check_start(self, run: RunStart, *records: Record) -> None:
        self._limits.check_run_start(run)
        for record in records:
            self._limits.check_record(record)

    def _check_command(
        self,
        run_id: str,
        record: Record,
        *,
        reason: str = "",
        checkpoint: Checkpoint | None = None,
    ) -> None:
        self._limits.check_id(run_id, "run_id")
        self._limits.check_id(reason, "reason")
        self._limits.check_record(record)
        if checkpoint is not None:
            self._limits.check_checkpoint(checkpoint)

    # --- transactions -----------------------------------------------------------------

    def _transact(self, operation: Callable[[Tx], T], *, write: bool) -> T:
        """Run ``operation`` in one transaction, retrying transient failures.

        Every write is idempotent (records by their event keys, memory appends by their
        idempotency keys), so a retry after a commit whose outcome is unknown comes back
        as an exact retry.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._engine.connect() as conn:
                    if write:
                        conn.execution_options(**{WRITE_OPTION: True})
                    with conn.begin():
                        tx = Tx(conn, self._clock())
                        result = operation(tx)
                        tx.flush()
                    return result
            except StoreError:
                raise
            except sa.exc.DataError as exc:
                # A value the database cannot hold (e.g. NUL in text on PostgreSQL).
                raise InvalidArgumentError("a value cannot be stored or looked up") from exc
            except sa.exc.IntegrityError:
                # A concurrent writer stored the same key first; the next attempt sees it.
                if attempt >= self._attempts:
                    raise
            except sa.exc.DBAPIError as exc:
                if not is_transient(exc):
                    raise
                if attempt >= self._attempts:
                    raise UnavailableError("the database is unavailable; retry") from exc
            except sa.exc.TimeoutError as exc:
                if attempt >= self._attempts:
                    raise UnavailableError("no database connection is available") from exc
            time.sleep(random.uniform(0, min(0.2, 0.01 * 2**attempt)))

    def _write(self, operation: Callable[[Tx], T]) -> T:
        return self._transact(operation, write=True)

    def _read(self, operation: Callable[[Tx], T]) -> T:
        return self._transact(operation, write=False)

    # --- shared checks ----------------------------------------------------------------

    @staticmethod
    def _lock_start_session(tx: Tx, new: v.NewRun) -> tuple[SessionState | None, RunState | None]:
        """Steps 1 and 3 of a sessionful start: session lock, purge checks, existing run."""
        session = tx.session(new.session_id, lock=True)
        if session is not None and session.purged:
            raise _purged(new.session_id, new.run_id)
        existing = tx.run(new.run_id)
        if existing is None and tx.run_was_purged(new.run_id):
            raise SessionPurgedError(
                f"run {new.run_id!r} belonged to a purged session", run_id=new.run_id
            )
        return session, existing

    @staticmethod
    def _check_continuation(tx: Tx, new: v.NewRun) -> None:
        """CONTRACT.md 3.13, before the successor or any parent link is written."""
        predecessor = tx.run(new.predecessor_run_id)
        if predecessor is None:
            raise tx.missing_run_error(new.predecessor_run_id)
        facts = (
            ("status", predecessor.status.value, RunStatus.SUSPENDED.value),
            ("session_id", predecessor.session_id, new.session_id),
            ("agent_id", predecessor.agent_id, new.agent_id),
            ("parent_run_id", predecessor.parent_run_id, new.parent_run_id),
        )
        for name, actual, expected in facts:
            if actual != expected:
                raise RunConflictError(
                    f"predecessor run {predecessor.run_id!r} has {name} {actual!r}, "
                    f"the continuation needs {expected!r}",
                    run_id=new.run_id,
                )

    @staticmethod
    def _check_start_retry(
        existing: RunState, new: v.NewRun, started: v.NewRecord, canceled: v.NewRecord | None
    ) -> None:
        """Step 3 of a start: the stored identity and remembered keys must match."""
        if not _same_identity(existing, new):
            where = f"session {existing.session_id!r}" if existing.session_id else "no session"
            raise RunConflictError(
                f"run {new.run_id!r} already exists ({where}) with another identity",
                run_id=new.run_id,
            )
        if existing.start_key != started.event_key:
            raise RunConflictError(
                f"run {new.run_id!r} was started by event {existing.start_key!r}",
                run_id=new.run_id,
            )
        if (
            canceled is not None
            and existing.start_outcome is RunStartOutcome.STOP
            and existing.terminal_key != canceled.event_key
        ):
            raise RunConflictError(
                f"run {new.run_id!r} was stopped by event {existing.terminal_key!r}",
                run_id=new.run_id,
            )

    @staticmethod
    def _start_new(
        tx: Tx,
        session: SessionState,
        new: v.NewRun,
        started: v.NewRecord,
        canceled: v.NewRecord,
        *,
        parent_link_key: str | None = None,
    ) -> tuple[RunState, AppendResult, AppendResult | None]:
        """Step 5 of a sessionful start: proceed in an active session, stop in an ended one."""
        stop = session.status == SessionStatus.ENDED
        run = tx.create_run(
            new,
            outcome=RunStartOutcome.STOP if stop else RunStartOutcome.PROCEED,
            start_key=started.event_key,
            parent_link_key=parent_link_key,
        )
        started_result = tx.insert(run, started, session)
        if not stop:
            return run, started_result, None
        run.status = RunStatus.CANCELED
        run.cancellation_reason = "session_ended"
        run.terminal_key = canceled.event_key
        return run, started_result, tx.insert(run, canceled, session)

    # --- starts -----------------------------------------------------------------------

    def start_root_run(
        self, run: RunStart, started: Record, canceled: Record
    ) -> RootRunStartResult:
        """Start a root run of a session (CONTRACT.md 3.3)."""
        self._check_start(run, started, canceled)
        new = v.check_run_start(run, sessionful=True, child=False, continuation_allowed=True)
        started_rec = v.check_started_record(started, new)
        canceled_rec = v.check_canceled_record(canceled, new)
        if started_rec.event_key == canceled_rec.event_key:
            raise InvalidArgumentError("started and canceled must have different event keys")

        def operation(tx: Tx) -> RootRunStartResult:
            session, existing = self._lock_start_session(tx, new)
            if new.predecessor_run_id:
                self._check_continuation(tx, new)
            if existing is not None:
                self._check_start_retry(existing, new, started_rec, canceled_rec)
                stopped = existing.start_outcome is RunStartOutcome.STOP
                return RootRunStartResult(
                    outcome=existing.start_outcome,
                    run_status=existing.status,
                    started=tx.expect_stored(existing, started_rec, session),
                    canceled=tx.expect_stored(existing, canceled_rec, session) if stopped else None,
                )
            if session is None:
                raise SessionNotFoundError(
                    f"session {new.session_id!r} not found", session_id=new.session_id
                )
            created, started_result, canceled_result = self._start_new(
                tx, session, new, started_rec, canceled_rec
            )
            return RootRunStartResult(
                outcome=created.start_outcome,
                run_status=created.status,
                started=started_result,
                canceled=canceled_result,
            )

        return self._write(operation)

    def start_child_run(
        self, run: RunStart, parent_linked: Record, started: Record, canceled: Record
    ) -> ChildRunStartResult:
        """Start a child run linked from a running parent of the same session (3.4)."""
        self._check_start(run, parent_linked, started, canceled)
        new = v.check_run_start(run, sessionful=True, child=True, continuation_allowed=True)
        link_rec = v.check_link_record(parent_linked, new)
        started_rec = v.check_started_record(started, new)
        canceled_rec = v.check_canceled_record(canceled, new)
        if started_rec.event_key == canceled_rec.event_key:
            raise InvalidArgumentError("started and canceled must have different event keys")

        def operation(tx: Tx) -> ChildRunStartResult:
            session, existing = self._lock_start_session(tx, new)
            if new.predecessor_run_id:
                self._check_continuation(tx, new)
            parent = tx.existing_run(new.parent_run_id)
            tx.check_owner(parent, link_rec)
            if existing is not None:
                self._check_start_retry(existing, new, started_rec, canceled_rec)
                if existing.parent_link_key != link_rec.event_key:
                    raise RunConflictError(
                        f"run {new.run_id!r} was linked by event {existing.parent_link_key!r}",
                        run_id=new.run_id,
                    )
                stopped = existing.start_outcome is RunStartOutcome.STOP
                return ChildRunStartResult(
                    outcome=existing.start_outcome,
                    run_status=existing.status,
                    parent_record=tx.expect_stored(parent, link_rec, session),
                    started=tx.expect_stored(existing, started_rec, session),
                    canceled=tx.expect_stored(existing, canceled_rec, session) if stopped else None,
                )
            if session is None:
                raise SessionNotFoundError(
                    f"session {new.session_id!r} not found", session_id=new.session_id
                )
            self._check_new_child_parent(parent, new, tx.check_append(parent, link_rec))
            parent_result = tx.insert(parent, link_rec, session)
            created, started_result, canceled_result = self._start_new(
                tx, session, new, started_rec, canceled_rec, parent_link_key=link_rec.event_key
            )
            return ChildRunStartResult(
                outcome=created.start_outcome,
                run_status=created.status,
                parent_record=parent_result,
                started=started_result,
                canceled=canceled_result,
            )

        return self._write(operation)

    @staticmethod
    def _check_new_child_parent(parent: RunState, new: v.NewRun, stored_link: str | None) -> None:
        if parent.session_id != new.session_id:
            raise RunSessionMismatchError(
                f"parent run {parent.run_id!r} is not in session {new.session_id!r}",
                run_id=new.run_id,
                session_id=new.session_id,
            )
        if parent.status is not RunStatus.RUNNING:
            raise RunNotActiveError(
                f"parent run {parent.run_id!r} is {parent.status.value}; a new child needs "
                "a running parent",
                run_id=parent.run_id,
            )
        if stored_link is not None:
            raise RunConflictError(
                f"link {stored_link!r} of parent {parent.run_id!r} names a child that was "
                "never started",
                run_id=new.run_id,
            )

    def start_one_shot_run(self, run: RunStart, started: Record) -> OneShotRunStartResult:
        """Start a sessionless run (3.5)."""
        self._check_start(run, started)
        new = v.check_run_start(run, sessionful=False, child=False, continuation_allowed=False)
        started_rec = v.check_started_record(started, new)

        def operation(tx: Tx) -> OneShotRunStartResult:
            existing = tx.run(new.run_id)
            if existing is None:
                if tx.run_was_purged(new.run_id):
                    raise tx.missing_run_error(new.run_id)
                created = tx.create_run(
                    new, outcome=RunStartOutcome.PROCEED, start_key=started_rec.event_key
                )
                return OneShotRunStartResult(
                    run_status=created.status, record=tx.insert(created, started_rec, None)
                )
            self._check_start_retry(existing, new, started_rec, None)
            return OneShotRunStartResult(
                run_status=existing.status,
                record=tx.expect_stored(existing, started_rec, None),
            )

        return self._write(operation)

    def start_one_shot_child_run(
        self, run: RunStart, parent_linked: Record, started: Record
    ) -> OneShotChildRunStartResult:
        """Start a sessionless child of a running sessionless parent (3.6)."""
        self._check_start(run, parent_linked, started)
        new = v.check_run_start(run, sessionful=False, child=True, continuation_allowed=False)
        link_rec = v.check_link_record(parent_linked, new)
        started_rec = v.check_started_record(started, new)
        if link_rec.event_key == started_rec.event_key:
            raise InvalidArgumentError("parent_linked and started must have different event keys")

        def operation(tx: Tx) -> OneShotChildRunStartResult:
            parent = tx.existing_run(new.parent_run_id)
            if not parent.session_id and tx.row_locks:
                parent = tx.run(parent.run_id, lock=True) or parent
            existing = tx.run(new.run_id)
            if existing is None and tx.run_was_purged(new.run_id):
                raise tx.missing_run_error(new.run_id)
            if existing is not None:
                self._check_start_retry(existing, new, started_rec, None)
                if existing.parent_link_key != link_rec.event_key:
                    raise RunConflictError(
                        f"run {new.run_id!r} was linked by event {existing.parent_link_key!r}",
                        run_id=new.run_id,
                    )
                return OneShotChildRunStartResult(
                    run_status=existing.status,
                    parent_record=tx.expect_stored(parent, link_rec, None),
                    started=tx.expect_stored(existing, started_rec, None),
                )
            if parent.session_id:
                raise RunSessionMismatchError(
                    f"parent run {parent.run_id!r} belongs to a session; a one-shot child "
                    "needs a sessionless parent",
                    run_id=new.run_id,
                )
            if parent.status is not RunStatus.RUNNING:
                raise RunNotActiveError(
                    f"parent run {parent.run_id!r} is {parent.status.value}; a new child "
                    "needs a running parent",
                    run_id=parent.run_id,
                )
            stored_link = tx.check_append(parent, link_rec)
            self._check_new_child_parent(parent, new, stored_link)
            parent_result = tx.insert(parent, link_rec, None)
            created = tx.create_run(
                new,
                outcome=RunStartOutcome.PROCEED,
                start_key=started_rec.event_key,
                parent_link_key=link_rec.event_key,
            )
            return OneShotChildRunStartResult(
                run_status=created.status,
                parent_record=parent_result,
                started=tx.insert(created, started_rec, None),
            )

        return self._write(operation)

    # --- records and lifecycle --------------------------------------------------------

    def append_run_record(self, record: Record) -> AppendResult:
        """Append an ordinary record to a running run (3.7)."""
        self._limits.check_record(record)
        rec = v.check_ordinary_record(record)

        def operation(tx: Tx) -> AppendResult:
            run, session = tx.open_run(rec.run_id, rec.event_key)
            stored = tx.check_append(run, rec)
            if stored is not None:
                return tx.result(stored, inserted=False, session=session)
            if run.terminal:
                raise RunNotActiveError(
                    f"run {run.run_id!r} is {run.status.value}", run_id=run.run_id
                )
            return tx.insert(run, rec, session)

        return self._write(operation)

    def record_run_cancellation(self, run_id: str, reason: str, record: Record) -> AppendResult:
        """Store the first cancellation reason of a run with its intent record (3.8)."""
        self._check_command(run_id, record, reason=reason)
        rec = v.check_cancellation(run_id, reason, record)

        def operation(tx: Tx) -> AppendResult:
            run, session = tx.open_run(run_id, rec.event_key)
            if run.cancellation_reason and run.cancellation_reason != reason:
                raise RunCancellationConflictError(
                    f"run {run_id!r} was already canceled with reason {run.cancellation_reason!r}",
                    run_id=run_id,
                )
            stored = tx.check_append(run, rec)
            if stored is not None:
                return tx.result(stored, inserted=False, session=session)
            if not run.cancellation_reason and run.terminal:
                raise RunNotActiveError(f"run {run_id!r} is {run.status.value}", run_id=run_id)
            if run.cancellation_reason:
                raise RunCancellationConflictError(
                    f"run {run_id!r} cancellation was stored by another event", run_id=run_id
                )
            tx.change_run(run, cancellation_reason=reason, cancellation_key=rec.event_key)
            return tx.insert(run, rec, session)

        return self._write(operation)

    def record_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> AppendResult:
        """Suspend a run with its checkpoint and ``run_suspended`` record (3.9)."""
        self._check_command(run_id, record, checkpoint=checkpoint)
        rec = v.check_suspension(run_id, checkpoint, record)

        def operation(tx: Tx) -> AppendResult:
            run, session = tx.open_run(run_id, rec.event_key)
            return self._suspend(tx, run, session, checkpoint, rec)

        return self._write(operation)

    @staticmethod
    def _suspend(
        tx: Tx,
        run: RunState,
        session: SessionState | None,
        checkpoint: Checkpoint,
        rec: v.NewRecord,
    ) -> AppendResult:
        if run.terminal and run.status is not RunStatus.SUSPENDED:
            raise RunTerminalConflictError(
                f"run {run.run_id!r} is already {run.status.value}", run_id=run.run_id
            )
        stored_checkpoint = tx.checkpoint(run.run_id) if run.terminal else None
        if stored_checkpoint is not None and (
            stored_checkpoint.checkpoint_id != checkpoint.id
            or stored_checkpoint.data != bytes(checkpoint.data)
        ):
            raise RunSuspensionConflictError(
                f"run {run.run_id!r} holds another checkpoint", run_id=run.run_id
            )
        stored = tx.check_append(run, rec)
        if stored is not None:
            return tx.result(stored, inserted=False, session=session)
        if run.terminal:
            raise RunSuspensionConflictError(
                f"run {run.run_id!r} was suspended by another event", run_id=run.run_id
            )
        tx.change_run(
            run,
            status=RunStatus.SUSPENDED,
            suspension_key=rec.event_key,
            terminal_key=rec.event_key,
        )
        tx.add_checkpoint(run, checkpoint.id, bytes(checkpoint.data))
        return tx.insert(run, rec, session)

    def record_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> AppendResult:
        """Finish a run: completed, failed or canceled, with its ``run_completed`` (3.10)."""
        self._check_command(run_id, record)
        terminal, rec, payload = v.check_terminal(run_id, status, record)

        def operation(tx: Tx) -> AppendResult:
            run, session = tx.open_run(run_id, rec.event_key)
            self._check_terminal_against_run(run, terminal, payload)
            return self._finish(tx, run, session, terminal, rec)

        return self._write(operation)

    @staticmethod
    def _check_terminal_against_run(
        run: RunState, terminal: RunStatus, payload: RunCompletedPayload
    ) -> None:
        if v.labels_json(payload.labels) != run.labels_json:
            raise InvalidArgumentError("run_completed labels must equal the run's labels")
        if terminal is RunStatus.CANCELED:
            expected = run.cancellation_reason or "engine_canceled"
            if payload.cancellation_reason != expected:
                raise InvalidArgumentError(
                    f"run_completed cancellation reason must be {expected!r}, "
                    f"not {payload.cancellation_reason!r}"
                )

    @staticmethod
    def _finish(
        tx: Tx,
        run: RunState,
        session: SessionState | None,
        terminal: RunStatus,
        rec: v.NewRecord,
    ) -> AppendResult:
        if run.terminal and run.status is not terminal:
            raise RunTerminalConflictError(
                f"run {run.run_id!r} is already {run.status.value}", run_id=run.run_id
            )
        stored = tx.check_append(run, rec)
        if stored is not None:
            return tx.result(stored, inserted=False, session=session)
        if run.terminal:
            raise RunTerminalConflictError(
                f"run {run.run_id!r} was finished by another event", run_id=run.run_id
            )
        tx.change_run(run, status=terminal, terminal_key=rec.event_key)
        return tx.insert(run, rec, session)

    def repair_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> RepairResult:
        """Make sure a suspension is stored; a different final state is reported (3.11)."""
        self._check_command(run_id, record, checkpoint=checkpoint)
        rec = v.check_suspension(run_id, checkpoint, record)

        def operation(tx: Tx) -> RepairResult:
            run, session = tx.open_run(run_id, rec.event_key)
            if run.status is RunStatus.RUNNING:
                result = self._suspend(tx, run, session, checkpoint, rec)
                return RepairResult(outcome=RepairOutcome.STORED, status=run.status, record=result)
            stored_checkpoint = tx.checkpoint(run_id)
            if (
                run.status is RunStatus.SUSPENDED
                and run.suspension_key == rec.event_key
                and stored_checkpoint is not None
                and stored_checkpoint.checkpoint_id == checkpoint.id
                and stored_checkpoint.data == bytes(checkpoint.data)
            ):
                return self._already_stored(tx, run, session, rec)
            return RepairResult(outcome=RepairOutcome.DIFFERENT_TERMINAL, status=run.status)

        return self._write(operation)

    def repair_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> RepairResult:
        """Make sure a terminal status is stored; a different one is reported (3.11)."""
        self._check_command(run_id, record)
        terminal, rec, payload = v.check_terminal(run_id, status, record)

        def operation(tx: Tx) -> RepairResult:
            run, session = tx.open_run(run_id, rec.event_key)
            self._check_terminal_against_run(run, terminal, payload)
            if run.status is RunStatus.RUNNING:
                result = self._finish(tx, run, session, terminal, rec)
                return RepairResult(outcome=RepairOutcome.STORED, status=run.status, record=result)
            if run.status is terminal and run.terminal_key == rec.event_key:
                return self._already_stored(tx, run, session, rec)
            return RepairResult(outcome=RepairOutcome.DIFFERENT_TERMINAL, status=run.status)

        return self._write(operation)

    @staticmethod
    def _already_stored(
        tx: Tx, run: RunState, session: SessionState | None, rec: v.NewRecord
    ) -> RepairResult:
        try:
            stored = tx.check_append(run, rec)
        except StoreError:
            stored = None
        if stored is None:
            return RepairResult(outcome=RepairOutcome.DIFFERENT_TERMINAL, status=run.status)
        return RepairResult(
            outcome=RepairOutcome.ALREADY_STORED,
            status=run.status,
            record=tx.result(stored, inserted=False, session=session),
        )

    # --- reads ------------------------------------------------------------------------

    def load_run(self, run_id: str) -> RunMeta:
        """The run's meta (3.12)."""
        v.require_id(run_id, "run_id")
        return self._read(lambda tx: _run_meta(tx.existing_run(run_id)))

    def load_run_suspension(self, run_id: str) -> Checkpoint:
        """The checkpoint of a suspended run (3.12)."""
        v.require_id(run_id, "run_id")

        def operation(tx: Tx) -> Checkpoint:
            tx.existing_run(run_id)
            stored = tx.checkpoint(run_id)
            if stored is None:
                raise RunSuspensionNotFoundError(
                    f"run {run_id!r} has no suspension checkpoint", run_id=run_id
                )
            return Checkpoint(id=stored.checkpoint_id, data=stored.data)

        return self._read(operation)

    def load_session_status(self, session_id: str) -> SessionStatus:
        """``active`` or ``ended`` (3.2)."""
        return self._read(lambda tx: self._readable_session(tx, session_id).contract_status)

    @staticmethod
    def _readable_session(tx: Tx, session_id: str) -> SessionState:
        session = tx.session(session_id, lock=False) if session_id else None
        if session is None:
            raise SessionNotFoundError(f"session {session_id!r} not found", session_id=session_id)
        if session.purged:
            raise _purged(session_id)
        return session

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of one run's records, oldest first (section 4)."""
        v.require_id(run_id, "run_id")
        size = cursors.check_limit(limit, self._page_max)

        def operation(tx: Tx) -> Page:
            run = tx.existing_run(run_id)
            after = cursors.decode_record_id_cursor(cursor, run.record_count)
            records, more, _ = self._record_page(tx, _RUN_PAGE, run_id, after, size)
            return Page(records=records, next_cursor=records[-1].id if more else "")

        return self._read(operation)

    def list_session_run_records(self, session_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of every record of a session's runs, in commit order (section 4)."""
        size = cursors.check_limit(limit, self._page_max)

        def operation(tx: Tx) -> Page:
            session = self._readable_session(tx, session_id)
            after = cursors.decode_session_position(cursor, session.record_count)
            records, more, last = self._record_page(tx, _SESSION_PAGE, session_id, after, size)
            next_cursor = cursors.encode_session_position(last) if more else ""
            return Page(records=records, next_cursor=next_cursor)

        return self._read(operation)

    def _record_page(
        self, tx: Tx, query: sa.Select[Any], owner: str, after: int, limit: int
    ) -> tuple[list[Record], bool, int]:
        """Up to ``limit`` records after ``after``, cut at the byte budget, in one query.

        Returns the records, whether more existed at read time, and the last position.
        """
        rows = tx.conn.execute(
            query,
            {
                "owner": owner,
                "after": after,
                "limit": limit,
                "limit_plus_one": limit + 1,
                "budget": self._page_byte_budget,
            },
        ).all()
        if not rows:
            return [], False, after
        return [record_from_row(row) for row in rows], rows[0].found > len(rows), rows[-1].pos

    # --- session administration -------------------------------------------------------

    def create_session(self, session_id: str, created_at: Any) -> Session:
        """Create an active session, or return the active one unchanged (3.1)."""
        self._limits.check_id(session_id, "session_id")
        v.require_id(session_id, "session_id")
        created_ms = to_millis(created_at, "created_at")

        def operation(tx: Tx) -> Session:
            session = tx.session(session_id, lock=True)
            if session is None:
                tx.conn.execute(
                    sessions.insert().values(
                        session_id=session_id,
                        status=SessionStatus.ACTIVE.value,
                        created_at_ms=created_ms,
                        record_count=0,
                    )
                )
                return Session(
                    id=session_id, status=SessionStatus.ACTIVE, created_at=from_millis(created_ms)
                )
            if session.purged:
                raise _purged(session_id)
            if session.status == SessionStatus.ENDED:
                raise SessionEndedError(f"session {session_id!r} has ended", session_id=session_id)
            return _session(session)

        return self._write(operation)

    def load_session(self, session_id: str) -> Session:
        """The session (3.1)."""
        return self._read(lambda tx: _session(self._readable_session(tx, session_id)))

    def end_session(self, session_id: str, ended_at: Any) -> Session:
        """End a session: running runs continue, new starts stop (3.1)."""
        v.require_id(session_id, "session_id")
        ended_ms = to_millis(ended_at, "ended_at")

        def operation(tx: Tx) -> Session:
            session = tx.session(session_id, lock=True)
            if session is None:
                raise SessionNotFoundError(
                    f"session {session_id!r} not found", session_id=session_id
                )
            if session.purged:
                raise _purged(session_id)
            if session.status == SessionStatus.ACTIVE:
                session.status = SessionStatus.ENDED.value
                session.ended_at_ms = ended_ms
                tx.mark_session(session)
            return _session(session)

        return self._write(operation)

    def purge_session(self, session_id: str) -> None:
        """Delete an ended session with everything it holds; its IDs stay reserved (3.1).

        The first transaction is the purge as callers see it: it checks the session, marks
        it purged and moves its runs to tombstones, so from its commit on every operation
        naming the session or one of its runs answers ``session_purged`` and nothing of it
        can be read. The runs' records and checkpoints, unreachable from then on, are
        deleted afterwards in batches of short transactions, so the purge never holds the
        write lock (SQLite) for long. A purge cut short after its first transaction is
        finished by the next purge of the session (every retry).
        """
        v.require_id(session_id, "session_id")

        def operation(tx: Tx) -> None:
            session = tx.session(session_id, lock=True)
            if session is None:
                raise SessionNotFoundError(
                    f"session {session_id!r} not found", session_id=session_id
                )
            if session.purged:
                return
            if session.status == SessionStatus.ACTIVE:
                raise SessionActiveError(
                    f"session {session_id!r} is active; end it first", session_id=session_id
                )
            running = tx.conn.execute(
                sa.select(runs.c.run_id)
                .where(runs.c.session_id == session_id, runs.c.status == RunStatus.RUNNING.value)
                .limit(1)
            ).first()
            if running is not None:
                raise SessionHasActiveRunsError(
                    f"run {running.run_id!r} of session {session_id!r} is still running",
                    session_id=session_id,
                    run_id=running.run_id,
                )
            tx.conn.execute(
                run_tombstones.insert().from_select(
                    ["run_id", "session_id"],
                    sa.select(runs.c.run_id, runs.c.session_id).where(
                        runs.c.session_id == session_id
                    ),
                )
            )
            tx.conn.execute(runs.delete().where(runs.c.session_id == session_id))
            tx.conn.execute(
                sessions.update()
                .where(sessions.c.session_id == session_id)
                .values(status=PURGED, purged_at_ms=tx.now_ms)
            )

        self._write(operation)
        self._delete_purged_rows(session_id)

    def _delete_purged_rows(self, session_id: str) -> None:
        """Delete the records and checkpoints of the session's tombstoned runs.

        At most ``purge_batch`` records per transaction: whole small runs together, large
        runs by ranges of record IDs (key ranges, so no batch rescans what an earlier one
        deleted). On SQLite a pause as long as the batch follows each one, so a writer
        waiting in its busy handler gets the lock in between.
        """
        rows = self._read(
            lambda tx: tx.conn.execute(_PURGED_RUN_SIZES, {"session_id": session_id}).all()
        )
        batches: list[sa.Delete] = []
        small: list[str] = []
        small_records = 0
        for run_id, top in rows:
            if top is None:
                continue
            if top >= self._purge_batch:
                batches.extend(
                    run_records.delete().where(
                        run_records.c.run_id == run_id,
                        run_records.c.seq > low,
                        run_records.c.seq <= low + self._purge_batch,
                    )
                    for low in range(0, top, self._purge_batch)
                )
                continue
            if small_records + top > self._purge_batch:
                batches.append(run_records.delete().where(run_records.c.run_id.in_(small)))
                small, small_records = [], 0
            small.append(run_id)
            small_records += top
        if small:
            batches.append(run_records.delete().where(run_records.c.run_id.in_(small)))
        batches.append(
            checkpoints.delete().where(
                checkpoints.c.run_id.in_(
                    sa.select(run_tombstones.c.run_id).where(
                        run_tombstones.c.session_id == session_id
                    )
                )
            )
        )
        pause = self._engine.dialect.name == "sqlite"
        for statement in batches:
            started = time.perf_counter()
            self._write(functools.partial(_execute, statement))
            if pause:
                time.sleep(time.perf_counter() - started)

    def list_session_runs(
        self,
        session_id: str,
        statuses: Sequence[RunStatus] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage:
        """A page of a session's runs by ``started_at`` then ``run_id`` (3.1)."""
        size = cursors.check_limit(limit, self._page_max)
        try:
            wanted = sorted({RunStatus(status).value for status in statuses})
        except ValueError:
            raise InvalidArgumentError(f"unknown run status in {list(statuses)!r}") from None
        after = cursors.decode_run_position(cursor)

        def operation(tx: Tx) -> RunPage:
            self._readable_session(tx, session_id)
            query = sa.select(runs).where(runs.c.session_id == session_id)
            if wanted:
                query = query.where(runs.c.status.in_(wanted))
            if after is not None:
                query = query.where(
                    sa.tuple_(runs.c.started_at_ms, runs.c.run_id) > sa.tuple_(*after)
                )
            query = query.order_by(runs.c.started_at_ms, runs.c.run_id).limit(size + 1)
            rows = tx.conn.execute(query).all()
            page = [_run_meta(run_from_row(row)) for row in rows[:size]]
            next_cursor = ""
            if len(rows) > size:
                last = rows[size - 1]
                next_cursor = cursors.encode_run_position(last.started_at_ms, last.run_id)
            return RunPage(runs=page, next_cursor=next_cursor)

        return self._read(operation)

    # --- memory -----------------------------------------------------------------------

    def load_memory(self, agent_id: str, run_id: str) -> Snapshot:
        """Every memory event of an agent's run, in append order (section 9)."""
        v.require_id(agent_id, "agent_id")
        v.require_id(run_id, "run_id")

        def operation(tx: Tx) -> Snapshot:
            rows = tx.conn.execute(
                sa.select(memory_events)
                .where(memory_events.c.agent_id == agent_id, memory_events.c.run_id == run_id)
                .order_by(memory_events.c.id)
            ).all()
            return Snapshot(
                agent_id=agent_id,
                run_id=run_id,
                events=[
                    MemoryEvent(
                        type=row.type,
                        timestamp=from_millis(row.timestamp_ms),
                        data=json.loads(row.data),
                        labels=json.loads(row.labels),
                    )
                    for row in rows
                ],
            )

        return self._read(operation)

    def append_memory_events(
        self,
        agent_id: str,
        run_id: str,
        events: Sequence[MemoryEvent],
        *,
        idempotency_key: str = "",
    ) -> None:
        """Append memory events atomically; none is a no-op (section 9).

        Memory events carry no event keys, so each append has one: the caller's
        ``idempotency_key`` (the HTTP client sends one per call and keeps it across its
        retries), or a fresh one. An append whose key was already accepted for the agent's
        run is a no-op, so a retry after a lost answer never stores the events twice.
        """
        v.require_id(agent_id, "agent_id")
        v.require_id(run_id, "run_id")
        self._limits.check_id(agent_id, "agent_id")
        self._limits.check_id(run_id, "run_id")
        self._limits.check_id(idempotency_key, "idempotency_key")
        rows = [
            _memory_row(agent_id, run_id, event, index, self._limits)
            for index, event in enumerate(events)
        ]
        if not rows:
            return
        key = idempotency_key or uuid.uuid4().hex

        def operation(tx: Tx) -> None:
            accepted = tx.conn.execute(
                sa.select(memory_batches.c.idempotency_key).where(
                    memory_batches.c.agent_id == agent_id,
                    memory_batches.c.run_id == run_id,
                    memory_batches.c.idempotency_key == key,
                )
            ).first()
            if accepted is not None:
                return
            tx.conn.execute(
                memory_batches.insert().values(
                    agent_id=agent_id, run_id=run_id, idempotency_key=key, appended_at_ms=tx.now_ms
                )
            )
            tx.conn.execute(memory_events.insert(), rows)

        self._write(operation)


def _mapping_as_dict(value: object) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _memory_row(
    agent_id: str, run_id: str, event: MemoryEvent, index: int, limits: Limits
) -> dict[str, Any]:
    what = f"events[{index}]"
    if not isinstance(event, MemoryEvent):
        raise InvalidArgumentError(f"{what} must be a MemoryEvent")
    if event.type not in MEMORY_EVENT_TYPES:
        raise InvalidArgumentError(
            f"{what}.type must be one of {sorted(MEMORY_EVENT_TYPES)}, not {event.type!r}"
        )
    if not isinstance(event.data, Mapping):
        raise InvalidArgumentError(f"{what}.data must be a JSON object")
    try:
        data = json.dumps(
            dict(event.data),
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
            default=_mapping_as_dict,
        )
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{what}.data is not JSON: {exc}") from None
    limits.check_data_size(len(data.encode()), f"{what}.data")
    limits.check_labels(event.labels, f"{what}.labels")
    labels = v.check_labels(event.labels, f"{what}.labels")
    return {
        "agent_id": agent_id,
        "run_id": run_id,
        "type": event.type,
        "timestamp_ms": to_millis(event.timestamp, f"{what}.timestamp"),
        "data": data,
        "labels": v.labels_json(labels),
    }
