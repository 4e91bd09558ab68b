"""``SqlStore``'s webhook calls (CONTRACT.md 13.1, 13.3): subscriptions and their
deliveries, each one call into subscriptions.py."""

from __future__ import annotations

from collections.abc import Sequence

from app.storage.operation import Context
from app.storage.webhooks import subscriptions
from app.storage.webhooks.delivery_queue import DeliveryQueue
from runtime_store_client import CreatedWebhook, DeliveryPage, Webhook, WebhookDelivery


class WebhookMethods:
    """The store's webhook admin calls (``WebhookAdmin``, a part of ``SqlStore``)."""

    _ctx: Context
    #: The webhook dispatcher's side of the outbox (13.3).
    webhook_queue: DeliveryQueue

    def create_webhook(self, url: str, events: Sequence[str]) -> CreatedWebhook:
        """A new subscription; its secret is shown in this answer only (13.1)."""
        return subscriptions.create_webhook(self._ctx, self.webhook_queue.config, url, events)

    def list_webhooks(self) -> list[Webhook]:
        """Every subscription, without secrets (13.1)."""
        return subscriptions.list_webhooks(self._ctx)

    def delete_webhook(self, webhook_id: str) -> None:
        """Delete a subscription and its deliveries (13.1)."""
        subscriptions.delete_webhook(self._ctx, webhook_id)

    def list_webhook_deliveries(
        self,
        webhook_id: str,
        statuses: Sequence[str] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> DeliveryPage:
        """A subscription's deliveries in commit order, keyset-paged (13.3)."""
        return subscriptions.list_deliveries(self._ctx, webhook_id, statuses, cursor, limit)

    def retry_webhook_delivery(self, webhook_id: str, event_id: str) -> WebhookDelivery:
        """Queue a failed delivery again (13.3)."""
        return subscriptions.retry_delivery(self._ctx, webhook_id, event_id)
