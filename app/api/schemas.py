"""Request and response bodies of the HTTP API, separate from the tables.

Field names are the contract's (CONTRACT.md sections 1, 7 and 8); each model converts to
and from the contract dataclasses of ``runtime_store_client``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema

from app.domain.webhooks import MAX_URL_CHARS
from app.observability.context import note_record
from runtime_store_client import (
    AppendResult,
    CancellationReason,
    Checkpoint,
    ChildRunStartResult,
    CreatedWebhook,
    DeliveryPage,
    DeliveryStatus,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
    RepairOutcome,
    RepairResult,
    RootRunStartResult,
    RunMeta,
    RunPage,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    Session,
    SessionPage,
    SessionStatus,
    Snapshot,
    Webhook,
    WebhookDelivery,
    WebhookEventType,
)
from runtime_store_client.types import MEMORY_EVENT_TYPES

from .wire import EXAMPLE_DIGEST, CheckpointData, Payload, Time, format_digest, parse_digest

Labels = Annotated[
    dict[str, str] | None,
    Field(
        description="String labels; absent, null and {} are equal.",
        examples=[{"site": "one"}],
    ),
]


JsonObject = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": True,
            "description": "A JSON object (free-form event data).",
            "examples": [{"text": "hello"}],
        }
    ),
]


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: A string the contract requires non-empty: ``minLength`` in the document, while the store
#: keeps refusing ``""`` with its own ``invalid_argument`` message (``run.session_id is
#: required``), the one rule in one place.
NON_EMPTY: Final[dict[str, Any]] = {"minLength": 1}


def required_in_document(*names: str) -> Callable[[dict[str, Any]], None]:
    """A model's ``json_schema_extra`` naming fields ``required`` (without a ``default``)
    that the model itself defaults to ``""``, so that a missing one reaches the store's
    check and its message, as an empty one does."""

    def extra(schema: dict[str, Any]) -> None:
        properties: dict[str, dict[str, Any]] = schema["properties"]
        for name in names:
            properties[name].pop("default", None)
        required = {*schema.get("required", ()), *names}
        schema["required"] = [name for name in properties if name in required]

    return extra


# --- sessions --------------------------------------------------------------------------


class SessionBody(WireModel):
    """A host-owned session."""

    id: str = Field(description="The session ID.", examples=["chat-session-123"])
    status: SessionStatus
    created_at: Time
    ended_at: Time | None = Field(default=None, description="First end time; null while active.")

    @classmethod
    def of(cls, session: Session) -> Self:
        return cls.model_construct(
            id=session.id,
            status=session.status,
            created_at=session.created_at,
            ended_at=session.ended_at,
        )


class CreateSessionRequest(WireModel):
    session_id: str = Field(description="The session ID, chosen by the host.", min_length=1)
    created_at: Time


class EndSessionRequest(WireModel):
    ended_at: Time


class SessionStatusBody(WireModel):
    status: SessionStatus


# --- runs ------------------------------------------------------------------------------


class RunStartBody(WireModel):
    """Input of every start (CONTRACT.md 1.4)."""

    run_id: str = Field(description="The run ID (the workflow ID).", examples=["run-42"])
    agent_id: str = Field(examples=["planner"])
    session_id: str = Field(
        default="",
        description='"" for the sessionless starts this body serves (one-shot and '
        "synchronous); root and child starts name their session (SessionRunStartBody).",
    )
    parent_run_id: str = Field(default="", description="Required for child starts.")
    predecessor_run_id: str = Field(
        default="", description="The suspended run this start continues, if any."
    )
    started_at: Time
    labels: Labels = None
    seed_end_id: str | None = Field(
        default=None,
        description="The published seed history end this start attaches (CONTRACT.md 15.5); "
        'absent, null and "" mean none.',
    )

    def contract(self) -> RunStart:
        return RunStart(
            run_id=self.run_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
            parent_run_id=self.parent_run_id,
            predecessor_run_id=self.predecessor_run_id,
            started_at=self.started_at,
            labels=self.labels or {},
            seed_end_id=self.seed_end_id or "",
        )


class RecordBody(WireModel):
    """An immutable run record (CONTRACT.md 1.7)."""

    id: str = Field(default="", description="Assigned by the store; ignored on input.")
    event_key: str = Field(examples=["evt-1"])
    run_id: str = Field(examples=["run-42"])
    agent_id: str = Field(examples=["planner"])
    session_id: str = Field(default="", description='The run\'s session; "" for sessionless runs.')
    turn_id: str = ""
    type: str = Field(examples=["planner_note"])
    payload: Payload
    timestamp: Time

    def contract(self) -> Record:
        return Record(
            id=self.id,
            event_key=self.event_key,
            run_id=self.run_id,
            agent_id=self.agent_id,
            session_id=self.session_id,
            turn_id=self.turn_id,
            type=self.type,
            payload=self.payload,
            timestamp=self.timestamp,
        )

    @classmethod
    def of(cls, record: Record) -> Self:
        return cls.model_construct(
            id=record.id,
            event_key=record.event_key,
            run_id=record.run_id,
            agent_id=record.agent_id,
            session_id=record.session_id,
            turn_id=record.turn_id,
            type=record.type,
            payload=record.payload,
            timestamp=record.timestamp,
        )


class CheckpointBody(WireModel):
    """A continuation checkpoint: opaque bytes as base64."""

    id: str = Field(examples=["cp-1"])
    data: CheckpointData

    def contract(self) -> Checkpoint:
        return Checkpoint(id=self.id, data=self.data)

    @classmethod
    def of(cls, checkpoint: Checkpoint) -> Self:
        return cls.model_construct(id=checkpoint.id, data=checkpoint.data)


class RunMetaBody(WireModel):
    """What ``load_run`` returns (CONTRACT.md 1.5)."""

    run_id: str
    agent_id: str
    session_id: str
    parent_run_id: str
    status: RunStatus
    start_outcome: RunStartOutcome
    started_at: Time
    updated_at: Time
    labels: dict[str, str]
    cancellation_reason: str
    successor_run_id: str = Field(
        description='The continuation admitted for this suspended run; "" until one starts.'
    )
    start_kind: RunStartKind = Field(
        description="`engine` (a root, child, one-shot or one-shot child start) or "
        "`synchronous`; a run ID is for ever one kind."
    )
    seed_end_id: str = Field(
        description='The seed history end the run\'s first start attached; "" when none.'
    )

    @classmethod
    def of(cls, meta: RunMeta) -> Self:
        return cls.model_construct(
            run_id=meta.run_id,
            agent_id=meta.agent_id,
            session_id=meta.session_id,
            parent_run_id=meta.parent_run_id,
            status=meta.status,
            start_outcome=meta.start_outcome,
            started_at=meta.started_at,
            updated_at=meta.updated_at,
            labels=dict(meta.labels),
            cancellation_reason=meta.cancellation_reason,
            successor_run_id=meta.successor_run_id,
            start_kind=meta.start_kind,
            seed_end_id=meta.seed_end_id,
        )


class AppendResultBody(WireModel):
    """The result of writing one record."""

    id: str = Field(description="The record ID (the original one on an exact retry).")
    inserted: bool = Field(description="False for an exact retry.")
    session_status: SessionStatus | None = Field(
        description="The owning session's status in the same transaction; null if sessionless."
    )

    @classmethod
    def of(cls, result: AppendResult) -> Self:
        note_record(result.inserted)  # every record result is rendered here: its metrics
        return cls.model_construct(
            id=result.id, inserted=result.inserted, session_status=result.session_status
        )

    @classmethod
    def of_optional(cls, result: AppendResult | None) -> Self | None:
        return None if result is None else cls.of(result)


RequestDigest = Annotated[
    bytes | None,
    BeforeValidator(parse_digest),
    PlainSerializer(format_digest, return_type=str | None),
    WithJsonSchema(
        {
            "anyOf": [{"type": "string", "pattern": "^[0-9a-f]{64}$"}, {"type": "null"}],
            "description": "The request digest of an engine start (CONTRACT.md 12.1): 32 "
            "bytes, not all zero, as 64 lowercase hex characters; absent or null: none. The "
            "run's first start stores it; a retry must carry the same one, and a closed run's "
            "start replayed with it may propose new times.",
            "examples": [EXAMPLE_DIGEST],
        }
    ),
]


class SessionRunStartBody(RunStartBody):
    """Input of a root or child start (CONTRACT.md 1.4): the run's session is required."""

    model_config = ConfigDict(json_schema_extra=required_in_document("session_id"))

    session_id: str = Field(
        default="",
        description="The run's session: required for root and child starts.",
        json_schema_extra=NON_EMPTY,
    )


