"""Bodies of run records (CONTRACT.md 1.7, 3.7, section 4, 11.2): a record, the result of
writing one, appends of one or a batch, a page of records."""

from __future__ import annotations

from typing import Self

from pydantic import Field

from app.api.schemas.wire_model import WireModel
from app.api.wire import Payload, Time
from app.observability.context import note_record
from runtime_store_client import AppendResult, Page, Record, SessionStatus


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


class RecordPageBody(WireModel):
    records: list[RecordBody]
    next_cursor: str = Field(description='Pass back to read on; "" when no more existed.')

    @classmethod
    def of(cls, page: Page) -> Self:
        return cls.model_construct(
            records=[RecordBody.of(record) for record in page.records],
            next_cursor=page.next_cursor,
        )
