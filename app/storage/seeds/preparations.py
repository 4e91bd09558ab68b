"""Preparations (CONTRACT.md 15.3): whether an operation was accepted, found or settled for
good."""

from __future__ import annotations

from app.domain import seeds
from app.domain.seeds import Attempt, AttemptState
from app.domain.state import SessionState
from app.domain.validation import require_id
from app.storage.operation import Context
from app.storage.seeds import rows
from app.storage.seeds.writing import check_session
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import PreparationOperation, RunPreparation


def _accepted(
    tx: Tx, operation: PreparationOperation, session: SessionState | None
) -> tuple[bool, RunPreparation | None]:
    """The checks find and settlement share; (bound, the published preparation)."""
    run_id = operation.run_id
    check_session(tx, run_id, operation.session_id, session)
    bound = rows.operation(tx, run_id)
    if bound is None:
        return False, None
    owner, published = bound
    seeds.check_bound_to(run_id, owner, seeds.owner_of(operation))
    if published is None:
        return True, None
    attempt = rows.attempt(tx, run_id, published)
    assert attempt is not None
    return True, attempt.preparation()


def find_run_preparation(ctx: Context, operation: PreparationOperation) -> RunPreparation | None:
    """The accepted value of the operation, or ``None`` yet; writes nothing (15.3)."""
    checked = seeds.check_operation(operation)

    def read(tx: Tx) -> RunPreparation | None:
        session = tx.session(checked.session_id, lock=False) if checked.session_id else None
        return _accepted(tx, checked, session)[1]

    return ctx.uow.read(read)


def settle_run_preparation(
    ctx: Context, operation: PreparationOperation, attempt_id: str
) -> RunPreparation | None:
    """The published preparation, or ``None`` with the attempt abandoned for ever (15.3)."""
    checked = seeds.check_operation(operation)
    require_id(attempt_id, "attempt_id")
    run_id = checked.run_id

    def write(tx: Tx) -> RunPreparation | None:
        session = rows.lock(tx, run_id, checked.session_id)
        bound, preparation = _accepted(tx, checked, session)
        if preparation is not None:
            return preparation
        if bound:
            rows.touch(tx, run_id)
        else:
            rows.bind(tx, run_id, seeds.owner_of(checked))
        attempt = rows.attempt(tx, run_id, attempt_id)
        if attempt is None:
            rows.insert_attempt(tx, _tombstone(run_id, attempt_id))
        elif attempt.state is AttemptState.OPEN:
            attempt.state = AttemptState.ABANDONED
            rows.update_attempt(tx, attempt)
        return None

    return ctx.uow.write(write)


def _tombstone(run_id: str, attempt_id: str) -> Attempt:
    """An attempt abandoned before its first begin: it can never be declared."""
    return Attempt(
        run_id=run_id,
        attempt_id=attempt_id,
        state=AttemptState.ABANDONED,
        declaration=None,
        source=None,
        history_end=0,
        body_end=0,
        prepared_bytes=0,
        prefix_id=None,
        literal_open=False,
    )
