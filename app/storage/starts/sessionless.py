"""Sessionless starts (CONTRACT.md 3.5, 3.6, 12.2): one-shot runs, their children, and
synchronous runs."""

from __future__ import annotations

from app.domain import starts
from app.domain import validation as v
from app.storage.operation import Context
from app.storage.records.inserts import check_append, expect_stored, insert
from app.storage.seeds.starts import check_start_seed
from app.storage.starts.common import (
    _check_bounds,
    _distinct_keys,
    _existing,
    _in_one_statement,
    _original,
    _retried,
    _stored,
)
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Record,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
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
        check_start_seed(tx, new, existing, require_seeds=ctx.require_seeds)
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
        existing = _existing(tx, new)
        check_start_seed(tx, new, existing, require_seeds=ctx.require_seeds)
        parent = tx.existing_run(new.parent_run_id)
        if not parent.session_id:
            parent = tx.lock_sessionless(parent)
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
        check_start_seed(tx, new, existing, require_seeds=ctx.require_seeds)
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
