"""The contract protocols (CONTRACT.md section 7), sync and async twins.

Keyword names are part of the contract: callers may pass every argument by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from .seeds import (
    PreparationOperation,
    RunPreparation,
    RunSeed,
    SeedAppendResult,
    SeedDeclaration,
    SeedPage,
    SeedRecord,
)
from .types import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
    CreatedWebhook,
    DeliveryPage,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
    RecordCounts,
    RecordPage,
    RepairResult,
    RootRunStartResult,
    RunMeta,
    RunPage,
    RunStart,
    RunStatus,
    Session,
    SessionPage,
    SessionStatus,
    Snapshot,
    StatusCounts,
    Webhook,
    WebhookDelivery,
)


@runtime_checkable
class Store(Protocol):
    """The worker-facing runtime operations (CONTRACT.md sections 3-4, 12.3, 12.5)."""

    def start_root_run(
        self,
        run: RunStart,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> RootRunStartResult: ...
    def start_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> ChildRunStartResult: ...
    def start_one_shot_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult: ...
    def start_one_shot_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        *,
        request_digest: bytes | None = None,
    ) -> OneShotChildRunStartResult: ...
    def start_synchronous_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult: ...
    def append_run_record(self, record: Record) -> AppendResult: ...
    def append_run_records(self, run_id: str, records: Sequence[Record]) -> list[AppendResult]: ...
    def record_run_cancellation(self, run_id: str, reason: str, record: Record) -> AppendResult: ...
    def record_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> AppendResult: ...
    def record_run_terminal(
        self, run_id: str, status: RunStatus, record: Record
    ) -> AppendResult: ...
    def repair_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> RepairResult: ...
    def repair_run_terminal(
        self, run_id: str, status: RunStatus, record: Record
    ) -> RepairResult: ...
    def load_run(self, run_id: str) -> RunMeta: ...
    def load_session_status(self, session_id: str) -> SessionStatus: ...
    def load_run_suspension(self, run_id: str) -> Checkpoint: ...
    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page: ...
    def list_session_run_records(
        self, session_id: str, cursor: str = "", limit: int = 100
    ) -> Page: ...
    # section 12 (runtime additions)
    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> RecordPage: ...
    def load_run_record(self, run_id: str, event_key: str) -> Record: ...
    # section 15 (run seeds and preparations)
    def begin_run_seed(self, declaration: SeedDeclaration) -> RunSeed: ...
    def append_run_seed(
        self, run_id: str, attempt_id: str, record: SeedRecord
    ) -> SeedAppendResult: ...
    def publish_run_seed(
        self, run_id: str, attempt_id: str, seed_end_id: str, end_id: str, prepared_bytes: int
    ) -> RunPreparation: ...
    def find_run_preparation(self, operation: PreparationOperation) -> RunPreparation | None: ...
    def settle_run_preparation(
        self, operation: PreparationOperation, attempt_id: str
    ) -> RunPreparation | None: ...
    def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed: ...
    def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage: ...
    def list_run_preparation_records(
        self, run_id: str, end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage: ...


@runtime_checkable
class SessionAdmin(Protocol):
    """Host-owned session administration (CONTRACT.md 3.1)."""

    def create_session(self, session_id: str, created_at: datetime) -> Session: ...
    def load_session(self, session_id: str) -> Session: ...
    def end_session(self, session_id: str, ended_at: datetime) -> Session: ...
    def purge_session(self, session_id: str) -> None: ...
    def list_session_runs(
        self,
        session_id: str,
        statuses: Sequence[RunStatus] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage: ...
    def list_sessions(
        self,
        statuses: Sequence[SessionStatus] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> SessionPage: ...


@runtime_checkable
class RunSearch(Protocol):
    """Finding runs across sessions (CONTRACT.md 11.1)."""

    def search_runs(  # noqa: PLR0913, PLR0917 (the contract's signature, 11.1)
        self,
        statuses: Sequence[RunStatus] = (),
        agent_id: str = "",
        session_id: str = "",
        parent_run_id: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage: ...


@runtime_checkable
class RunCounts(Protocol):
    """Counts for the operator's lists: sessions and runs per status, each at most
    ``limit`` (at most 10,000; a count equal to it means at least that many), with the
    filters of ``list_sessions`` and ``search_runs``; records per run and session by ID
    (at most 100 IDs)."""

    def count_sessions(
        self,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        limit: int = 10_000,
    ) -> StatusCounts: ...
    def count_runs(
        self,
        agent_id: str = "",
        session_id: str = "",
        parent_run_id: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        limit: int = 10_000,
    ) -> StatusCounts: ...
    def count_records(
        self, run_ids: Sequence[str] = (), session_ids: Sequence[str] = ()
    ) -> RecordCounts: ...


@runtime_checkable
class MemoryStore(Protocol):
    """Product-owned per-run memory (CONTRACT.md section 9)."""

    def load_memory(self, agent_id: str, run_id: str) -> Snapshot: ...
    def append_memory_events(
        self, agent_id: str, run_id: str, events: Sequence[MemoryEvent]
    ) -> None: ...


@runtime_checkable
class AsyncStore(Protocol):
    """The worker-facing runtime operations (CONTRACT.md sections 3-4, 12.3, 12.5)."""

    async def start_root_run(
        self,
        run: RunStart,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> RootRunStartResult: ...
    async def start_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> ChildRunStartResult: ...
    async def start_one_shot_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult: ...
    async def start_one_shot_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        *,
        request_digest: bytes | None = None,
    ) -> OneShotChildRunStartResult: ...
    async def start_synchronous_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult: ...
    async def append_run_record(self, record: Record) -> AppendResult: ...
    async def append_run_records(
        self, run_id: str, records: Sequence[Record]
    ) -> list[AppendResult]: ...
    async def record_run_cancellation(
        self, run_id: str, reason: str, record: Record
    ) -> AppendResult: ...
    async def record_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> AppendResult: ...
    async def record_run_terminal(
        self, run_id: str, status: RunStatus, record: Record
    ) -> AppendResult: ...
    async def repair_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> RepairResult: ...
    async def repair_run_terminal(
        self, run_id: str, status: RunStatus, record: Record
    ) -> RepairResult: ...
    async def load_run(self, run_id: str) -> RunMeta: ...
    async def load_session_status(self, session_id: str) -> SessionStatus: ...
    async def load_run_suspension(self, run_id: str) -> Checkpoint: ...
    async def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page: ...
    async def list_session_run_records(
        self, session_id: str, cursor: str = "", limit: int = 100
    ) -> Page: ...
    # section 12 (runtime additions)
    async def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> RecordPage: ...
    async def load_run_record(self, run_id: str, event_key: str) -> Record: ...
    # section 15 (run seeds and preparations)
    async def begin_run_seed(self, declaration: SeedDeclaration) -> RunSeed: ...
    async def append_run_seed(
        self, run_id: str, attempt_id: str, record: SeedRecord
    ) -> SeedAppendResult: ...
    async def publish_run_seed(
        self, run_id: str, attempt_id: str, seed_end_id: str, end_id: str, prepared_bytes: int
    ) -> RunPreparation: ...
    async def find_run_preparation(
        self, operation: PreparationOperation
    ) -> RunPreparation | None: ...
    async def settle_run_preparation(
        self, operation: PreparationOperation, attempt_id: str
    ) -> RunPreparation | None: ...
    async def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed: ...
    async def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage: ...
    async def list_run_preparation_records(
        self, run_id: str, end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage: ...


@runtime_checkable
class AsyncSessionAdmin(Protocol):
    """Host-owned session administration (CONTRACT.md 3.1)."""

    async def create_session(self, session_id: str, created_at: datetime) -> Session: ...
    async def load_session(self, session_id: str) -> Session: ...
    async def end_session(self, session_id: str, ended_at: datetime) -> Session: ...
    async def purge_session(self, session_id: str) -> None: ...
    async def list_session_runs(
        self,
        session_id: str,
        statuses: Sequence[RunStatus] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage: ...
    async def list_sessions(
        self,
        statuses: Sequence[SessionStatus] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> SessionPage: ...


@runtime_checkable
class AsyncRunSearch(Protocol):
    """Finding runs across sessions (CONTRACT.md 11.1)."""

    async def search_runs(  # noqa: PLR0913, PLR0917 (the contract's signature, 11.1)
        self,
        statuses: Sequence[RunStatus] = (),
        agent_id: str = "",
        session_id: str = "",
        parent_run_id: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage: ...


@runtime_checkable
class AsyncRunCounts(Protocol):
    """Counts for the operator's lists: sessions and runs per status, each at most
    ``limit`` (at most 10,000; a count equal to it means at least that many), with the
    filters of ``list_sessions`` and ``search_runs``; records per run and session by ID
    (at most 100 IDs)."""

    async def count_sessions(
        self,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        limit: int = 10_000,
    ) -> StatusCounts: ...
    async def count_runs(
        self,
        agent_id: str = "",
        session_id: str = "",
        parent_run_id: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        limit: int = 10_000,
    ) -> StatusCounts: ...
    async def count_records(
        self, run_ids: Sequence[str] = (), session_ids: Sequence[str] = ()
    ) -> RecordCounts: ...


@runtime_checkable
class AsyncMemoryStore(Protocol):
    """Product-owned per-run memory (CONTRACT.md section 9)."""

    async def load_memory(self, agent_id: str, run_id: str) -> Snapshot: ...
    async def append_memory_events(
        self, agent_id: str, run_id: str, events: Sequence[MemoryEvent]
    ) -> None: ...


class BinaryReader(Protocol):
    """A binary file open for reading (``open(path, "rb")``, ``io.BytesIO``)."""

    def read(self, size: int = -1, /) -> bytes: ...


class BinaryWriter(Protocol):
    """A binary file open for writing (``open(path, "wb")``, ``io.BytesIO``)."""

    def write(self, data: bytes, /) -> object: ...


@runtime_checkable
class SessionTransfer(Protocol):
    """Whole sessions out and in as NDJSON files (CONTRACT.md 11.4)."""

    def export_session(self, session_id: str, file: BinaryWriter) -> None: ...
    def import_session(self, file: BinaryReader) -> Session: ...


@runtime_checkable
class AsyncSessionTransfer(Protocol):
    """Whole sessions out and in as NDJSON files (CONTRACT.md 11.4)."""

    async def export_session(self, session_id: str, file: BinaryWriter) -> None: ...
    async def import_session(self, file: BinaryReader) -> Session: ...


@runtime_checkable
class WebhookAdmin(Protocol):
    """Webhook subscriptions and their deliveries (CONTRACT.md 13.1, 13.3): admin calls.
    ``events`` and ``statuses`` take the enums' values (``WebhookEventType``,
    ``DeliveryStatus``) or the enums themselves."""

    def create_webhook(self, url: str, events: Sequence[str]) -> CreatedWebhook: ...
    def list_webhooks(self) -> list[Webhook]: ...
    def delete_webhook(self, webhook_id: str) -> None: ...
    def list_webhook_deliveries(
        self, webhook_id: str, statuses: Sequence[str] = (), cursor: str = "", limit: int = 100
    ) -> DeliveryPage: ...
    def retry_webhook_delivery(self, webhook_id: str, event_id: str) -> WebhookDelivery: ...


@runtime_checkable
class AsyncWebhookAdmin(Protocol):
    """Webhook subscriptions and their deliveries (CONTRACT.md 13.1, 13.3): admin calls."""

    async def create_webhook(self, url: str, events: Sequence[str]) -> CreatedWebhook: ...
    async def list_webhooks(self) -> list[Webhook]: ...
    async def delete_webhook(self, webhook_id: str) -> None: ...
    async def list_webhook_deliveries(
        self, webhook_id: str, statuses: Sequence[str] = (), cursor: str = "", limit: int = 100
    ) -> DeliveryPage: ...
    async def retry_webhook_delivery(self, webhook_id: str, event_id: str) -> WebhookDelivery: ...
