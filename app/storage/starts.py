"""The four engine starts (CONTRACT.md 3.3-3.6, with request digests: 12.1), the
synchronous start (12.2) and continuation admission (3.13, 12.4).

Each start validates its input without state. On PostgreSQL a new engine run without a
request digest in an active session (or none) is then one statement
(``fast_path.start_run``, migration 0012) that refuses anything else. Otherwise, in one
transaction, a start takes the lock that serialises it (the session's row for a sessionful
start, the parent's row for a one-shot child), checks purge, answers an existing run ID as
a retry (the request digest first, then the kind, then identity and remembered keys; the
records go through the append check, or, for a closed run replayed with its digest, are
compared but for their times), checks the continuation, and otherwise creates the run,
``proceed`` in an active session and ``stop`` in an ended one.
"""

from __future__ import annotations

from app.domain import payloads, starts
from app.domain import validation as v
from app.domain.append import check_owner
from app.domain.state import RunState, SessionState, StoredRecord
from runtime_store_client import (
    AppendResult,
    ChildRunStartResult,
    InvalidArgumentError,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Record,
    RootRunStartResult,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    SessionPurgedError,
    StoreError,
    WebhookEventType,
)

from . import fast_path
from .append_check import check_append, expect_stored, insert, result
from .context import Context
from .fast_path import StartResults
from .sessions import not_found
from .unit_of_work import Tx, purged_error


def _in_one_statement(
    ctx: Context,
    new: v.NewRun,
    started: v.NewRecord,
    link: v.NewRecord | None = None,
    digest: bytes | None = None,
) -> StartResults | None:
    """PostgreSQL: a new run in an active session (or none) in one round trip
    (``fast_path.start_run``); ``None`` sends the start through its transaction, which
    answers retries, stops in an ended session, continuations, starts with a request
    digest (the function stores none) and every error."""
    if not ctx.uow.dialect.fast_path or new.predecessor_run_id or digest is not None:
        return None
    return ctx.uow.statement(lambda tx: fast_path.start_run(tx, new, started, link))


def _check_bounds(ctx: Context, run: RunStart, *records: Record) -> None:
    ctx.limits.check_run_start(run)
    for record in records:
        ctx.limits.check_record(record)


def _distinct_keys(first: v.NewRecord, second: v.NewRecord, names: str) -> None:
    if first.event_key == second.event_key:
        raise InvalidArgumentError(f"{names} must have different event keys")


def _lock_session(tx: Tx, new: v.NewRun) -> tuple[SessionState | None, RunState | None]:
    """Steps 1 and 3 of a sessionful start: session lock, purge checks, existing run."""
    session = tx.session(new.session_id, lock=True)
    if session is not None and session.purged:
        raise purged_error(new.session_id, new.run_id)
    return session, _existing(tx, new)


def _existing(tx: Tx, new: v.NewRun) -> RunState | None:
    """The run of a start's ID if it exists; ``session_purged`` if its session was purged."""
    existing = tx.run(new.run_id)
    if existing is None and tx.run_was_purged(new.run_id):
        raise SessionPurgedError(
            f"run {new.run_id!r} belonged to a purged session", run_id=new.run_id
        )
    return existing


def _retried(existing: RunState, digest: bytes | None) -> bool:
    """The first checks of an engine start's retry: its request digest (12.1, before any
    other), then its kind (12.2). Whether it replays a closed run's start (12.1)."""
    starts.check_digest(existing, digest)
    starts.check_kind(existing, RunStartKind.ENGINE)
    return starts.replays_closed_start(existing, digest)


def _stored(tx: Tx, run_id: str, event_key: str | None) -> StoredRecord | None:
    return None if event_key is None else tx.stored_record(run_id, event_key)


def _original(stored: StoredRecord | None, session: SessionState | None) -> AppendResult:
    """The append result of a record a replayed start found (``check_replay`` passed)."""
    assert stored is not None
    return result(str(stored.seq), inserted=False, session=session)


def _admit_continuation(tx: Tx, new: v.NewRun, link: v.NewRecord | None = None) -> None:
    """3.13, before the successor or any parent link is written; a child continuation
    under another parent than its predecessor's also checks that parent (12.4)."""
    if not new.predecessor_run_id:
        return
    predecessor = tx.run(new.predecessor_run_id)
    if predecessor is None:
        raise tx.missing_run_error(new.predecessor_run_id)
    if not starts.continuation(predecessor, new):
        return
    if link is not None and starts.moves_parent(predecessor, new):
        parent = tx.existing_run(new.parent_run_id)
        original = _stored(tx, predecessor.parent_run_id, predecessor.parent_link_key)
        starts.check_moved_parent(
            parent,
            new,
            link,
            payloads.decode_child_run_linked(link.payload),
            original,
            None if original is None else _linked(original),
        )
    tx.change_run(predecessor, successor_run_id=new.run_id)


