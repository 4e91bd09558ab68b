"""Contract types of runtime-store (CONTRACT.md sections 1, 7 and 9).

Every dataclass is frozen and keyword-only; empty strings and ``{}`` mean absent, and an
absent optional result is ``None``. Times are timezone-aware UTC ``datetime`` values with
millisecond precision; payloads and checkpoint data are ``bytes`` compared byte for byte.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


class SessionStatus(enum.StrEnum):
    """Status of a host-owned session (a purged session has none)."""

    ACTIVE = "active"
    ENDED = "ended"


class RunStatus(enum.StrEnum):
    """Status of a run; every status but ``running`` is terminal (the run takes no more
    ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
    state change can follow; a suspended run may still be repaired or continued)."""

    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"

    @property
    def is_terminal(self) -> bool:
        return self is not RunStatus.RUNNING

    @property
    def is_finished(self) -> bool:
        return self in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED)


class LifecycleRecordType(enum.StrEnum):
    """Record types only lifecycle operations write (CONTRACT.md 1.7)."""

    RUN_STARTED = "run_started"
    #: Stored on the *parent* run.
    CHILD_RUN_LINKED = "child_run_linked"
    CANCELLATION_INTENT = "runtime.cancellation_intent"
    RUN_SUSPENDED = "run_suspended"
    #: A run's final record: nothing follows it.
    RUN_COMPLETED = "run_completed"


class RunStartOutcome(enum.StrEnum):
    """Decision made by the first successful start of a run."""

    PROCEED = "proceed"
    STOP = "stop"


class RunStartKind(enum.StrEnum):
    """How a run was started (CONTRACT.md 12.2); a run ID is for ever one kind."""

    #: By a workflow engine: a root, child, one-shot or one-shot child start (3.3-3.6).
    ENGINE = "engine"
    #: An inline callback no workflow engine accepted (``start_synchronous_run``).
    SYNCHRONOUS = "synchronous"


class RepairOutcome(enum.StrEnum):
    """Result of ``repair_run_suspension`` / ``repair_run_terminal``."""

    STORED = "stored"
    ALREADY_STORED = "already_stored"
    DIFFERENT_TERMINAL = "different_terminal"


class CancellationReason(enum.StrEnum):
    """The cancellation reasons with a meaning (1.2); any other non-empty reason is allowed
    for an explicit cancellation."""

    USER_REQUESTED = "user_requested"
    SESSION_ENDED = "session_ended"
    ENGINE_CANCELED = "engine_canceled"


#: Memory event types of CONTRACT.md section 9.
MEMORY_EVENT_TYPES: frozenset[str] = frozenset(
    {"user_message", "assistant_message", "tool_call", "tool_result", "planner_note", "thinking"}
)


@dataclass(frozen=True, kw_only=True)
class Session:
    """A host-owned session (1.3)."""

    id: str
    status: SessionStatus
    created_at: datetime
    ended_at: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class RunStart:
    """Input of every start (1.4)."""

    run_id: str
    agent_id: str
    started_at: datetime
    session_id: str = ""
    parent_run_id: str = ""
    predecessor_run_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    #: The published seed history end this start attaches (15.5); "" for none.
    seed_end_id: str = ""


@dataclass(frozen=True, kw_only=True)
class RunMeta:
    """What ``load_run`` returns (1.5)."""

    run_id: str
    agent_id: str
    session_id: str
    parent_run_id: str
    status: RunStatus
    start_outcome: RunStartOutcome
    started_at: datetime
    updated_at: datetime
    labels: Mapping[str, str] = field(default_factory=dict)
    cancellation_reason: str = ""
    successor_run_id: str = ""
    start_kind: RunStartKind = RunStartKind.ENGINE
    #: The seed history end the run's first start attached (15.5); "" for none.
    seed_end_id: str = ""


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """Opaque continuation checkpoint of a suspended run (1.6)."""

    id: str
    data: bytes


@dataclass(frozen=True, kw_only=True)
class Record:
    """An immutable run record (1.7); ``id`` is assigned by the store and ignored on input."""

    event_key: str
    run_id: str
    agent_id: str
    type: str
    payload: bytes
    timestamp: datetime
    id: str = ""
    session_id: str = ""
    turn_id: str = ""

    def same_as(self, other: Record) -> bool:
        """Whether two records are *the same* (1.7): every field but ``id`` equal."""
        return (
            self.event_key == other.event_key
            and self.run_id == other.run_id
            and self.agent_id == other.agent_id
            and self.session_id == other.session_id
            and self.turn_id == other.turn_id
            and self.type == other.type
            and self.timestamp == other.timestamp
            and self.payload == other.payload
        )


@dataclass(frozen=True, kw_only=True)
class AppendResult:
    """Result of writing one record (2.4)."""

    id: str
    inserted: bool
    session_status: SessionStatus | None = None


@dataclass(frozen=True, kw_only=True)
class RootRunStartResult:
    outcome: RunStartOutcome
    run_status: RunStatus
    started: AppendResult
    canceled: AppendResult | None = None


@dataclass(frozen=True, kw_only=True)
class ChildRunStartResult:
    outcome: RunStartOutcome
    run_status: RunStatus
    parent_record: AppendResult
    started: AppendResult
    canceled: AppendResult | None = None


@dataclass(frozen=True, kw_only=True)
class OneShotRunStartResult:
    run_status: RunStatus
    record: AppendResult


@dataclass(frozen=True, kw_only=True)
class OneShotChildRunStartResult:
    run_status: RunStatus
    parent_record: AppendResult
    started: AppendResult


@dataclass(frozen=True, kw_only=True)
class RepairResult:
    outcome: RepairOutcome
    status: RunStatus
    record: AppendResult | None = None


@dataclass(frozen=True, kw_only=True)
class Page:
    """A page of records, oldest first; ``next_cursor`` is "" at the end."""

    records: list[Record]
    next_cursor: str = ""


#: A page of a run's transcript records (CONTRACT.md 12.3): the same shape as every record
#: page; ``next_cursor`` is the ID of its last record when more transcript records follow
#: up to ``through``.
RecordPage = Page


@dataclass(frozen=True, kw_only=True)
class RunPage:
    """A page of run metas: by ``started_at`` then ``run_id`` for a session's runs; newest
    ``started_at`` first, ties by ``run_id``, for ``search_runs`` (11.1)."""

    runs: list[RunMeta]
    next_cursor: str = ""


@dataclass(frozen=True, kw_only=True)
class SessionPage:
    """A page of sessions, newest ``created_at`` first, ties by ID (11.1)."""

    sessions: list[Session]
    next_cursor: str = ""


@dataclass(frozen=True, kw_only=True)
class StatusCounts:
    """How many sessions or runs of each status a list holds (``count_sessions``,
    ``count_runs``): every status present, 0 included. A count is at most ``limit``; one
    equal to ``limit`` means at least that many."""

    counts: dict[str, int]
    limit: int

    def capped(self, status: str) -> bool:
        """Whether the count of ``status`` stopped at the limit (at least that many)."""
        return self.counts.get(status, 0) >= self.limit


@dataclass(frozen=True, kw_only=True)
class RecordCounts:
    """The number of records of each run and session named (``count_records``), by ID;
    unknown and purged IDs are left out."""

    runs: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class MemoryEvent:
    """One product-memory event (section 9); ``data`` is a JSON object."""

    type: str
    timestamp: datetime
    data: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """The memory events of one agent's run, in append order."""

    agent_id: str
    run_id: str
    events: list[MemoryEvent] = field(default_factory=list)


