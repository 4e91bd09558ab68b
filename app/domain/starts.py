"""The starts (CONTRACT.md 3.3-3.6, 12.1, 12.2) and continuation admission (3.13, 12.4)
as decisions over the stored state: a retry's request digest, kind and identity, a closed
run's replayed start, a continuation's facts, a new child's parent, and the outcome a
session gives a new run."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from app.domain.payloads import ChildRunLinkedPayload
from app.domain.state import RunState, SessionState, StoredRecord
from app.domain.validation import NewRecord, NewRun
from runtime_store_client import (
    CancellationReason,
    RunConflictError,
    RunNotActiveError,
    RunSessionMismatchError,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    SessionStatus,
)


def same_identity(run: RunState, new: NewRun, *, times: bool = True) -> bool:
    """Whether a stored run is the one this start names (3.3 step 3); without ``times``
    the start time is not compared (a closed run's replayed start, 12.1)."""
    return (
        run.agent_id == new.agent_id
        and run.session_id == new.session_id
        and run.parent_run_id == new.parent_run_id
        and (not times or run.started_at_ms == new.started_at_ms)
        and run.labels == new.labels_json
        # The seed a run attached is part of its identity (15.5).
        and run.seed_end_id == new.seed_end_id
    )


def check_digest(existing: RunState, digest: bytes | None) -> None:
    """12.1, first of a retry's checks: the request digest must be the stored one, both
    absent or both equal; missing proof is an error, never permission (``run_conflict``)."""
    stored = existing.request_digest
    if stored == digest:
        return
    if stored is None:
        problem = "was started without a request digest; this start carries one"
    elif digest is None:
        problem = "was started with a request digest; this start carries none"
    else:
        problem = "was started with another request digest"
    raise RunConflictError(f"run {existing.run_id!r} {problem}", run_id=existing.run_id)


def check_kind(existing: RunState, kind: RunStartKind) -> None:
    """12.2: a run ID is for ever engine-started or synchronous (``run_conflict``)."""
    if existing.start_kind is not kind:
        raise RunConflictError(
            f"run {existing.run_id!r} is {existing.start_kind.value}-started; a "
            f"{kind.value} start cannot name it",
            run_id=existing.run_id,
        )


def replays_closed_start(existing: RunState, digest: bytes | None) -> bool:
    """12.1: a start retried with the stored digest (``check_digest`` passed) on a run that
    is no longer running may propose new times; everything else must be the original."""
    return digest is not None and existing.status.is_terminal


def _same_but_time(stored: NewRecord, new: NewRecord) -> bool:
    return dataclasses.replace(stored, timestamp_ms=new.timestamp_ms) == new


def check_replay(
    existing: RunState,
    new: NewRun,
    records: Sequence[tuple[str, NewRecord, StoredRecord | None]],
) -> None:
    """12.1, a closed run's start replayed: every field of the start but its time, and of
    each ``(name, record, stored)`` but its timestamp, is the stored one (``run_conflict``)."""
    _check_identity(existing, new, times=False)
    for name, record, stored in records:
        if stored is None or not _same_but_time(stored.record, record):
            raise RunConflictError(
                f"the replayed start of run {new.run_id!r} differs from the original in its "
                f"{name} record {record.event_key!r} (only times may differ)",
                run_id=new.run_id,
                event_key=record.event_key,
            )


def check_synchronous_retry(
    existing: RunState, new: NewRun, started: NewRecord, stored: StoredRecord | None
) -> None:
    """12.2: a synchronous start's retry repeats the exact command, time included, in
    every status; any change is ``run_conflict``."""
    check_retry(existing, new, started)
    if stored is None or stored.record != started:
        raise RunConflictError(
            f"run {new.run_id!r} was started synchronously with another run_started record",
            run_id=new.run_id,
            event_key=started.event_key,
        )


def _check_identity(existing: RunState, new: NewRun, *, times: bool = True) -> None:
    if not same_identity(existing, new, times=times):
        where = f"session {existing.session_id!r}" if existing.session_id else "no session"
        raise RunConflictError(
            f"run {new.run_id!r} already exists ({where}) with another identity",
            run_id=new.run_id,
        )


def check_retry(
    existing: RunState,
    new: NewRun,
    started: NewRecord,
    canceled: NewRecord | None = None,
    link: NewRecord | None = None,
    *,
    times: bool = True,
) -> None:
    """3.3 step 3: the stored identity and remembered keys must match (``run_conflict``)."""
    _check_identity(existing, new, times=times)
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
    facts = [
        ("status", predecessor.status.value, RunStatus.SUSPENDED.value),
        ("session_id", predecessor.session_id, new.session_id),
        ("agent_id", predecessor.agent_id, new.agent_id),
    ]
    if not moves_parent(predecessor, new):  # 12.4: checked by ``check_moved_parent``
        facts.append(("parent_run_id", predecessor.parent_run_id, new.parent_run_id))
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


def moves_parent(predecessor: RunState, new: NewRun) -> bool:
    """12.4: a child continuation under another parent than its predecessor's (the
    successor of that parent, resumed)."""
    return bool(
        predecessor.parent_run_id
        and new.parent_run_id
        and predecessor.parent_run_id != new.parent_run_id
    )


@dataclasses.dataclass(frozen=True, slots=True)
class LinkFacts:
    """What a child continued under another parent repeats of its predecessor's link
    (12.4): the link's tool name, tool call ID and child agent, and the agent that wrote
    the link (its parent's)."""

    tool_name: str
    tool_call_id: str
    child_agent_id: str
    parent_agent_id: str

    @classmethod
    def of(cls, linked: ChildRunLinkedPayload, parent_agent_id: str) -> LinkFacts:
        return cls(linked.tool_name, linked.tool_call_id, linked.child_agent_id, parent_agent_id)


#: Each of ``LinkFacts``'s fields as the errors name it (the payload's keys, the record's).
_LINK_FACT_NAMES: Final = ("ToolName", "ToolCallID", "ChildAgentID", "agent_id")


def link_difference(original: LinkFacts, link: LinkFacts) -> tuple[str, str, str] | None:
    """12.4: the first fact ``link`` does not repeat of ``original`` as ``(name,
    original's, link's)``, or ``None`` when it repeats them all."""
    pairs = zip(dataclasses.astuple(original), dataclasses.astuple(link), strict=True)
    for name, (expected, actual) in zip(_LINK_FACT_NAMES, pairs, strict=True):
        if actual != expected:
            return name, expected, actual
    return None


def check_moved_parent(
    parent: RunState,
    new: NewRun,
    link: NewRecord,
    linked: ChildRunLinkedPayload,
    original: StoredRecord | None,
    original_linked: ChildRunLinkedPayload | None,
) -> None:
    """12.4, a child continuation admitted under another parent: the new parent is running
    in the same session (as for any new child), and the new link (``link``, its payload
    ``linked``) repeats the predecessor's (``original``) tool name, tool call ID and child
    agent, and is written by the predecessor's parent's agent; else ``run_conflict``
    naming the differing fact."""
    check_new_child_parent(parent, new, None)
    if original is None or original_linked is None:
        raise RunConflictError(
            f"the predecessor of run {new.run_id!r} has no readable child_run_linked record",
            run_id=new.run_id,
        )
    differs = link_difference(
        LinkFacts.of(original_linked, original.record.agent_id),
        LinkFacts.of(linked, link.agent_id),
    )
    if differs is not None:
        name, expected, actual = differs
        raise RunConflictError(
            f"a continuation under parent {parent.run_id!r} must repeat its "
            f"predecessor's link: {name} {expected!r}, not {actual!r}",
            run_id=new.run_id,
            event_key=link.event_key,
        )


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


#: The run fields of a start stopped by an ended session (3.3 step 5), but its key.
_STOPPED: Final = {
    "status": RunStatus.CANCELED,
    "cancellation_reason": CancellationReason.SESSION_ENDED.value,
}


def stopped(canceled: NewRecord) -> dict[str, Any]:
    """The run fields of a start stopped by an ended session (3.3 step 5): canceled, for
    the reason ``session_ended``, its terminal key the canceled record's."""
    return {**_STOPPED, "terminal_key": canceled.event_key}


def stopped_differences(status: str, cancellation_reason: str) -> list[tuple[str, str, str]]:
    """The fields of a run stored as a stopped start that are not what ``stopped`` writes,
    each as ``(field, stored, stopped)``: ``status`` and ``cancellation_reason`` (values
    as stored, so a row or a ``RunState`` may be asked)."""
    stored = {"status": str(status), "cancellation_reason": cancellation_reason}
    return [
        (name, stored[name], str(value))
        for name, value in _STOPPED.items()
        if stored[name] != str(value)
    ]
