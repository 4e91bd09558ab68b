"""Reading a run (CONTRACT.md 3.12): its meta and its suspension checkpoint."""

from __future__ import annotations

from app.domain import validation as v
from app.storage.database.row_mapping import run_meta
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import Checkpoint, RunMeta, RunSuspensionNotFoundError


def load_run(ctx: Context, run_id: str) -> RunMeta:
    """The run's meta; ``run_not_found`` (or ``session_purged``) when it is gone."""
    v.require_id(run_id, "run_id")
    return ctx.uow.read(lambda tx: run_meta(tx.existing_run(run_id)))


def load_run_suspension(ctx: Context, run_id: str) -> Checkpoint:
    """The checkpoint of a suspended run; ``run_suspension_not_found`` when none."""
    v.require_id(run_id, "run_id")

    def operation(tx: Tx) -> Checkpoint:
        tx.existing_run(run_id)
        stored = tx.checkpoint(run_id)
        if stored is None:
            raise RunSuspensionNotFoundError(
                f"run {run_id!r} has no suspension checkpoint", run_id=run_id
            )
        checkpoint_id, data = stored
        return Checkpoint(id=checkpoint_id, data=data)

    return ctx.uow.read(operation)
