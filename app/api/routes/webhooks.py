"""Webhook subscriptions and their deliveries (CONTRACT.md 13.1, 13.3): admin only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi import status as http_status

from app.api.auth import ADMIN
from app.api.deps import CursorQuery, ExactSegment, LimitQuery, services
from app.api.examples import EVENT_ID_EXAMPLE, WEBHOOK_ID_EXAMPLE
from app.api.problem_docs import problems
from app.api.render import respond
from app.api.schemas.webhooks import (
    CreatedWebhookBody,
    CreateWebhookRequest,
    DeliveryPageBody,
    WebhookBody,
    WebhookDeliveryBody,
    WebhookListBody,
)
from runtime_store_client import DeliveryStatus, InvalidArgumentError, WebhookNotFoundError

router = APIRouter(prefix="/v1/webhooks")

WebhookIdPath = Annotated[
    str,
    Path(description="The subscription's ID.", examples=[WEBHOOK_ID_EXAMPLE]),
    ExactSegment,
]
EventIdPath = Annotated[
    str,
    Path(description="The event's ID.", examples=[EVENT_ID_EXAMPLE]),
    ExactSegment,
]


@router.post(
    "",
    tags=["webhooks"],
    dependencies=[ADMIN],
    response_model=CreatedWebhookBody,
    status_code=http_status.HTTP_201_CREATED,
    operation_id="create-webhook",
    summary="Subscribe a URL to events",
    responses=problems(InvalidArgumentError),
)
async def create_webhook(body: CreateWebhookRequest, request: Request) -> Response:
    """A new subscription. The answer holds its signing `secret`, shown this once; every
    delivery is signed with it (Standard Webhooks headers)."""
    store, calls = services(request)
    created = await calls(store.create_webhook, body.url, [event.value for event in body.events])
    response = respond(CreatedWebhookBody.of(created))
    response.status_code = http_status.HTTP_201_CREATED
    return response


@router.get(
    "",
    tags=["webhooks"],
    dependencies=[ADMIN],
    response_model=WebhookListBody,
    operation_id="list-webhooks",
    summary="List webhook subscriptions",
    responses=problems(),
)
async def list_webhooks(request: Request) -> Response:
    """Every subscription, oldest first; secrets are never shown."""
    store, calls = services(request)
    found = await calls(store.list_webhooks)
    return respond(WebhookListBody.model_construct(webhooks=[WebhookBody.of(w) for w in found]))


@router.delete(
    "/{webhook_id}",
    tags=["webhooks"],
    dependencies=[ADMIN],
    operation_id="delete-webhook",
    summary="Delete a webhook subscription",
    status_code=http_status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses=problems(WebhookNotFoundError),
)
async def delete_webhook(webhook_id: WebhookIdPath, request: Request) -> None:
    """Delete the subscription with its deliveries: nothing more is sent to it."""
    store, calls = services(request)
    await calls(store.delete_webhook, webhook_id)


@router.get(
    "/{webhook_id}/deliveries",
    tags=["webhooks"],
    dependencies=[ADMIN],
    response_model=DeliveryPageBody,
    operation_id="list-webhook-deliveries",
    summary="List a subscription's deliveries",
    responses=problems(WebhookNotFoundError, InvalidArgumentError),
)
async def list_webhook_deliveries(
    webhook_id: WebhookIdPath,
    request: Request,
    status: Annotated[
        list[DeliveryStatus], Query(description="Only deliveries in these statuses (repeatable).")
    ] = [],  # noqa: B006 - FastAPI copies query defaults
    cursor: CursorQuery = "",
    limit: LimitQuery = 100,
) -> Response:
    """The subscription's deliveries in the order their events committed."""
    store, calls = services(request)
    page = await calls(
        store.list_webhook_deliveries, webhook_id, [s.value for s in status], cursor, limit
    )
    return respond(DeliveryPageBody.of(page))


@router.post(
    "/{webhook_id}/deliveries/{event_id}/retry",
    tags=["webhooks"],
    dependencies=[ADMIN],
    response_model=WebhookDeliveryBody,
    operation_id="retry-webhook-delivery",
    summary="Queue a failed delivery again",
    responses=problems(WebhookNotFoundError),
)
async def retry_webhook_delivery(
    webhook_id: WebhookIdPath, event_id: EventIdPath, request: Request
) -> Response:
    """A failed delivery becomes pending again with a new retry window; a pending or
    delivered one is answered as it is."""
    store, calls = services(request)
    return respond(
        WebhookDeliveryBody.of(await calls(store.retry_webhook_delivery, webhook_id, event_id))
    )
