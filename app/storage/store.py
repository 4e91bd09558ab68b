"""``SqlStore``: the whole contract over one SQLAlchemy engine, one transaction per call.

The table of contents of the storage layer: each method is one call into the module of its
context, named with the contract's words, which validates what it can without state, then
runs one function in one unit of work (unit_of_work/): it takes its locks
(database/dialects.py), checks the rules in CONTRACT.md's order, buffers its writes and
flushes them at commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from app.domain.limits import Limits
from app.domain.retention import RetentionPolicy
from app.domain.times import now_millis
from app.storage import retention, starts, transfer
from app.storage.access.service_keys import CursorKeys
from app.storage.database.dialects import Exclusive
from app.storage.database.positions import primary_position
from app.storage.database.replicas import replica_set
from app.storage.fast_path.group_commit import GroupCommit
from app.storage.memory import events as memory
from app.storage.operation import (
    DEFAULT_PAGE_BYTE_BUDGET,
    DEFAULT_PAGE_MAX,
    DEFAULT_PURGE_BATCH,
    Context,
)
from app.storage.records import append, batch, pages, transcript_reads
from app.storage.records.pages import StreamPage
from app.storage.runs import lifecycle, reading
from app.storage.search import counts, finding
from app.storage.seeds.store_methods import SeedMethods
from app.storage.sessions import administration, purge
from app.storage.unit_of_work.transactions import DEFAULT_ATTEMPTS, UnitOfWork
from app.storage.webhooks.delivery_queue import DeliveryQueue
from app.storage.webhooks.store_methods import WebhookMethods
from app.storage.webhooks.subscriptions import WebhookConfig
from runtime_store_client import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
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
)
from runtime_store_client.protocols import BinaryReader, BinaryWriter


class SqlStore(counts.Counts, SeedMethods, WebhookMethods):
    """The in-process store: ``Store``, ``SessionAdmin``, ``MemoryStore``, ``RunCounts``,
    ``WebhookAdmin``; the counts, seed and webhook calls are in their contexts' folders
    (search/counts.py, seeds/store_methods.py, webhooks/store_methods.py)."""

    def __init__(  # noqa: PLR0913 - keyword-only settings
        self,
        engine: Engine,
        *,
        page_max: int = DEFAULT_PAGE_MAX,
        page_byte_budget: int = DEFAULT_PAGE_BYTE_BUDGET,
        clock: Callable[[], int] = now_millis,
        attempts: int = DEFAULT_ATTEMPTS,
        limits: Limits | None = None,
        purge_batch: int = DEFAULT_PURGE_BATCH,
        fast_path: bool = True,
        webhooks: WebhookConfig | None = None,
        read_engines: Sequence[Engine] = (),
        replica_max_lag_seconds: float = 1.0,
        counts_primary_reads: bool = False,
        group_commit: bool = True,
        require_seeds: bool = False,
    ) -> None:
        """``fast_path=False``: no SQL function of ``fast_path/`` is called;
        ``group_commit=False``: concurrent appends are not combined (fast_path/group_commit.py);
        ``read_engines``: streaming replicas that may serve HTTP reads (database/replicas.py);
        ``counts_primary_reads``: without read engines, its HTTP reads still count as the
        primary's in the metrics (a second store beside one with replicas);
        ``require_seeds``: every start must attach a published seed (15.5)."""
        uow = UnitOfWork(engine, clock=clock, attempts=attempts, fast_path=fast_path)
        uow.replicas = replica_set(
            engine,
            read_engines,
            max_lag_seconds=replica_max_lag_seconds,
            counted=counts_primary_reads,
        )
        self._clock = clock
        self._ctx = Context(
            uow=uow,
            limits=limits or Limits(),
            cursors=CursorKeys(uow),
            page_max=page_max,
            page_byte_budget=page_byte_budget,
            purge_batch=purge_batch,
            group_commit=GroupCommit(uow) if group_commit and uow.dialect.fast_path else None,
            require_seeds=require_seeds,
        )
        #: The webhook dispatcher's side of the outbox (13.3).
        self.webhook_queue = DeliveryQueue(self._ctx, webhooks or WebhookConfig(), clock)
        #: Whether the database tells every worker of each commit (else ``watch_commits``).
        self.commits_notified_by_database: bool = uow.dialect.notifies_commits

    def write_position(self) -> int:
        """The primary's position now, past every write committed before (positions.py)."""
        return primary_position(self._ctx.uow.engine)

    def watch_commits(self, callback: Callable[[set[tuple[str, str]]], None] | None) -> None:
        """Tell ``callback`` the (session_id, run_id) of each commit's records (live tail)."""
        self._ctx.uow.committed = callback

    # --- starts (3.3-3.6, 3.13, 12.1, 12.2, 12.4) ---------------------------------------

    def start_root_run(
        self,
        run: RunStart,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> RootRunStartResult:
        """Start a root run of a session (3.3, 12.1)."""
        return starts.start_root_run(self._ctx, run, started, canceled, request_digest)

    def start_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> ChildRunStartResult:
        """Start a child run linked from a running parent of the same session (3.4, 12.4)."""
        return starts.start_child_run(
            self._ctx, run, parent_linked, started, canceled, request_digest
        )

    def start_one_shot_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult:
        """Start a sessionless run (3.5, 12.1)."""
        return starts.start_one_shot_run(self._ctx, run, started, request_digest)

    def start_one_shot_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        *,
        request_digest: bytes | None = None,
    ) -> OneShotChildRunStartResult:
        """Start a sessionless child of a running sessionless parent (3.6, 12.1)."""
        return starts.start_one_shot_child_run(
            self._ctx, run, parent_linked, started, request_digest
        )

    def start_synchronous_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult:
        """Start a run no workflow engine accepted (12.2); a digest is ``invalid_argument``."""
        return starts.start_synchronous_run(self._ctx, run, started, request_digest)

    # --- records (3.7, section 4) -------------------------------------------------------

    def append_run_record(self, record: Record) -> AppendResult:
        """Append an ordinary record to a running run (3.7)."""
        return append.append_run_record(self._ctx, record)

    def append_run_records(self, run_id: str, records: Sequence[Record]) -> list[AppendResult]:
        """Append 1 to 1,000 ordinary records of one run, all or nothing, in order (11.2)."""
        return batch.append_run_records(self._ctx, run_id, records)

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of one run's records, oldest first (section 4)."""
        return pages.list_run_records(self._ctx, run_id, cursor, limit)

    def run_records_after(self, run_id: str, cursor: str = "", limit: int = 100) -> StreamPage:
        """A page of one run's records with the cursor after each (the live tail, 11.3)."""
        return pages.run_records_after(self._ctx, run_id, cursor, limit)

    def session_records_after(
        self, session_id: str, cursor: str = "", limit: int = 100
    ) -> StreamPage:
        """A page of a session's records with the cursor after each (the live tail, 11.3)."""
        return pages.session_records_after(self._ctx, session_id, cursor, limit)

    def list_session_run_records(self, session_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of every record of a session's runs, in commit order (section 4)."""
        return pages.list_session_run_records(self._ctx, session_id, cursor, limit)

    # --- transcript prefixes, a record by its key (12.3, 12.5) ---------------------------

    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> RecordPage:
        """The run's transcript records after ``after`` up to and including the record
        ``through``, in record order (12.3); the same arguments, the same page."""
        return transcript_reads.list_run_transcript_records(
            self._ctx, run_id, through, after, limit
        )

    def load_run_record(self, run_id: str, event_key: str) -> Record:
        """The record stored under ``event_key`` in the run (12.5)."""
        return transcript_reads.load_run_record(self._ctx, run_id, event_key)

    # --- lifecycle (3.8-3.11) -----------------------------------------------------------

    def record_run_cancellation(self, run_id: str, reason: str, record: Record) -> AppendResult:
        """Store the first cancellation reason of a run with its intent record (3.8)."""
        return lifecycle.record_run_cancellation(self._ctx, run_id, reason, record)

    def record_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> AppendResult:
        """Suspend a run with its checkpoint and ``run_suspended`` record (3.9)."""
        return lifecycle.record_run_suspension(self._ctx, run_id, checkpoint, record)

    def record_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> AppendResult:
        """Finish a run: completed, failed or canceled, with its ``run_completed`` (3.10)."""
        return lifecycle.record_run_terminal(self._ctx, run_id, status, record)

    def repair_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> RepairResult:
        """Make sure a suspension is stored; a different final state is reported (3.11)."""
        return lifecycle.repair_run_suspension(self._ctx, run_id, checkpoint, record)

    def repair_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> RepairResult:
        """Make sure a terminal status is stored; a different one is reported (3.11)."""
        return lifecycle.repair_run_terminal(self._ctx, run_id, status, record)

    # --- runs (3.12) --------------------------------------------------------------------

    def load_run(self, run_id: str) -> RunMeta:
        """The run's meta (3.12)."""
        return reading.load_run(self._ctx, run_id)

    def load_run_suspension(self, run_id: str) -> Checkpoint:
        """The checkpoint of a suspended run (3.12)."""
        return reading.load_run_suspension(self._ctx, run_id)

    # --- sessions (3.1, 3.2) ------------------------------------------------------------

    def create_session(self, session_id: str, created_at: Any) -> Session:
        """Create an active session, or return the active one unchanged (3.1)."""
        return administration.create_session(self._ctx, session_id, created_at)

    def load_session(self, session_id: str) -> Session:
        """The session (3.1)."""
        return administration.load_session(self._ctx, session_id)

    def load_session_status(self, session_id: str) -> SessionStatus:
        """``active`` or ``ended`` (3.2)."""
        return administration.load_session_status(self._ctx, session_id)

    def end_session(self, session_id: str, ended_at: Any) -> Session:
        """End a session: running runs continue, new starts stop (3.1)."""
        return administration.end_session(self._ctx, session_id, ended_at)

    def list_session_runs(
        self,
        session_id: str,
        statuses: Sequence[RunStatus] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage:
        """A page of a session's runs by ``started_at`` then ``run_id`` (3.1)."""
        return administration.list_session_runs(self._ctx, session_id, statuses, cursor, limit)

    def purge_session(self, session_id: str) -> None:
        """Delete an ended session with everything it holds; its IDs stay reserved (3.1)."""
        purge.purge_session(self._ctx, session_id)

    # --- finding sessions and runs (11.1) -------------------------------------------------

    def list_sessions(
        self,
        statuses: Sequence[SessionStatus] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> SessionPage:
        """Sessions, newest ``created_at`` first, ties by ID; purged ones never."""
        return finding.list_sessions(
            self._ctx, statuses, created_after, created_before, cursor, limit
        )

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
    ) -> RunPage:
        """Runs across sessions, newest ``started_at`` first, ties by run ID; every filter
        given must match (labels: all of them)."""
        filters = finding.check_run_filters(
            statuses, agent_id, session_id, parent_run_id, labels, started_after, started_before
        )
        return finding.search_runs(self._ctx, filters, cursor, limit)

    # --- memory (section 9) -------------------------------------------------------------

    def load_memory(self, agent_id: str, run_id: str) -> Snapshot:
        """Every memory event of an agent's run, in append order (section 9)."""
        return memory.load_memory(self._ctx, agent_id, run_id)

    def append_memory_events(
        self,
        agent_id: str,
        run_id: str,
        events: Sequence[MemoryEvent],
        *,
        idempotency_key: str = "",
    ) -> None:
        """Append memory events atomically; none is a no-op (section 9).

        ``idempotency_key`` makes a retried append a no-op (the HTTP client sends one per
        call and keeps it across its retries); without one a fresh key is used.
        """
        memory.append_memory_events(self._ctx, agent_id, run_id, events, idempotency_key)

    # --- export, import, retention (11.4) -------------------------------------------------

    def export_session(self, session_id: str, file: BinaryWriter) -> None:
        """Write the session's NDJSON export to a binary ``file``, read in one snapshot."""
        for line in transfer.export_session(self._ctx, session_id):
            file.write(line)

    def export_lines(self, session_id: str) -> Iterator[bytes]:
        """The export line by line: a generator holding the snapshot until it is closed."""
        return transfer.export_session(self._ctx, session_id)

    def import_session(self, file: BinaryReader) -> Session:
        """Recreate an exported session, IDs and bytes identical, in one transaction."""
        return transfer.import_session(self._ctx, file)

    def retention_sweep(
        self,
        policy: RetentionPolicy,
        *,
        dry_run: bool = False,
        progress: retention.Progress | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> retention.Sweep:
        """Purge old ended sessions and delete old sessionless runs now (or count them)."""
        return retention.sweep(
            self._ctx,
            policy,
            now_ms=self._clock(),
            dry_run=dry_run,
            progress=progress,
            should_stop=should_stop,
        )

    def retention_exclusive(self) -> AbstractContextManager[Exclusive]:
        """Whether this process may sweep now (one replica at a time), held for the block
        unless lost (a failover: ``still_held`` before each step)."""
        return self._ctx.uow.dialect.exclusive(self._ctx.uow.engine, retention.LOCK_NAME)