class RootRunStartRequest(WireModel):
    run: SessionRunStartBody
    started: RecordBody = Field(description="The run_started record.")
    canceled: RecordBody = Field(
        description="The canceled run_completed record, used if the session has ended."
    )
    request_digest: RequestDigest = None


class ChildRunStartRequest(WireModel):
    run: SessionRunStartBody
    parent_linked: RecordBody = Field(description="The child_run_linked record of the parent.")
    started: RecordBody
    canceled: RecordBody
    request_digest: RequestDigest = None


class OneShotRunStartRequest(WireModel):
    run: RunStartBody
    started: RecordBody
    request_digest: RequestDigest = None


class OneShotChildRunStartRequest(WireModel):
    run: RunStartBody
    parent_linked: RecordBody
    started: RecordBody
    request_digest: RequestDigest = None


class SynchronousRunStartRequest(WireModel):
    run: RunStartBody = Field(description="A sessionless, parentless run start.")
    started: RecordBody = Field(description="The run_started record.")


class RootRunStartResultBody(WireModel):
    outcome: RunStartOutcome
    run_status: RunStatus
    started: AppendResultBody
    canceled: AppendResultBody | None

    @classmethod
    def of(cls, result: RootRunStartResult) -> Self:
        return cls.model_construct(
            outcome=result.outcome,
            run_status=result.run_status,
            started=AppendResultBody.of(result.started),
            canceled=AppendResultBody.of_optional(result.canceled),
        )


