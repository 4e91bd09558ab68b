"""The webhook dispatcher's side of the outbox (CONTRACT.md 13.3): claiming due deliveries
under a lease, recording each attempt's outcome, the oldest pending age, pruning."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from app.storage.operation import Context
from app.storage.webhooks import delivery_claims, settled_pruning
from app.storage.webhooks.delivery_claims import Claimed
from app.storage.webhooks.settled_pruning import Pruned
from app.storage.webhooks.subscriptions import WebhookConfig
from runtime_store_client import DeliveryStatus


class DeliveryQueue:
    """The deliveries of one store, as its dispatcher works them off."""

    def __init__(self, ctx: Context, config: WebhookConfig, clock: Callable[[], int]) -> None:
        self._ctx = ctx
        self._clock = clock
        #: What subscriptions and deliveries may reach (the allow list, the resolver).
        self.config = config

    def claim(
        self,
        limit: int,
        lease_ms: int,
        *,
        per_webhook: int | None = None,
        busy: Mapping[str, int] | None = None,
    ) -> list[Claimed]:
        """The next due deliveries, leased to the caller; with ``per_webhook``, at most
        that many in flight per subscription, counting the caller's ``busy`` ones."""
        return delivery_claims.claim(self._ctx, limit, lease_ms, per_webhook=per_webhook, busy=busy)

    def record_attempt(
        self, claimed: Claimed, status_code: int | None, retry_seconds: float
    ) -> DeliveryStatus | None:
        """One attempt's outcome (``None``: the lease was lost, another attempt decides)."""
        return delivery_claims.record_attempt(self._ctx, claimed, status_code, retry_seconds)

    def oldest_pending_ms(self) -> int | None:
        """When the oldest pending delivery's window began (the metric's age)."""
        return delivery_claims.oldest_pending_ms(self._ctx)

    def prune(
        self,
        older_than_ms: int,
        should_stop: Callable[[], bool] = lambda: False,
        *,
        batch: int = settled_pruning.BATCH,
    ) -> Pruned | None:
        """Delete deliveries delivered or failed more than ``older_than_ms`` ago, and their
        events once unused; never a pending one (``None``: another process prunes)."""
        cutoff_ms = self._clock() - older_than_ms
        return settled_pruning.prune(self._ctx, cutoff_ms, batch=batch, should_stop=should_stop)
