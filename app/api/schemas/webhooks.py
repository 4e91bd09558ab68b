"""Bodies of webhook subscriptions and their deliveries (CONTRACT.md 13.1, 13.3)."""

from __future__ import annotations

from typing import Self

from pydantic import Field

from app.api.schemas.wire_model import WireModel
from app.api.wire import Time
from app.domain.webhooks import MAX_URL_CHARS
from runtime_store_client import (
    CreatedWebhook,
    DeliveryPage,
    DeliveryStatus,
    Webhook,
    WebhookDelivery,
    WebhookEventType,
)


class CreateWebhookRequest(WireModel):
    url: str = Field(
        description="Where events are POSTed: http or https; hosts resolving to internal "
        "addresses are refused unless allowed by RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS.",
        examples=["https://hooks.example.com/runtime-store"],
        # The store refuses a longer one with its own message.
        json_schema_extra={"maxLength": MAX_URL_CHARS},
    )
    events: list[WebhookEventType] = Field(
        min_length=1, description="The event types this subscription receives."
    )


class WebhookBody(WireModel):
    """A webhook subscription (its secret is never shown again)."""

    webhook_id: str = Field(examples=["wh_5f0c2a9e41b37d6c8e1f0a2b"])
    url: str
    events: list[WebhookEventType]
    created_at: Time

    @classmethod
    def of(cls, webhook: Webhook) -> Self:
        return cls.model_construct(
            webhook_id=webhook.webhook_id,
            url=webhook.url,
            events=list(webhook.events),
            created_at=webhook.created_at,
        )


class CreatedWebhookBody(WebhookBody):
    """A new subscription with its signing secret, shown this once."""

    secret: str = Field(
        description="`whsec_` + base64 of the HMAC key: verify each delivery's "
        "`webhook-signature` with it (Standard Webhooks).",
    )

    @classmethod
    def of(cls, webhook: Webhook) -> Self:
        assert isinstance(webhook, CreatedWebhook)
        return cls.model_construct(
            webhook_id=webhook.webhook_id,
            url=webhook.url,
            events=list(webhook.events),
            created_at=webhook.created_at,
            secret=webhook.secret,
        )


class WebhookListBody(WireModel):
    webhooks: list[WebhookBody]


class WebhookDeliveryBody(WireModel):
    """One event's delivery to one subscription."""

    event_id: str
    type: WebhookEventType
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None = Field(description="The last attempt's HTTP status, if any.")
    next_attempt_at: Time | None = Field(
        description="When the next attempt is due; null once delivered or failed."
    )

    @classmethod
    def of(cls, delivery: WebhookDelivery) -> Self:
        return cls.model_construct(
            event_id=delivery.event_id,
            type=delivery.type,
            status=delivery.status,
            attempts=delivery.attempts,
            last_status_code=delivery.last_status_code,
            next_attempt_at=delivery.next_attempt_at,
        )


class DeliveryPageBody(WireModel):
    deliveries: list[WebhookDeliveryBody]
    next_cursor: str

    @classmethod
    def of(cls, page: DeliveryPage) -> Self:
        return cls.model_construct(
            deliveries=[WebhookDeliveryBody.of(delivery) for delivery in page.deliveries],
            next_cursor=page.next_cursor,
        )
