"""``SqlStore``'s run seed and preparation calls (CONTRACT.md 15): each one call into the
module of its part, writing.py (begin, append, publish), preparations.py (find, settle) or
reading.py (the published seed's reads)."""

from __future__ import annotations

from app.storage.operation import Context
from app.storage.seeds import preparations, writing
from app.storage.seeds import reading as seed_reading
from runtime_store_client import (
    PreparationOperation,
    RunPreparation,
    RunSeed,
    SeedAppendResult,
    SeedDeclaration,
    SeedPage,
    SeedRecord,
)


class SeedMethods:
    """The store's seed calls (a part of ``SqlStore``)."""

    _ctx: Context

    def begin_run_seed(self, declaration: SeedDeclaration) -> RunSeed:
        """Declare one attempt of a run's seed: its owner and resolved source (15.2)."""
        return writing.begin_run_seed(self._ctx, declaration)

    def append_run_seed(self, run_id: str, attempt_id: str, record: SeedRecord) -> SeedAppendResult:
        """Append one record right after its exact predecessor (15.2)."""
        return writing.append_run_seed(self._ctx, run_id, attempt_id, record)

    def publish_run_seed(
        self, run_id: str, attempt_id: str, seed_end_id: str, end_id: str, prepared_bytes: int
    ) -> RunPreparation:
        """Seal the attempt's whole chain at once (15.2)."""
        return writing.publish_run_seed(
            self._ctx, run_id, attempt_id, seed_end_id, end_id, prepared_bytes
        )

    def find_run_preparation(self, operation: PreparationOperation) -> RunPreparation | None:
        """The operation's accepted preparation, or ``None`` yet (15.3)."""
        return preparations.find_run_preparation(self._ctx, operation)

    def settle_run_preparation(
        self, operation: PreparationOperation, attempt_id: str
    ) -> RunPreparation | None:
        """The accepted preparation, or ``None`` with the attempt abandoned for ever (15.3)."""
        return preparations.settle_run_preparation(self._ctx, operation, attempt_id)

    def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        """The run ID's published seed (15.4)."""
        return seed_reading.load_run_seed(self._ctx, run_id, seed_end_id)

    def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        """A page of the published seed's history records (15.4)."""
        return seed_reading.list_run_seed_records(self._ctx, run_id, seed_end_id, after, limit)

    def list_run_preparation_records(
        self, run_id: str, end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        """A page of the published compiled start's records (15.4)."""
        return seed_reading.list_run_preparation_records(self._ctx, run_id, end_id, after, limit)
