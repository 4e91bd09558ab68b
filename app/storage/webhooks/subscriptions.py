"""Webhook subscriptions, their deliveries, and what the dispatcher claims (CONTRACT.md 13).

Subscriptions are admin data: created (the secret answered once), listed, deleted with
their deliveries. Events enter the outbox with the state changes that cause them
(``outbox.py``); the dispatcher (``app/webhook_dispatcher.py``) claims due deliveries
here, sends them outside any transaction, and records each attempt's outcome.

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
retention (``webhooks/settled_pruning.py``) deletes settled deliveries by it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from app.domain import cursors
from app.domain import webhooks as rules
from app.domain.text import check_plain_text
from app.domain.times import from_millis
from app.storage.database.tables import (
    webhook_deliveries,
    webhook_event_types,
    webhook_events,
    webhooks,
)
from app.storage.operation import Context
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    CreatedWebhook,
    DeliveryPage,
    DeliveryStatus,
    InvalidArgumentError,
    Webhook,
    WebhookDelivery,
    WebhookEventType,
    WebhookNotFoundError,
)

d = webhook_deliveries.alias("d")
earlier = webhook_deliveries.alias("earlier")


def resolve_host(host: str) -> list[str]:
    """The addresses ``host`` resolves to now (a literal: itself); none when it does not
    resolve."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, OSError):
        return []
    return sorted({str(info[4][0]) for info in infos})


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """What subscriptions and deliveries are allowed to reach."""

    allowed_hosts: tuple[str, ...] = ()
    resolve: rules.Resolve = resolve_host


def _not_found(webhook_id: str) -> WebhookNotFoundError:
    return WebhookNotFoundError(f"webhook {webhook_id!r} not found")


def _webhook(row: Any) -> Webhook:
    return Webhook(
        webhook_id=row.webhook_id,
        url=row.url,
        events=tuple(WebhookEventType(value) for value in json.loads(row.events)),
        created_at=from_millis(row.created_at_ms),
    )


def create_webhook(
    ctx: Context, config: WebhookConfig, url: str, events: Sequence[str]
) -> CreatedWebhook:
    """A new subscription; its secret is in this answer only (13.1)."""
    if isinstance(events, str) or not isinstance(events, Sequence):
        raise InvalidArgumentError("events must be a list of event types")
    wanted = rules.event_types(events)
    rules.check_subscription_url(url, config.allowed_hosts, config.resolve)
    webhook_id, secret = rules.new_webhook_id(), rules.new_secret()

    def operation(tx: Tx) -> CreatedWebhook:
        tx.conn.execute(
            webhooks.insert().values(
                webhook_id=webhook_id,
                url=url,
                secret=secret,
                events=json.dumps([event.value for event in wanted]),
                created_at_ms=tx.now_ms,
            )
        )
        tx.conn.execute(
            webhook_event_types.insert(),
            [{"event_type": event.value, "webhook_id": webhook_id} for event in wanted],
        )
        return CreatedWebhook(
            webhook_id=webhook_id,
            url=url,
            events=wanted,
            created_at=from_millis(tx.now_ms),
            secret=secret,
        )

    return ctx.uow.write(operation)


def list_webhooks(ctx: Context) -> list[Webhook]:
    """Every subscription, oldest first, without secrets."""
    query = sa.select(
        webhooks.c.webhook_id, webhooks.c.url, webhooks.c.events, webhooks.c.created_at_ms
    ).order_by(webhooks.c.created_at_ms, webhooks.c.webhook_id)
    return ctx.uow.read(lambda tx: [_webhook(row) for row in tx.conn.execute(query)])


def _exists(tx: Tx, webhook_id: str) -> None:
    row = tx.conn.execute(
        sa.select(webhooks.c.webhook_id).where(webhooks.c.webhook_id == webhook_id)
    ).first()
    if row is None:
        raise _not_found(webhook_id)


