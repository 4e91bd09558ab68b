"""Bodies of the five starts (CONTRACT.md 1.4, 3.3-3.6, 12.1, 12.2): the run start, the
request digest, each start's request and result."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema

from app.api.schemas.records import AppendResultBody, RecordBody
from app.api.schemas.wire_model import NON_EMPTY, Labels, WireModel, required_in_document
from app.api.wire import EXAMPLE_DIGEST, Time, format_digest, parse_digest
from runtime_store_client import (
    ChildRunStartResult,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    RootRunStartResult,
    RunStart,
    RunStartOutcome,
    RunStatus,
)


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