class ChildRunStartResultBody(WireModel):
    outcome: RunStartOutcome
    run_status: RunStatus
    parent_record: AppendResultBody
    started: AppendResultBody
    canceled: AppendResultBody | None

    @classmethod
    def of(cls, result: ChildRunStartResult) -> Self:
        return cls.model_construct(
            outcome=result.outcome,
            run_status=result.run_status,
            parent_record=AppendResultBody.of(result.parent_record),
            started=AppendResultBody.of(result.started),
            canceled=AppendResultBody.of_optional(result.canceled),
        )


class OneShotRunStartResultBody(WireModel):
    run_status: RunStatus
    record: AppendResultBody

    @classmethod
    def of(cls, result: OneShotRunStartResult) -> Self:
        return cls.model_construct(
            run_status=result.run_status, record=AppendResultBody.of(result.record)
        )


class OneShotChildRunStartResultBody(WireModel):
    run_status: RunStatus
    parent_record: AppendResultBody
    started: AppendResultBody

    @classmethod
    def of(cls, result: OneShotChildRunStartResult) -> Self:
        return cls.model_construct(
            run_status=result.run_status,
            parent_record=AppendResultBody.of(result.parent_record),
            started=AppendResultBody.of(result.started),
        )


class AppendRecordRequest(WireModel):
    record: RecordBody


class AppendRecordsRequest(WireModel):
    records: list[RecordBody] = Field(
        description="1 to 1,000 ordinary records of the path's run, stored in this order."
    )


class AppendResultsBody(WireModel):
    """One result per record of a batch, in input order."""

    results: list[AppendResultBody]

    @classmethod
    def of(cls, results: list[AppendResult]) -> Self:
        return cls.model_construct(results=[AppendResultBody.of(r) for r in results])


class CancellationRequest(WireModel):
    reason: str = Field(
        description="Why the run is canceled: non-empty; user_requested, session_ended and "
        "engine_canceled have a meaning, any other reason is allowed.",
        examples=[CancellationReason.USER_REQUESTED.value],
        json_schema_extra=NON_EMPTY,
    )
    record: RecordBody = Field(description="The runtime.cancellation_intent record.")


class SuspensionRequest(WireModel):
    checkpoint: CheckpointBody
    record: RecordBody = Field(description="The run_suspended record.")


class TerminalRequest(WireModel):
    status: RunStatus = Field(description="completed, failed or canceled.")
    record: RecordBody = Field(description="The run_completed record.")


class RepairResultBody(WireModel):
    outcome: RepairOutcome
    status: RunStatus = Field(description="The run's stored status.")
    record: AppendResultBody | None = Field(description="Null for different_terminal.")

    @classmethod
    def of(cls, result: RepairResult) -> Self:
        return cls.model_construct(
            outcome=result.outcome,
            status=result.status,
            record=AppendResultBody.of_optional(result.record),
        )


class RecordPageBody(WireModel):
    records: list[RecordBody]
    next_cursor: str = Field(description='Pass back to read on; "" when no more existed.')

    @classmethod
    def of(cls, page: Page) -> Self:
        return cls.model_construct(
            records=[RecordBody.of(record) for record in page.records],
            next_cursor=page.next_cursor,
        )


class RunPageBody(WireModel):
    runs: list[RunMetaBody]
    next_cursor: str

    @classmethod
    def of(cls, page: RunPage) -> Self:
        return cls.model_construct(
            runs=[RunMetaBody.of(run) for run in page.runs], next_cursor=page.next_cursor
        )


class SessionPageBody(WireModel):
    """A page of sessions, newest `created_at` first, ties by ID."""

    sessions: list[SessionBody]
    next_cursor: str

    @classmethod
    def of(cls, page: SessionPage) -> Self:
        return cls.model_construct(
            sessions=[SessionBody.of(session) for session in page.sessions],
            next_cursor=page.next_cursor,
        )


# --- memory ----------------------------------------------------------------------------


