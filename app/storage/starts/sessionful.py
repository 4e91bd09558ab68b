"""Starts in a session (CONTRACT.md 3.3, 3.4, 12.1, 12.4): root and child runs, their
retries and replays, continuations."""

from __future__ import annotations

from app.domain import starts
from app.domain import validation as v
from app.domain.append import check_owner
from app.domain.state import RunState, SessionState
from app.storage.operation import Context
from app.storage.records.inserts import check_append, expect_stored, insert
from app.storage.seeds.starts import check_start_seed
from app.storage.sessions.administration import not_found
from app.storage.starts.common import (
    _admit_continuation,
    _check_bounds,
    _distinct_keys,
    _in_one_statement,
    _lock_session,
    _original,
    _retried,
    _retried_canceled,
    _start_new,
    _stored,
)
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    ChildRunStartResult,
    Record,
    RootRunStartResult,
    RunStart,
    RunStartOutcome,
    RunStatus,
)


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
        check_start_seed(tx, new, existing, require_seeds=ctx.require_seeds)
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
        check_start_seed(tx, new, existing, require_seeds=ctx.require_seeds)
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
