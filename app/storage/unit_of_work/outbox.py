"""The webhook outbox (CONTRACT.md 13.2): events written by the transaction of the state
change that causes them.

An operation buffers its event on its ``Tx`` (``Tx.add_event``) at the point where it
buffers the change itself, so a refused write, a rolled-back one or an exact retry (which
buffers nothing) leaves none. ``Tx.flush`` writes them after the state rows, inside the
same transaction: one ``webhook_events`` row per event that at least one subscription
wants, and one ``webhook_deliveries`` row per such subscription (the fan-out happens
here, at write time: the set of receivers is fixed by what was subscribed when the change
committed, and the dispatcher then only claims rows).

Delivery rows take their ``seq`` from the table's identity while this transaction holds
the lock that serialises the writers of the event's session (or sessionless run), so
``seq`` is the commit order within the event's ``ordering``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain import webhooks as rules
from app.domain.state import RunState
from app.storage.database.row_mapping import run_meta
from app.storage.database.tables import webhook_deliveries, webhook_event_types, webhook_events
from runtime_store_client import DeliveryStatus, WebhookEventType

_SUBSCRIBERS: Final = sa.select(webhook_event_types.c.webhook_id).where(
    webhook_event_types.c.event_type == sa.bindparam("event_type")
)


@dataclass(frozen=True, slots=True)
class PendingEvent:
    """An event buffered on a transaction; ``run`` is read at flush time, so it carries
    the run's state as the transaction leaves it."""

    type: WebhookEventType
    session_id: str
    run: RunState | None = None

    @property
    def ordering(self) -> str:
        if self.session_id:
            return f"session:{self.session_id}"
        assert self.run is not None
        return f"run:{self.run.run_id}"


def write_events(conn: Connection, now_ms: int, events: Sequence[PendingEvent]) -> None:
    """The outbox rows of ``events``, fanned out to the subscriptions that want each."""
    subscribers: dict[WebhookEventType, list[str]] = {}
    for event in events:
        if event.type not in subscribers:
            rows = conn.execute(_SUBSCRIBERS, {"event_type": event.type.value})
            subscribers[event.type] = [row.webhook_id for row in rows]
        wanted = subscribers[event.type]
        if not wanted:
            continue
        event_id = rules.new_event_id()
        meta = None if event.run is None else run_meta(event.run)
        conn.execute(
            webhook_events.insert().values(
                event_id=event_id,
                type=event.type.value,
                occurred_at_ms=now_ms,
                body=rules.event_body(event_id, event.type, now_ms, meta, event.session_id),
            )
        )
        conn.execute(
            webhook_deliveries.insert(),
            [
                {
                    "webhook_id": webhook_id,
                    "event_id": event_id,
                    "type": event.type.value,
                    "ordering": event.ordering,
                    "status": DeliveryStatus.PENDING.value,
                    "attempts": 0,
                    "last_status_code": None,
                    "next_attempt_at_ms": now_ms,
                    "window_start_ms": now_ms,
                }
                for webhook_id in sorted(wanted)
            ],
        )
