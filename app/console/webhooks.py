"""The webhooks page (admin): every subscription with its failed and pending deliveries,
a Retry for each failed one and a Delete (confirmed) for each subscription.

The deliveries API lists in commit order, oldest first; what an operator acts on is what
failed and what is still in flight, so the page asks for those two statuses (a page each).
Retry and Delete are the JSON API's own calls, made by ``console-actions.js``.
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runtime_store_client import DeliveryStatus

from .api import Api, path
from .rendering import fragment, page

router = APIRouter()

#: Deliveries shown per subscription and status.
DELIVERIES_SHOWN: Final = 50


@router.get("/webhooks")
async def webhooks_page() -> HTMLResponse:
    """Webhook subscriptions and their deliveries (admin)."""
    return page("webhooks.html", "Webhooks", "webhooks", data="/console/fragments/webhooks")


@router.get("/fragments/webhooks")
async def webhooks_fragment(request: Request) -> HTMLResponse:
    """``GET /v1/webhooks`` and, per subscription, its failed and pending deliveries."""

    async def load(api: Api) -> dict[str, Any]:
        hooks = []
        for hook in await api.store.list_webhooks():
            failed = await api.store.list_webhook_deliveries(
                hook.webhook_id, [DeliveryStatus.FAILED], limit=DELIVERIES_SHOWN
            )
            pending = await api.store.list_webhook_deliveries(
                hook.webhook_id, [DeliveryStatus.PENDING], limit=DELIVERIES_SHOWN
            )
            hooks.append(
                {
                    "hook": hook,
                    "api": path("v1", "webhooks", hook.webhook_id),
                    "failed": [
                        (
                            delivery,
                            path(
                                "v1",
                                "webhooks",
                                hook.webhook_id,
                                "deliveries",
                                delivery.event_id,
                                "retry",
                            ),
                        )
                        for delivery in failed.deliveries
                    ],
                    "more_failed": bool(failed.next_cursor),
                    "pending": [(delivery, "") for delivery in pending.deliveries],
                    "more_pending": bool(pending.next_cursor),
                }
            )
        return {"hooks": hooks, "shown": DELIVERIES_SHOWN}

    return await fragment(request, "fragments/webhooks.html", load)
