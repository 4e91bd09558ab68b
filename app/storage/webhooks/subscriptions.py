"""Webhook subscriptions and their deliveries, the admin side (CONTRACT.md 13.1, 13.3).

Subscriptions are admin data: created (the secret answered once), listed, deleted with
their deliveries; a subscription's deliveries are listed and a failed one queued again.
Events enter the outbox with the state changes that cause them (``outbox.py``); the
dispatcher claims and settles deliveries through ``delivery_claims.py``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Sequence
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
