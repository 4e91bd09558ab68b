"""Retention of webhook deliveries (CONTRACT.md 13.3): settled ones do not stay forever.

A delivery that was ``delivered`` or ``failed`` longer ago than the retention (its
``next_attempt_at_ms`` is the time it settled) is deleted, and with it its event once no
delivery of it remains (an event fanned out to two subscriptions stays while either
delivery is pending or recent). Pending deliveries are never deleted, however long
their receiver is down, so an event is never lost (13.3); the one exception is a pending
delivery whose subscription no longer exists, which no one will ever send. What goes is
what 13.3 only shows: ``GET …/deliveries`` lists the recent deliveries, and a failed one
can be queued again (``…/retry``) until it is pruned.

Deletes go in transactions of ``BATCH`` deliveries, each reading one status's range of
the ``(status, next_attempt_at_ms)`` index; the ``DELETE`` repeats both conditions, so a
delivery queued again meanwhile (pending once more) is kept. On PostgreSQL an advisory
lock lets one process of all replicas prune at a time (two pruners deleting the two
deliveries of one event could each see the other's and keep the event).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import sqlalchemy as sa

from app.storage.database.tables import webhook_deliveries, webhook_events, webhooks
from app.storage.operation import Context
from app.storage.sessions.deletion import execute, timed
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import DeliveryStatus

#: Deliveries deleted per transaction.
BATCH: Final = 500
#: The advisory lock that keeps pruning to one process at a time.
LOCK_NAME: Final = "runtime-store webhook deliveries"
SETTLED: Final = (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED)


@dataclass
class Pruned:
    """What one pass deleted."""

    deliveries: int = 0
    events: int = 0


def _settled_before(status: DeliveryStatus, cutoff_ms: int) -> sa.ColumnElement[bool]:
    return sa.and_(
        webhook_deliveries.c.status == status.value,
        webhook_deliveries.c.next_attempt_at_ms < cutoff_ms,
    )


#: Pending deliveries of a subscription that no longer exists: an event written while its
#: subscription was being deleted (the writer read the subscriber before the delete
#: committed). They can never be sent; the delete means they never will (13.1).
_ORPHANED: Final = sa.and_(
    webhook_deliveries.c.status == DeliveryStatus.PENDING.value,
    ~sa.exists().where(webhooks.c.webhook_id == webhook_deliveries.c.webhook_id),
)


def _batch(tx: Tx, where: sa.ColumnElement[bool], batch: int) -> tuple[bool, int, int]:
    """Up to ``batch`` deliveries matching ``where``, and their events left without a
    delivery: whether more may remain, and what went."""
    rows = tx.conn.execute(
        sa.select(webhook_deliveries.c.seq, webhook_deliveries.c.event_id)
        .where(where)
        .order_by(webhook_deliveries.c.next_attempt_at_ms)
        .limit(batch)
    ).all()
    if not rows:
        return False, 0, 0
    seqs = [row.seq for row in rows]
    deliveries = execute(
        webhook_deliveries.delete().where(webhook_deliveries.c.seq.in_(seqs), where), tx
    )
    events = execute(
        webhook_events.delete().where(
            webhook_events.c.event_id.in_(sorted({row.event_id for row in rows})),
            ~sa.exists().where(webhook_deliveries.c.event_id == webhook_events.c.event_id),
        ),
        tx,
    )
    return len(rows) == batch, deliveries, events


def prune(
    ctx: Context,
    cutoff_ms: int,
    *,
    batch: int = BATCH,
    should_stop: Callable[[], bool] = lambda: False,
) -> Pruned | None:
    """Delete settled deliveries older than ``cutoff_ms``, pending ones of deleted
    subscriptions, and the events left without a delivery; ``None`` when another process
    is pruning."""
    with ctx.uow.dialect.exclusive(ctx.uow.engine, LOCK_NAME) as mine:
        if not mine:
            return None
        done = Pruned()
        wheres = [_settled_before(status, cutoff_ms) for status in SETTLED] + [_ORPHANED]
        for where in wheres:
            while not should_stop() and mine.still_held():
                more, deliveries, events = timed(
                    ctx, functools.partial(_batch, where=where, batch=batch)
                )
                done.deliveries += deliveries
                done.events += events
                if not more:
                    break
        return done