def _linked(stored: StoredRecord) -> payloads.ChildRunLinkedPayload | None:
    try:
        return payloads.decode_child_run_linked(stored.record.payload)
    except StoreError:
        return None


def _retried_canceled(
    tx: Tx, existing: RunState, canceled: v.NewRecord, session: SessionState | None
) -> AppendResult | None:
    if existing.start_outcome is not RunStartOutcome.STOP:
        return None
    return expect_stored(tx, existing, canceled, session)


def _start_new(
    tx: Tx,
    session: SessionState,
    new: v.NewRun,
    started: v.NewRecord,
    canceled: v.NewRecord,
    *,
    parent_link_key: str | None = None,
    digest: bytes | None = None,
) -> tuple[RunState, AppendResult, AppendResult | None]:
    """Step 5 of a sessionful start: proceed in an active session, stop in an ended one."""
    outcome = starts.outcome(session)
    run = tx.create_run(
        new,
        outcome=outcome,
        start_key=started.event_key,
        parent_link_key=parent_link_key,
        request_digest=digest,
    )
    started_result = insert(tx, run, started, session)
    if outcome is RunStartOutcome.PROCEED:
        return run, started_result, None
    for name, value in starts.stopped(canceled).items():
        setattr(run, name, value)
    # A run stopped at start is canceled: it gets its run.finished (13.1).
    tx.add_event(WebhookEventType.RUN_FINISHED, session_id=run.session_id, run=run)
    return run, started_result, insert(tx, run, canceled, session)


def start_root_run(
    ctx: Context,
    run: RunStart,
    started: Record,
    canceled: Record,
    request_digest: bytes | None = None,
) -> RootRunStartResult:
    """Start a root run of a session (3.3, 12.1)."""
    _check_bounds(ctx, run, started, canceled)
    digest = v.check_request_digest(request_digest)
    new = v.check_run_start(run, sessionful=True, child=False, continuation_allowed=True)
    started_rec = v.check_started_record(started, new)
    canceled_rec = v.check_canceled_record(canceled, new)
    _distinct_keys(started_rec, canceled_rec, "started and canceled")
    stored = _in_one_statement(ctx, new, started_rec, digest=digest)
    if stored is not None:
        return RootRunStartResult(
            outcome=RunStartOutcome.PROCEED,
            run_status=RunStatus.RUNNING,
            started=stored.started,
            canceled=None,
        )

    def operation(tx: Tx) -> RootRunStartResult:
        session, existing = _lock_session(tx, new)
        replay = existing is not None and _retried(existing, digest)
        _admit_continuation(tx, new)
        if existing is not None and replay:
            return _replayed_root(tx, existing, new, started_rec, canceled_rec, session)
        if existing is not None:
            starts.check_retry(existing, new, started_rec, canceled_rec)
            return RootRunStartResult(
                outcome=existing.start_outcome,
                run_status=existing.status,
                started=expect_stored(tx, existing, started_rec, session),
                canceled=_retried_canceled(tx, existing, canceled_rec, session),
            )
        if session is None:
            raise not_found(new.session_id)
        created, started_result, canceled_result = _start_new(
            tx, session, new, started_rec, canceled_rec, digest=digest
        )
        return RootRunStartResult(
            outcome=created.start_outcome,
            run_status=created.status,
            started=started_result,
            canceled=canceled_result,
        )

    return ctx.uow.write(operation)


def _replayed_root(
    tx: Tx,
    existing: RunState,
    new: v.NewRun,
    started: v.NewRecord,
    canceled: v.NewRecord,
    session: SessionState | None,
) -> RootRunStartResult:
    """12.1: a closed root run's start replayed with its digest: the original answer."""
    starts.check_retry(existing, new, started, canceled, times=False)
    found = _stored(tx, existing.run_id, existing.start_key)
    records = [("run_started", started, found)]
    stopped = None
    if existing.start_outcome is RunStartOutcome.STOP:
        stopped = _stored(tx, existing.run_id, existing.terminal_key)
        records.append(("canceled", canceled, stopped))
    starts.check_replay(existing, new, records)
    return RootRunStartResult(
        outcome=existing.start_outcome,
        run_status=existing.status,
        started=_original(found, session),
        canceled=None if stopped is None else _original(stopped, session),
    )


