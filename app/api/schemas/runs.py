"""Bodies of a run after its start (CONTRACT.md 1.5, 3.8-3.12, 11.1): its meta, a page of
runs, its checkpoint, cancellation, suspension, terminal and repair."""

from __future__ import annotations

from typing import Self

from pydantic import Field

from app.api.schemas.records import AppendResultBody, RecordBody
from app.api.schemas.wire_model import NON_EMPTY, WireModel
from app.api.wire import CheckpointData, Time
from runtime_store_client import (
    CancellationReason,
    Checkpoint,
    RepairOutcome,
    RepairResult,
    RunMeta,
    RunPage,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
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


class RunPageBody(WireModel):
    runs: list[RunMetaBody]
    next_cursor: str

    @classmethod
    def of(cls, page: RunPage) -> Self:
        return cls.model_construct(
            runs=[RunMetaBody.of(run) for run in page.runs], next_cursor=page.next_cursor
        )


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
