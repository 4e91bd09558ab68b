"""What the starts share: bounds, the lock and the existing run, the retry's answers,
continuation admission, and a new run (``proceed`` or ``stop``)."""

from __future__ import annotations

from app.domain import payloads, starts
from app.domain import validation as v
from app.domain.state import RunState, SessionState, StoredRecord
from app.storage import fast_path
from app.storage.fast_path import StartResults
from app.storage.operation import Context
from app.storage.records.inserts import expect_stored, insert, result
from app.storage.unit_of_work.transactions import Tx, purged_error
from runtime_store_client import (
    AppendResult,
    InvalidArgumentError,
    Record,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    SessionPurgedError,
    StoreError,
    WebhookEventType,
)


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
    if (
        not ctx.uow.dialect.fast_path
        or new.predecessor_run_id
        or digest is not None
        or new.seed_end_id
        or ctx.require_seeds
    ):
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