def start_child_run(
    ctx: Context,
    run: RunStart,
    parent_linked: Record,
    started: Record,
    canceled: Record,
    request_digest: bytes | None = None,
) -> ChildRunStartResult:
    """Start a child run linked from a running parent of the same session (3.4, 12.1,
    12.4)."""
    _check_bounds(ctx, run, parent_linked, started, canceled)
    digest = v.check_request_digest(request_digest)
    new = v.check_run_start(run, sessionful=True, child=True, continuation_allowed=True)
    link_rec = v.check_link_record(parent_linked, new)
    started_rec = v.check_started_record(started, new)
    canceled_rec = v.check_canceled_record(canceled, new)
    _distinct_keys(started_rec, canceled_rec, "started and canceled")
    stored = _in_one_statement(ctx, new, started_rec, link_rec, digest)
    if stored is not None and stored.linked is not None:
        return ChildRunStartResult(
            outcome=RunStartOutcome.PROCEED,
            run_status=RunStatus.RUNNING,
            parent_record=stored.linked,
            started=stored.started,
            canceled=None,
        )

    def operation(tx: Tx) -> ChildRunStartResult:
        session, existing = _lock_session(tx, new)
        replay = existing is not None and _retried(existing, digest)
        _admit_continuation(tx, new, link_rec)
        parent = tx.existing_run(new.parent_run_id)
        check_owner(parent, link_rec)
        if existing is not None and replay:
            return _replayed_child(
                tx, existing, parent, new, (link_rec, started_rec, canceled_rec), session
            )
        if existing is not None:
            # No running-parent check: an accepted child's retry stays valid.
            starts.check_retry(existing, new, started_rec, canceled_rec, link_rec)
            return ChildRunStartResult(
                outcome=existing.start_outcome,
                run_status=existing.status,
                parent_record=expect_stored(tx, parent, link_rec, session),
                started=expect_stored(tx, existing, started_rec, session),
                canceled=_retried_canceled(tx, existing, canceled_rec, session),
            )
        if session is None:
            raise not_found(new.session_id)
        starts.check_new_child_parent(parent, new, check_append(tx, parent, link_rec))
        parent_result = insert(tx, parent, link_rec, session)
        created, started_result, canceled_result = _start_new(
            tx,
            session,
            new,
            started_rec,
            canceled_rec,
            parent_link_key=link_rec.event_key,
            digest=digest,
        )
        return ChildRunStartResult(
            outcome=created.start_outcome,
            run_status=created.status,
            parent_record=parent_result,
            started=started_result,
            canceled=canceled_result,
        )

    return ctx.uow.write(operation)


def _replayed_child(
    tx: Tx,
    existing: RunState,
    parent: RunState,
    new: v.NewRun,
    records: tuple[v.NewRecord, v.NewRecord, v.NewRecord],
    session: SessionState | None,
) -> ChildRunStartResult:
    """12.1: a closed child run's start replayed with its digest: the original answer."""
    link, started, canceled = records
    starts.check_retry(existing, new, started, canceled, link, times=False)
    linked = _stored(tx, parent.run_id, existing.parent_link_key)
    found = _stored(tx, existing.run_id, existing.start_key)
    compared = [("child_run_linked", link, linked), ("run_started", started, found)]
    stopped = None
    if existing.start_outcome is RunStartOutcome.STOP:
        stopped = _stored(tx, existing.run_id, existing.terminal_key)
        compared.append(("canceled", canceled, stopped))
    starts.check_replay(existing, new, compared)
    return ChildRunStartResult(
        outcome=existing.start_outcome,
        run_status=existing.status,
        parent_record=_original(linked, session),
        started=_original(found, session),
        canceled=None if stopped is None else _original(stopped, session),
    )


def start_one_shot_run(
    ctx: Context, run: RunStart, started: Record, request_digest: bytes | None = None
) -> OneShotRunStartResult:
    """Start a sessionless run (3.5, 12.1)."""
    _check_bounds(ctx, run, started)
    digest = v.check_request_digest(request_digest)
    new = v.check_run_start(run, sessionful=False, child=False, continuation_allowed=False)
    started_rec = v.check_started_record(started, new)
    stored = _in_one_statement(ctx, new, started_rec, digest=digest)
    if stored is not None:
        return OneShotRunStartResult(run_status=RunStatus.RUNNING, record=stored.started)

    def operation(tx: Tx) -> OneShotRunStartResult:
        existing = _existing(tx, new)
        if existing is None:
            created = tx.create_run(
                new,
                outcome=RunStartOutcome.PROCEED,
                start_key=started_rec.event_key,
                request_digest=digest,
            )
            return OneShotRunStartResult(
                run_status=created.status, record=insert(tx, created, started_rec, None)
            )
        if _retried(existing, digest):
            starts.check_retry(existing, new, started_rec, times=False)
            found = _stored(tx, existing.run_id, existing.start_key)
            starts.check_replay(existing, new, [("run_started", started_rec, found)])
            return OneShotRunStartResult(run_status=existing.status, record=_original(found, None))
        starts.check_retry(existing, new, started_rec)
        return OneShotRunStartResult(
            run_status=existing.status, record=expect_stored(tx, existing, started_rec, None)
        )

    return ctx.uow.write(operation)


