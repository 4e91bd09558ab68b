"""Bodies of sessions (CONTRACT.md 3.1, 3.2, 11.1): a session, its creation and end, its
status, a page of sessions."""

from __future__ import annotations

from typing import Self

from pydantic import Field

from app.api.schemas.wire_model import WireModel
from app.api.wire import Time
from runtime_store_client import Session, SessionPage, SessionStatus


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