# --- delivery (CONTRACT.md 13) ----------------------------------------------------------


class WebhookEventType(enum.StrEnum):
    """What a webhook subscription may ask for (13.1)."""

    #: A run became ``completed``, ``failed`` or ``canceled`` (a stopped start included).
    RUN_FINISHED = "run.finished"
    RUN_SUSPENDED = "run.suspended"
    SESSION_ENDED = "session.ended"
    SESSION_PURGED = "session.purged"


class DeliveryStatus(enum.StrEnum):
    """Where one event's delivery to one subscription stands (13.3)."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class WaitUntil(enum.StrEnum):
    """What ``wait_for_run`` waits for (13.4): ``finished`` (completed, failed, canceled),
    or ``stopped`` (those or suspended)."""

    FINISHED = "finished"
    STOPPED = "stopped"

    def reached(self, status: RunStatus) -> bool:
        if self is WaitUntil.FINISHED:
            return status.is_finished
        return status.is_terminal


@dataclass(frozen=True, kw_only=True)
class Webhook:
    """A webhook subscription as listed (its secret is never shown again)."""

    webhook_id: str
    url: str
    events: tuple[WebhookEventType, ...]
    created_at: datetime


@dataclass(frozen=True, kw_only=True)
class CreatedWebhook(Webhook):
    """A new subscription, with its secret: ``whsec_`` + base64, shown this once."""

    secret: str


@dataclass(frozen=True, kw_only=True)
class WebhookDelivery:
    """One event's delivery to one subscription."""

    event_id: str
    type: WebhookEventType
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None = None
    #: When the next attempt is due; ``None`` once delivered or failed.
    next_attempt_at: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class DeliveryPage:
    deliveries: list[WebhookDelivery]
    next_cursor: str = ""


@dataclass(frozen=True, kw_only=True)
class Whoami:
    """Who the caller's token is (``GET /v1/whoami``): its name, role and permissions,
    or the open mode (no token needed: ``name`` empty, role ``admin``)."""

    #: ``tokens`` (the service requires a bearer token) or ``open``.
    mode: str
    #: The token's name; empty in open mode.
    name: str
    #: ``admin``, ``worker`` or ``reader``.
    role: str
    #: What the role may do: ``read``, ``write``, ``admin``.
    permissions: tuple[str, ...]

    @property
    def is_open(self) -> bool:
        return self.mode == "open"

    def may(self, permission: str) -> bool:
        """Whether the caller holds ``permission`` (``read``, ``write`` or ``admin``)."""
        return permission in self.permissions