def start_one_shot_child_run(
    ctx: Context,
    run: RunStart,
    parent_linked: Record,
    started: Record,
    request_digest: bytes | None = None,
) -> OneShotChildRunStartResult:
    """Start a sessionless child of a running sessionless parent (3.6, 12.1)."""
    _check_bounds(ctx, run, parent_linked, started)
    digest = v.check_request_digest(request_digest)
    new = v.check_run_start(run, sessionful=False, child=True, continuation_allowed=False)
    link_rec = v.check_link_record(parent_linked, new)
    started_rec = v.check_started_record(started, new)
    _distinct_keys(link_rec, started_rec, "parent_linked and started")
    stored = _in_one_statement(ctx, new, started_rec, link_rec, digest)
    if stored is not None and stored.linked is not None:
        return OneShotChildRunStartResult(
            run_status=RunStatus.RUNNING, parent_record=stored.linked, started=stored.started
        )

    def operation(tx: Tx) -> OneShotChildRunStartResult:
        parent = tx.existing_run(new.parent_run_id)
        if not parent.session_id:
            parent = tx.lock_sessionless(parent)
        existing = _existing(tx, new)
        if existing is not None and _retried(existing, digest):
            starts.check_retry(existing, new, started_rec, link=link_rec, times=False)
            linked = _stored(tx, parent.run_id, existing.parent_link_key)
            found = _stored(tx, existing.run_id, existing.start_key)
            starts.check_replay(
                existing,
                new,
                [("child_run_linked", link_rec, linked), ("run_started", started_rec, found)],
            )
            return OneShotChildRunStartResult(
                run_status=existing.status,
                parent_record=_original(linked, None),
                started=_original(found, None),
            )
        if existing is not None:
            starts.check_retry(existing, new, started_rec, link=link_rec)
            return OneShotChildRunStartResult(
                run_status=existing.status,
                parent_record=expect_stored(tx, parent, link_rec, None),
                started=expect_stored(tx, existing, started_rec, None),
            )
        # 3.6 orders the parent's session and status before the link's owner (3.4 after).
        starts.check_new_child_parent(parent, new, None)
        starts.check_new_child_parent(parent, new, check_append(tx, parent, link_rec))
        parent_result = insert(tx, parent, link_rec, None)
        created = tx.create_run(
            new,
            outcome=RunStartOutcome.PROCEED,
            start_key=started_rec.event_key,
            parent_link_key=link_rec.event_key,
            request_digest=digest,
        )
        return OneShotChildRunStartResult(
            run_status=created.status,
            parent_record=parent_result,
            started=insert(tx, created, started_rec, None),
        )

    return ctx.uow.write(operation)


def start_synchronous_run(
    ctx: Context, run: RunStart, started: Record, request_digest: bytes | None = None
) -> OneShotRunStartResult:
    """Start a run for an inline callback no workflow engine accepted (12.2): sessionless,
    parentless, ``running``; its retries repeat the exact command in every status."""
    _check_bounds(ctx, run, started)
    v.check_no_request_digest(request_digest)
    new = v.check_run_start(run, sessionful=False, child=False, continuation_allowed=False)
    started_rec = v.check_started_record(started, new)

    def operation(tx: Tx) -> OneShotRunStartResult:
        existing = _existing(tx, new)
        if existing is None:
            created = tx.create_run(
                new,
                outcome=RunStartOutcome.PROCEED,
                start_key=started_rec.event_key,
                start_kind=RunStartKind.SYNCHRONOUS,
            )
            return OneShotRunStartResult(
                run_status=created.status, record=insert(tx, created, started_rec, None)
            )
        starts.check_kind(existing, RunStartKind.SYNCHRONOUS)
        found = _stored(tx, existing.run_id, existing.start_key)
        starts.check_synchronous_retry(existing, new, started_rec, found)
        return OneShotRunStartResult(run_status=existing.status, record=_original(found, None))

    return ctx.uow.write(operation)
