"""Per-run lifecycle checks: a run's status, its records and its remembered keys agree.

A status is backed by exactly the lifecycle records it implies: a terminal status by one
``run_completed`` (or, suspended, one ``run_suspended`` and a checkpoint), a stopped start
by its fixed two records, a cancellation reason by its intent, and each remembered key
(CONTRACT.md 1.8) by a record of its type. Rows hold the enums' values, so a row is
compared with ``.value`` (which also prints as plain text with ``!r``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from app.domain.commands import accepted_cancellation_reasons, labels_match
from app.domain.payloads import (
    CANCELLATION_INTENT,
    CHILD_RUN_LINKED,
    RUN_COMPLETED,
    RUN_STARTED,
    RUN_SUSPENDED,
    decode_cancellation_intent,
    decode_run_suspended,
)
from app.domain.starts import stopped_differences
from app.storage.verify.facts import RunChecks, RunFacts, decoded
from app.storage.verify.report import (
    CANCELLATION_PROVENANCE,
    LIFECYCLE_KEYS,
    STOPPED_START,
    SUSPENSION_CHECKPOINT,
    TERMINAL_RECORD,
)
from runtime_store_client import CancellationReason, RunStartOutcome, RunStatus


def _describe(record_type: str | None) -> str:
    return "no record" if record_type is None else f"a {record_type} record"


# --- terminal_status_record --------------------------------------------------------------


def terminal_record(run: RunFacts) -> Iterator[str]:
    status: str = run.row.status
    if status == RunStatus.RUNNING.value:
        yield from _running(run)
    elif status == RunStatus.SUSPENDED.value:
        yield from _suspended(run)
    else:
        yield from _finished(run, status)


def _running(run: RunFacts) -> Iterator[str]:
    row, stats = run.row, run.stats
    if row.terminal_key is not None:
        yield f"running run remembers terminal_key {row.terminal_key!r}"
    if row.suspension_key is not None:
        yield f"running run remembers suspension_key {row.suspension_key!r}"
    if stats.completed_n or stats.suspended_n:
        yield (
            f"running run has {stats.completed_n} run_completed and "
            f"{stats.suspended_n} run_suspended records"
        )


def _suspended(run: RunFacts) -> Iterator[str]:
    row, stats = run.row, run.stats
    if row.suspension_key is None:
        yield "suspended run remembers no suspension_key"
    elif row.terminal_key != row.suspension_key:
        yield (
            f"terminal_key {row.terminal_key!r} differs from suspension_key {row.suspension_key!r}"
        )
    if stats.suspended_n != 1 or stats.completed_n:
        yield (
            f"suspended run has {stats.suspended_n} run_suspended and "
            f"{stats.completed_n} run_completed records (expected 1 and 0)"
        )


def _finished(run: RunFacts, status: str) -> Iterator[str]:
    row, stats = run.row, run.stats
    if row.terminal_key is None:
        yield f"{status} run remembers no terminal_key"
    if stats.completed_n != 1 or stats.suspended_n or row.suspension_key is not None:
        yield (
            f"{status} run has {stats.completed_n} run_completed and "
            f"{stats.suspended_n} run_suspended records (expected 1 and 0)"
            + (" and a suspension_key" if row.suspension_key is not None else "")
        )
    completed = run.completed
    if run.completed_error:
        yield f"run_completed {row.terminal_key!r}: {run.completed_error}"
    elif completed is not None:
        if completed.run_status != status:
            yield (
                f"run_completed {row.terminal_key!r} says status "
                f"{completed.status!r}/{completed.phase!r}, the run is {status}"
            )
        if not labels_match(row.labels, completed):
            yield f"run_completed {row.terminal_key!r} labels differ from the run's"


# --- checkpoint_iff_suspended ------------------------------------------------------------


def checkpoint(run: RunFacts) -> Iterator[str]:
    row = run.row
    if row.status != RunStatus.SUSPENDED.value:
        if row.checkpoint_id is not None:
            yield f"{row.status} run holds a checkpoint"
        return
    if row.checkpoint_id is None:
        yield "suspended run has no checkpoint"
        return
    if row.susp_type != RUN_SUSPENDED:
        return  # reported as a lifecycle key
    suspended, error = decoded(decode_run_suspended, row.susp_payload)
    if error:
        yield f"run_suspended {row.suspension_key!r}: {error}"
    elif suspended.suspension_id != row.checkpoint_id:
        yield (
            f"checkpoint {row.checkpoint_id!r} but run_suspended names {suspended.suspension_id!r}"
        )


# --- stopped_start_shape -----------------------------------------------------------------


def stopped_start(run: RunFacts) -> Iterator[str]:
    row, stats = run.row, run.stats
    if row.start_outcome != RunStartOutcome.STOP.value:
        return
    for name, stored, stopped in stopped_differences(row.status, row.cancellation_reason):
        yield f"{name} is {stored!r}, not {stopped!r}"
    if stats.n != 2 or not stats.started_first or stats.second_type != RUN_COMPLETED:
        yield (
            f"{stats.n} records, not exactly [run_started, run_completed] "
            f"(record 2 is {_describe(stats.second_type)})"
        )
    if (
        run.completed is not None
        and run.completed.cancellation_reason != CancellationReason.SESSION_ENDED.value
    ):
        yield (
            f"run_completed reason is {run.completed.cancellation_reason!r}, "
            f"not {CancellationReason.SESSION_ENDED.value!r}"
        )


# --- cancellation_provenance -------------------------------------------------------------


def cancellation_provenance(run: RunFacts) -> Iterator[str]:
    row = run.row
    if row.start_outcome == RunStartOutcome.STOP.value:
        # The stop's own session_ended reason comes with no intent (3.10, second row).
        yield from _no_intent(
            run, "stopped start has {n} cancellation intents and cancellation_key {key!r}"
        )
        return
    reason: str = row.cancellation_reason
    if reason:
        yield from _intent(run, reason)
    else:
        yield from _no_intent(
            run, "no cancellation reason, yet {n} intent records and cancellation_key {key!r}"
        )
    # Only a canceled run_completed carries a reason; a mismatched status is terminal's.
    completed = run.completed
    if row.status != RunStatus.CANCELED.value or completed is None:
        return
    accepted = accepted_cancellation_reasons(completed.run_status, completed.cancellation_reason)
    if accepted is not None and reason not in accepted:
        expected = reason or CancellationReason.ENGINE_CANCELED.value
        yield f"run_completed reason {completed.cancellation_reason!r}, expected {expected!r}"


def _no_intent(run: RunFacts, problem: str) -> Iterator[str]:
    """Without an explicit cancellation there is no intent record and no remembered key."""
    if run.stats.intent_n or run.row.cancellation_key is not None:
        yield problem.format(n=run.stats.intent_n, key=run.row.cancellation_key)


def _intent(run: RunFacts, reason: str) -> Iterator[str]:
    """An explicit cancellation: one intent record, remembered, saying the run's reason."""
    row = run.row
    if run.stats.intent_n != 1:
        yield f"reason {reason!r} with {run.stats.intent_n} intent records, not 1"
    if row.cancellation_key is None:
        yield f"reason {reason!r} but no cancellation_key"
    elif row.cancel_type == CANCELLATION_INTENT:
        intent, error = decoded(decode_cancellation_intent, row.cancel_payload)
        if error:
            yield f"intent {row.cancellation_key!r}: {error}"
        elif intent != reason:
            yield f"intent {row.cancellation_key!r} says {intent!r}, run {reason!r}"