def delete_webhook(ctx: Context, webhook_id: str) -> None:
    """Delete a subscription and its deliveries (pending ones are never sent)."""
    check_plain_text(webhook_id, "webhook_id")

    def operation(tx: Tx) -> None:
        _exists(tx, webhook_id)
        tx.conn.execute(
            webhook_event_types.delete().where(webhook_event_types.c.webhook_id == webhook_id)
        )
        tx.conn.execute(
            webhook_deliveries.delete().where(webhook_deliveries.c.webhook_id == webhook_id)
        )
        tx.conn.execute(webhooks.delete().where(webhooks.c.webhook_id == webhook_id))
        # Events no subscription delivers any more.
        tx.conn.execute(
            webhook_events.delete().where(
                ~sa.exists().where(webhook_deliveries.c.event_id == webhook_events.c.event_id)
            )
        )

    ctx.uow.write(operation)


def _delivery(row: Any) -> WebhookDelivery:
    status = DeliveryStatus(row.status)
    return WebhookDelivery(
        event_id=row.event_id,
        type=WebhookEventType(row.type),
        status=status,
        attempts=row.attempts,
        last_status_code=row.last_status_code,
        next_attempt_at=(
            from_millis(row.next_attempt_at_ms) if status is DeliveryStatus.PENDING else None
        ),
    )


def _statuses(statuses: Iterable[str]) -> list[str]:
    wanted: list[str] = []
    for value in statuses:
        try:
            status = DeliveryStatus(value)
        except ValueError:
            raise InvalidArgumentError(f"unknown delivery status {value!r}") from None
        if status.value not in wanted:
            wanted.append(status.value)
    return sorted(wanted)


def list_deliveries(
    ctx: Context, webhook_id: str, statuses: Sequence[str], cursor: str, limit: int
) -> DeliveryPage:
    """A subscription's deliveries in the order their events committed (13.3)."""
    size = cursors.check_limit(limit, ctx.page_max)
    check_plain_text(webhook_id, "webhook_id")
    wanted = _statuses(statuses)
    binding = [webhook_id, wanted]
    after = ctx.cursors.open(cursors.WEBHOOK_DELIVERIES, cursor, binding, 1) if cursor else None
    codec = ctx.cursors.codec()

    def operation(tx: Tx) -> DeliveryPage:
        _exists(tx, webhook_id)
        query = sa.select(webhook_deliveries).where(webhook_deliveries.c.webhook_id == webhook_id)
        if wanted:
            query = query.where(webhook_deliveries.c.status.in_(wanted))
        if after is not None:
            query = query.where(webhook_deliveries.c.seq > int(after[0]))
        query = query.order_by(webhook_deliveries.c.seq).limit(size + 1)
        rows, next_cursor = cursors.keyset_page(
            tx.conn.execute(query).all(),
            size,
            lambda last: codec.seal(cursors.WEBHOOK_DELIVERIES, binding, [last.seq]),
        )
        return DeliveryPage(deliveries=[_delivery(row) for row in rows], next_cursor=next_cursor)

    return ctx.uow.read(operation)


def retry_delivery(ctx: Context, webhook_id: str, event_id: str) -> WebhookDelivery:
    """Queue a failed delivery again, with a new retry window; a pending or delivered one
    is answered unchanged."""
    check_plain_text(webhook_id, "webhook_id")
    check_plain_text(event_id, "event_id")

    def operation(tx: Tx) -> WebhookDelivery:
        _exists(tx, webhook_id)
        where = sa.and_(
            webhook_deliveries.c.webhook_id == webhook_id,
            webhook_deliveries.c.event_id == event_id,
        )
        row = tx.conn.execute(sa.select(webhook_deliveries).where(where)).first()
        if row is None:
            raise WebhookNotFoundError(
                f"webhook {webhook_id!r} has no delivery of event {event_id!r}"
            )
        if row.status == DeliveryStatus.FAILED.value:
            tx.conn.execute(
                webhook_deliveries.update()
                .where(where)
                .values(
                    status=DeliveryStatus.PENDING.value,
                    next_attempt_at_ms=tx.now_ms,
                    window_start_ms=tx.now_ms,
                )
            )
            row = tx.conn.execute(sa.select(webhook_deliveries).where(where)).one()
        return _delivery(row)

    return ctx.uow.write(operation)


# --- the dispatcher's side ---------------------------------------------------------------


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
