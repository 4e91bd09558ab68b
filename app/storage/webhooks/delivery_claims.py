"""What the webhook dispatcher claims, and each attempt's outcome (CONTRACT.md 13.3).

The dispatcher (``app/webhook_delivery/dispatcher.py``, through ``delivery_queue.py``)
claims due deliveries here, sends them outside any transaction, and records each
attempt's outcome.

A claim is one write transaction: it selects due pending deliveries whose ordering has no
earlier pending one (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so replicas claim
disjoint rows; SQLite's write lock does the same), and moves their due time to the end of
a lease. A dispatcher that dies mid-attempt leaves the lease to expire: another claims
the delivery again (at least once). Only one attempt per delivery is in flight, since a
claimed row is not due again before its lease ends. A claim may also be given the
caller's attempts in flight per subscription and a share (``per_webhook``): it passes over
a subscription that holds its share, so one slow subscriber never takes every slot of a
dispatcher. The lease's end is also its fencing
token: an outcome is stored only while the row still carries it, so a dispatcher whose
lease expired (and whose delivery another has claimed since) never overwrites the newer
attempt's outcome.

Once delivered or failed, a delivery's ``next_attempt_at_ms`` is the time it settled:
retention (``webhooks/settled_pruning.py``) deletes settled deliveries by it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from app.domain import webhooks as rules
from app.storage.database.tables import webhook_deliveries, webhook_events, webhooks
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import DeliveryStatus

d = webhook_deliveries.alias("d")
earlier = webhook_deliveries.alias("earlier")


@dataclass(frozen=True, slots=True)
class Claimed:
    """A delivery claimed for one attempt."""

    seq: int
    webhook_id: str
    event_id: str
    url: str
    secret: str
    body: str
    attempts: int
    window_start_ms: int
    #: The lease's end, as stored in the row's ``next_attempt_at_ms``: the fencing token.
    lease_until_ms: int


def _due(excluded: Sequence[str]) -> sa.Select[Any]:
    """Due pending deliveries with no earlier pending delivery of their ordering, none of a
    subscription in ``excluded``, locked (PostgreSQL: skipping rows another claim holds)."""
    query = sa.select(d.c.seq, d.c.webhook_id).where(
        d.c.status == DeliveryStatus.PENDING.value,
        d.c.next_attempt_at_ms <= sa.bindparam("now_ms"),
        ~sa.exists().where(
            earlier.c.webhook_id == d.c.webhook_id,
            earlier.c.ordering == d.c.ordering,
            earlier.c.status == DeliveryStatus.PENDING.value,
            earlier.c.seq < d.c.seq,
        ),
    )
    if excluded:
        query = query.where(d.c.webhook_id.not_in(excluded))
    return (
        query.order_by(d.c.next_attempt_at_ms, d.c.seq)
        .limit(sa.bindparam("limit"))
        .with_for_update(skip_locked=True, of=d)
    )


def _any_due(excluded: Sequence[str]) -> sa.Select[Any]:
    query = sa.select(webhook_deliveries.c.seq).where(
        webhook_deliveries.c.status == DeliveryStatus.PENDING.value,
        webhook_deliveries.c.next_attempt_at_ms <= sa.bindparam("now_ms"),
    )
    if excluded:
        query = query.where(webhook_deliveries.c.webhook_id.not_in(excluded))
    return query.limit(1)


def claim(
    ctx: Context,
    limit: int,
    lease_ms: int,
    *,
    per_webhook: int | None = None,
    busy: Mapping[str, int] | None = None,
) -> list[Claimed]:
    """Up to ``limit`` due deliveries, each leased for ``lease_ms`` to this caller; with
    ``per_webhook``, no subscription gets more than that many in flight, counting the
    caller's attempts in ``busy`` (subscription ID → attempts), so a slow subscriber
    never takes every slot of a dispatcher."""
    in_flight = dict(busy or {})
    excluded = (
        sorted(hook for hook, count in in_flight.items() if count >= per_webhook)
        if per_webhook is not None
        else []
    )
    due = ctx.uow.read(
        lambda tx: tx.conn.execute(_any_due(excluded), {"now_ms": tx.now_ms}).first()
    )
    if due is None:  # SQLite: no write lock taken for nothing
        return []

    def operation(tx: Tx) -> list[Claimed]:
        taken = dict(in_flight)  # the operation may run again: count afresh
        seqs: list[int] = []
        for row in tx.conn.execute(_due(excluded), {"now_ms": tx.now_ms, "limit": limit}):
            if per_webhook is not None:
                if taken.get(row.webhook_id, 0) >= per_webhook:
                    continue  # left unclaimed: its lock ends with this transaction
                taken[row.webhook_id] = taken.get(row.webhook_id, 0) + 1
            seqs.append(row.seq)
        if not seqs:
            return []
        lease_until_ms = tx.now_ms + lease_ms
        tx.conn.execute(
            webhook_deliveries.update()
            .where(webhook_deliveries.c.seq.in_(seqs))
            .values(next_attempt_at_ms=lease_until_ms)
        )
        rows = tx.conn.execute(
            sa.select(
                webhook_deliveries.c.seq,
                webhook_deliveries.c.webhook_id,
                webhook_deliveries.c.event_id,
                webhook_deliveries.c.attempts,
                webhook_deliveries.c.window_start_ms,
                webhooks.c.url,
                webhooks.c.secret,
                webhook_events.c.body,
            )
            .join(webhooks, webhooks.c.webhook_id == webhook_deliveries.c.webhook_id)
            .join(webhook_events, webhook_events.c.event_id == webhook_deliveries.c.event_id)
            .where(webhook_deliveries.c.seq.in_(seqs))
            .order_by(webhook_deliveries.c.seq)
        )
        return [
            Claimed(
                seq=row.seq,
                webhook_id=row.webhook_id,
                event_id=row.event_id,
                url=row.url,
                secret=row.secret,
                body=row.body,
                attempts=row.attempts,
                window_start_ms=row.window_start_ms,
                lease_until_ms=lease_until_ms,
            )
            for row in rows
        ]

    return ctx.uow.write(operation)


def record_attempt(
    ctx: Context,
    claimed: Claimed,
    status_code: int | None,
    retry_seconds: float,
) -> DeliveryStatus | None:
    """Store one attempt's outcome: delivered, pending again (backoff) or failed; ``None``
    when the lease was lost (expired and claimed again, or the delivery deleted), so the
    outcome is not this attempt's to store."""

    def operation(tx: Tx) -> DeliveryStatus | None:
        attempts = claimed.attempts + 1
        outcome = rules.after_attempt(
            status_code,
            attempts=attempts,
            now_ms=tx.now_ms,
            window_start_ms=claimed.window_start_ms,
            retry_seconds=retry_seconds,
        )
        stored = tx.conn.execute(
            webhook_deliveries.update()
            .where(
                webhook_deliveries.c.seq == claimed.seq,
                webhook_deliveries.c.status == DeliveryStatus.PENDING.value,
                webhook_deliveries.c.next_attempt_at_ms == claimed.lease_until_ms,
            )
            .values(
                status=outcome.status.value,
                attempts=attempts,
                last_status_code=status_code,
                next_attempt_at_ms=(
                    tx.now_ms if outcome.next_attempt_at_ms is None else outcome.next_attempt_at_ms
                ),
            )
        )
        return outcome.status if stored.rowcount == 1 else None

    return ctx.uow.write(operation)


def oldest_pending_ms(ctx: Context) -> int | None:
    """When the oldest pending delivery's event occurred (its window start)."""
    query = sa.select(sa.func.min(webhook_deliveries.c.window_start_ms)).where(
        webhook_deliveries.c.status == DeliveryStatus.PENDING.value
    )
    value = ctx.uow.read(lambda tx: tx.conn.execute(query).scalar())
    return None if value is None else int(value)
