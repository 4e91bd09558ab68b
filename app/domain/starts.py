"""The starts (CONTRACT.md 3.3-3.6) and continuation admission (3.13) as decisions over
the stored state: a retry's identity, a continuation's facts, a new child's parent, and
the outcome a session gives a new run."""

from __future__ import annotations

from typing import Any

from app.domain.state import RunState, SessionState
from app.domain.validation import NewRecord, NewRun
from runtime_store_client import (
    CancellationReason,
    RunConflictError,
    RunNotActiveError,
    RunSessionMismatchError,
    RunStartOutcome,
    RunStatus,
    SessionStatus,
)


def same_identity(run: RunState, new: NewRun) -> bool:
    """Whether a stored run is the one this start names (3.3 step 3)."""
    return (
        run.agent_id == new.agent_id
        and run.session_id == new.session_id
        and run.parent_run_id == new.parent_run_id
        and run.started_at_ms == new.started_at_ms
        and run.labels == new.labels_json
    )


def check_retry(
    existing: RunState,
    new: NewRun,
    started: NewRecord,
    canceled: NewRecord | None = None,
    link: NewRecord | None = None,
) -> None:
    """3.3 step 3: the stored identity and remembered keys must match (``run_conflict``)."""
    if not same_identity(existing, new):
        where = f"session {existing.session_id!r}" if existing.session_id else "no session"
        raise RunConflictError(
            f"run {new.run_id!r} already exists ({where}) with another identity",
            run_id=new.run_id,
        )
    remembered: list[tuple[str, str | None, str]] = [
        ("started", existing.start_key, started.event_key)
    ]
    if canceled is not None and existing.start_outcome is RunStartOutcome.STOP:
        remembered.append(("stopped", existing.terminal_key, canceled.event_key))
    if link is not None:
        remembered.append(("linked", existing.parent_link_key, link.event_key))
    for verb, key, expected in remembered:
        if key != expected:
            raise RunConflictError(
                f"run {new.run_id!r} was {verb} by event {key!r}", run_id=new.run_id
            )


def continuation(predecessor: RunState, new: NewRun) -> bool:
    """3.13 for an existing predecessor: ``run_conflict`` naming the failed fact, else
    whether this start becomes its successor (``False``: it already is, a retry)."""
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
    # One successor per predecessor: the lock the start holds serialises racing
    # continuations, so exactly one sets the field; the admitted one's retries pass.
    if predecessor.successor_run_id == new.run_id:
        return False
    if predecessor.successor_run_id:
        raise RunConflictError(
            f"predecessor run {predecessor.run_id!r} was already continued by run "
            f"{predecessor.successor_run_id!r}",
            run_id=new.run_id,
        )
    return True


def check_new_child_parent(parent: RunState, new: NewRun, stored_link: str | None) -> None:
    """A new child needs a running parent of its session, with its link key free."""
    if parent.session_id != new.session_id:
        what = (
            f"is not in session {new.session_id!r}"
            if new.session_id
            else "belongs to a session; a one-shot child needs a sessionless parent"
        )
        raise RunSessionMismatchError(
            f"parent run {parent.run_id!r} {what}",
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


def outcome(session: SessionState) -> RunStartOutcome:
    """3.3 step 5: ``proceed`` in an active session, ``stop`` in an ended one."""
    if session.contract_status is SessionStatus.ENDED:
        return RunStartOutcome.STOP
    return RunStartOutcome.PROCEED


def stopped(canceled: NewRecord) -> dict[str, Any]:
    """The run fields of a start stopped by an ended session (3.3 step 5): canceled, for
    the reason ``session_ended``, its terminal key the canceled record's."""
    return {
        "status": RunStatus.CANCELED,
        "cancellation_reason": CancellationReason.SESSION_ENDED.value,
        "terminal_key": canceled.event_key,
    }