class MemoryEventBody(WireModel):
    """One product-memory event."""

    type: str = Field(
        description="user_message, assistant_message, tool_call, tool_result, planner_note "
        "or thinking.",
        examples=["user_message"],
        # The store refuses any other type with its own message (section 9).
        json_schema_extra={"enum": [*sorted(MEMORY_EVENT_TYPES)]},
    )
    timestamp: Time
    data: JsonObject = Field(default_factory=dict)
    labels: Labels = None

    def contract(self) -> MemoryEvent:
        return MemoryEvent(
            type=self.type, timestamp=self.timestamp, data=self.data, labels=self.labels or {}
        )

    @classmethod
    def of(cls, event: MemoryEvent) -> Self:
        return cls.model_construct(
            type=event.type,
            timestamp=event.timestamp,
            data=dict(event.data),
            labels=dict(event.labels),
        )


class AppendMemoryRequest(WireModel):
    events: list[MemoryEventBody]


class SnapshotBody(WireModel):
    agent_id: str
    run_id: str
    events: list[MemoryEventBody]

    @classmethod
    def of(cls, snapshot: Snapshot) -> Self:
        return cls.model_construct(
            agent_id=snapshot.agent_id,
            run_id=snapshot.run_id,
            events=[MemoryEventBody.of(event) for event in snapshot.events],
        )


# --- webhooks (CONTRACT.md 13) -----------------------------------------------------------


class CreateWebhookRequest(WireModel):
    url: str = Field(
        description="Where events are POSTed: http or https; hosts resolving to internal "
        "addresses are refused unless allowed by RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS.",
        examples=["https://hooks.example.com/runtime-store"],
        # The store refuses a longer one with its own message.
        json_schema_extra={"maxLength": MAX_URL_CHARS},
    )
    events: list[WebhookEventType] = Field(
        min_length=1, description="The event types this subscription receives."
    )


class WebhookBody(WireModel):
    """A webhook subscription (its secret is never shown again)."""

    webhook_id: str = Field(examples=["wh_5f0c2a9e41b37d6c8e1f0a2b"])
    url: str
    events: list[WebhookEventType]
    created_at: Time

    @classmethod
    def of(cls, webhook: Webhook) -> Self:
        return cls.model_construct(
            webhook_id=webhook.webhook_id,
            url=webhook.url,
            events=list(webhook.events),
            created_at=webhook.created_at,
        )


class CreatedWebhookBody(WebhookBody):
    """A new subscription with its signing secret, shown this once."""

    secret: str = Field(
        description="`whsec_` + base64 of the HMAC key: verify each delivery's "
        "`webhook-signature` with it (Standard Webhooks).",
    )

    @classmethod
    def of(cls, webhook: Webhook) -> Self:
        assert isinstance(webhook, CreatedWebhook)
        return cls.model_construct(
            webhook_id=webhook.webhook_id,
            url=webhook.url,
            events=list(webhook.events),
            created_at=webhook.created_at,
            secret=webhook.secret,
        )


class WebhookListBody(WireModel):
    webhooks: list[WebhookBody]


class WebhookDeliveryBody(WireModel):
    """One event's delivery to one subscription."""

    event_id: str
    type: WebhookEventType
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None = Field(description="The last attempt's HTTP status, if any.")
    next_attempt_at: Time | None = Field(
        description="When the next attempt is due; null once delivered or failed."
    )

    @classmethod
    def of(cls, delivery: WebhookDelivery) -> Self:
        return cls.model_construct(
            event_id=delivery.event_id,
            type=delivery.type,
            status=delivery.status,
            attempts=delivery.attempts,
            last_status_code=delivery.last_status_code,
            next_attempt_at=delivery.next_attempt_at,
        )


class DeliveryPageBody(WireModel):
    deliveries: list[WebhookDeliveryBody]
    next_cursor: str

    @classmethod
    def of(cls, page: DeliveryPage) -> Self:
        return cls.model_construct(
            deliveries=[WebhookDeliveryBody.of(delivery) for delivery in page.deliveries],
            next_cursor=page.next_cursor,
        )


# --- who the caller is ---------------------------------------------------------------


class WhoamiBody(WireModel):
    """The caller's token and what it may do, or the open mode."""

    mode: Literal["tokens", "open"] = Field(
        description="`tokens` when the service requires a bearer token, `open` when it "
        "runs without authentication."
    )
    name: str = Field(description="The token's name; empty in open mode.", examples=["ops-alice"])
    # Literals, not the domain enums: a schema named ``Role`` already exists (a message's).
    role: Literal["admin", "worker", "reader"] = Field(
        description="The token's role; `admin` in open mode (anyone may do anything)."
    )
    permissions: list[Literal["read", "write", "admin"]] = Field(
        description="What the role may do: `read`, `write`, `admin`."
    )
