"""The seed check of every start (CONTRACT.md 15.5), run in the start's transaction after
its session's purge check and before the continuation check, the retry path and the digest
comparison."""

from __future__ import annotations

from app.domain import seeds
from app.domain.state import RunState
from app.domain.validation import NewRun
from app.storage.seeds import rows
from app.storage.seeds.reading import published
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    RunRecordOwnerMismatchError,
    SeedKind,
    SeedNotFoundError,
)


def check_start_seed(
    tx: Tx, new: NewRun, existing: RunState | None, *, require_seeds: bool
) -> None:
    """Refuse a start whose seed does not fit it; writes nothing."""
    run_id = new.run_id
    if existing is None:
        # A begin of this run ID commits before this start reads, or waits for it.
        tx.dialect.lock_run_id(tx.conn, run_id)
    if not new.seed_end_id:
        if require_seeds:
            raise SeedNotFoundError(
                f"run {run_id!r}: every start must attach a published seed (seed_end_id)",
                run_id=run_id,
            )
        if existing is None and rows.operation(tx, run_id) is not None:
            raise seeds.conflict(
                run_id, f"run {run_id!r} is prepared for a seeded start; name its seed_end_id"
            )
        return
    attempt = published(tx, run_id)
    if new.seed_end_id != seeds.position_text(attempt.history_end):
        raise seeds.conflict(
            run_id,
            f"seed_end_id {new.seed_end_id!r} is not the published history end "
            f"{seeds.position_text(attempt.history_end)!r}",
        )
    declaration = attempt.declaration
    assert declaration is not None
    if declaration.agent_id != new.agent_id or declaration.session_id != new.session_id:
        raise RunRecordOwnerMismatchError(
            f"the seed of run {run_id!r} was prepared for another agent or session",
            run_id=run_id,
        )
    continuation = declaration.kind is SeedKind.CONTINUATION
    if continuation and not new.predecessor_run_id:
        raise seeds.conflict(run_id, "a continuation seed needs a start with predecessor_run_id")
    if new.predecessor_run_id and not continuation:
        raise seeds.conflict(run_id, "a continuation start needs a continuation seed")
    if continuation and declaration.source_run_id != new.predecessor_run_id:
        raise seeds.conflict(
            run_id, "the continuation seed's source is not the start's predecessor_run_id"
        )