# --- lifecycle_keys_resolve --------------------------------------------------------------


def keys_resolve(run: RunFacts) -> Iterator[str]:
    row = run.row
    if row.start_type != RUN_STARTED:
        yield f"start_key {row.start_key!r} names {_describe(row.start_type)}"
    for name, key, actual, wanted in (
        ("cancellation_key", row.cancellation_key, row.cancel_type, (CANCELLATION_INTENT,)),
        ("suspension_key", row.suspension_key, row.susp_type, (RUN_SUSPENDED,)),
        ("terminal_key", row.terminal_key, row.term_type, (RUN_COMPLETED, RUN_SUSPENDED)),
    ):
        if key is not None and actual not in wanted:
            yield f"{name} {key!r} names {_describe(actual)}"
    # A missing parent is a child-link finding; a present one must hold the link.
    if (
        row.parent_link_key is not None
        and row.parent_found is not None
        and row.link_type != CHILD_RUN_LINKED
    ):
        yield (
            f"parent_link_key {row.parent_link_key!r} names {_describe(row.link_type)} "
            f"on parent {row.parent_run_id!r}"
        )


CHECKS: Final[RunChecks] = (
    (TERMINAL_RECORD, terminal_record),
    (SUSPENSION_CHECKPOINT, checkpoint),
    (STOPPED_START, stopped_start),
    (CANCELLATION_PROVENANCE, cancellation_provenance),
    (LIFECYCLE_KEYS, keys_resolve),
)
