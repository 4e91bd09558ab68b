"""Bodies of the memory store (CONTRACT.md section 9): an event, an append, a snapshot."""

from __future__ import annotations

from typing import Self

from pydantic import Field

from app.api.schemas.wire_model import JsonObject, Labels, WireModel
from app.api.wire import Time
from runtime_store_client import MemoryEvent, Snapshot
from runtime_store_client.types import MEMORY_EVENT_TYPES


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
