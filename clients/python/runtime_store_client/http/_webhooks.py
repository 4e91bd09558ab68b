"""The call table of webhook subscriptions (CONTRACT.md 13), and waiting for a run, shared
by ``HttpStore`` and ``AsyncHttpStore`` (as ``_operations``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx

from .._generated.api.runs import wait_for_run
from .._generated.api.webhooks import create_webhook as create_api
from .._generated.api.webhooks import delete_webhook as delete_api
from .._generated.api.webhooks import list_webhook_deliveries as deliveries_api
from .._generated.api.webhooks import list_webhooks as webhooks_api
from .._generated.api.webhooks import retry_webhook_delivery as retry_api
from .._generated.client import AuthenticatedClient, Client
from .._generated.models import CreateWebhookRequest, RunMetaBody
from .._generated.models import DeliveryStatus as WireDeliveryStatus
from .._generated.models import WaitUntil as WireWaitUntil
from .._generated.models import WebhookEventType as WireEventType
from ..errors import InvalidArgumentError
from ..times import to_utc
from ..types import (
    CreatedWebhook,
    DeliveryPage,
    DeliveryStatus,
    RunMeta,
    WaitUntil,
    Webhook,
    WebhookDelivery,
    WebhookEventType,
)
from . import _convert as c
from . import _requests as r
from ._call import Call, none

#: The longest wait one request may ask for (the server's bound).
MAX_WAIT_SECONDS: Final = 60.0
#: Seconds a wait request's connection may take beyond the wait it asks for.
_WAIT_MARGIN_SECONDS: Final = 10.0


def _event_type(value: str) -> WireEventType:
    try:
        return WireEventType(WebhookEventType(value).value)
    except ValueError:
        raise InvalidArgumentError(f"unknown event type {value!r}") from None


def _webhook(body: Any) -> Webhook:
    return Webhook(
        webhook_id=body.webhook_id,
        url=body.url,
        events=tuple(WebhookEventType(event.value) for event in body.events),
        created_at=to_utc(body.created_at),
    )


def _created(body: Any) -> CreatedWebhook:
    return CreatedWebhook(
        webhook_id=body.webhook_id,
        url=body.url,
        events=tuple(WebhookEventType(event.value) for event in body.events),
        created_at=to_utc(body.created_at),
        secret=body.secret,
    )


def _delivery(body: Any) -> WebhookDelivery:
    return WebhookDelivery(
        event_id=body.event_id,
        type=WebhookEventType(body.type_.value),
        status=DeliveryStatus(body.status.value),
        attempts=body.attempts,
        last_status_code=body.last_status_code,
        next_attempt_at=None if body.next_attempt_at is None else to_utc(body.next_attempt_at),
    )


def create_webhook(url: str, events: Sequence[str]) -> Call[CreatedWebhook]:
    """Subscribe ``url`` to event types (13.1); the answer's ``secret`` is shown once."""
    if isinstance(events, str) or not isinstance(events, Sequence):
        raise InvalidArgumentError("events must be a list of event types")
    if not isinstance(url, str):
        raise InvalidArgumentError("url must be a string")
    body = CreateWebhookRequest(url=url, events=[_event_type(event) for event in events])
    return Call(create_api, {"body": body}, _created)


def list_webhooks() -> Call[list[Webhook]]:
    """Every subscription, without secrets."""
    return Call(webhooks_api, {}, lambda body: [_webhook(item) for item in body.webhooks])


def delete_webhook(webhook_id: str) -> Call[None]:
    """Delete a subscription (``WebhookNotFoundError`` if unknown)."""
    return Call(delete_api, {"webhook_id": r.path_id(webhook_id, "webhook_id")}, none)


def list_webhook_deliveries(
    webhook_id: str, statuses: Sequence[str] = (), cursor: str = "", limit: int = 100
) -> Call[DeliveryPage]:
    """A page of a subscription's deliveries, in commit order (13.3)."""
    try:
        wanted = [WireDeliveryStatus(DeliveryStatus(status).value) for status in statuses]
    except ValueError:
        raise InvalidArgumentError(f"unknown delivery status in {list(statuses)!r}") from None
    return Call(
        deliveries_api,
        {
            "webhook_id": r.path_id(webhook_id, "webhook_id"),
            "status": wanted,
            **r.page_args(cursor, limit),
        },
        lambda body: DeliveryPage(
            deliveries=[_delivery(item) for item in body.deliveries],
            next_cursor=body.next_cursor,
        ),
    )


def retry_webhook_delivery(webhook_id: str, event_id: str) -> Call[WebhookDelivery]:
    """Queue a failed delivery again (13.3)."""
    return Call(
        retry_api,
        {
            "webhook_id": r.path_id(webhook_id, "webhook_id"),
            "event_id": r.path_id(event_id, "event_id"),
        },
        _delivery,
    )


@dataclass(frozen=True)
class WaitCall(Call[tuple[RunMeta, bool]]):
    """One wait request: its own HTTP timeout (the wait plus a margin, beyond the
    client's default), and whether the answer came at the timeout (``Run-Wait``)."""

    http_timeout: float = MAX_WAIT_SECONDS + _WAIT_MARGIN_SECONDS

    def _request(self) -> dict[str, Any]:
        return {**self.endpoint._get_kwargs(**self.kwargs), "timeout": self.http_timeout}

    def run(self, client: Client | AuthenticatedClient) -> tuple[RunMeta, bool]:
        return _waited(client.get_httpx_client().request(**self._request()))

    async def run_async(self, client: Client | AuthenticatedClient) -> tuple[RunMeta, bool]:
        return _waited(await client.get_async_httpx_client().request(**self._request()))


def _waited(response: httpx.Response) -> tuple[RunMeta, bool]:
    # Problems were raised by the client's response hook.
    meta = c.run_meta(RunMetaBody.from_dict(response.json()))
    return meta, response.headers.get("Run-Wait") == "timeout"


def wait(run_id: str, until: WaitUntil | str, seconds: float) -> WaitCall:
    """One request waiting at most ``seconds`` (bounded by the server's 60)."""
    try:
        wanted = WaitUntil(until)
    except ValueError:
        raise InvalidArgumentError(f"until must be finished or stopped, not {until!r}") from None
    asked = max(0.0, min(MAX_WAIT_SECONDS, seconds))
    return WaitCall(
        wait_for_run,
        {
            "run_id": r.path_id(run_id, "run_id"),
            "until": WireWaitUntil(wanted.value),
            "timeout": round(asked, 3),
        },
        lambda body: (body, False),
        http_timeout=asked + _WAIT_MARGIN_SECONDS,
    )


def check_wait(until: WaitUntil | str, timeout: float) -> None:
    """Arguments of ``wait_for_run`` that cannot be sent."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        raise InvalidArgumentError("timeout must be a number of seconds, at least 0")
    try:
        WaitUntil(until)
    except ValueError:
        raise InvalidArgumentError(f"until must be finished or stopped, not {until!r}") from None
