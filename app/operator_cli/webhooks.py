"""``runtime-store webhooks create|list|delete|deliveries|retry`` (CONTRACT.md 13)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from runtime_store_client import (
        Webhook,
        WebhookDelivery,
    )
from .common import (
    DEFAULT_URL,
    AsJson,
    Cursor,
    Everything,
    Limit,
    Token,
    Url,
    _pages,
    _print,
    _service,
    _time,
    webhooks_cli,
)


def webhook_json(webhook: Webhook) -> dict[str, Any]:
    return {
        "webhook_id": webhook.webhook_id,
        "url": webhook.url,
        "events": [event.value for event in webhook.events],
        "created_at": _time(webhook.created_at),
    }


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "event_id": delivery.event_id,
        "type": delivery.type.value,
        "status": delivery.status.value,
        "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code,
        "next_attempt_at": delivery.next_attempt_at and _time(delivery.next_attempt_at),
    }


@webhooks_cli.command("create")
def webhooks_create(
    webhook_url: Annotated[str, typer.Argument(metavar="URL", help="Where events are POSTed.")],
    event: Annotated[
        list[str],
        typer.Option(
            "--event",
            help="run.finished, run.suspended, session.ended or session.purged (repeatable).",
        ),
    ],
    url: Url = DEFAULT_URL,
    token: Token = None,
) -> None:
    """Subscribe a URL to events; prints the subscription with its secret (shown once)."""
    with _service(url, token) as store:
        created = store.create_webhook(webhook_url, event)
    sys.stdout.write(
        json.dumps({**webhook_json(created), "secret": created.secret}, ensure_ascii=False) + "\n"
    )


@webhooks_cli.command("list")
def webhooks_list(url: Url = DEFAULT_URL, token: Token = None, as_json: AsJson = False) -> None:
    """Every subscription (secrets are never shown)."""
    with _service(url, token) as store:
        found = store.list_webhooks()
    _print(
        iter([found]),
        as_json,
        webhook_json,
        ["WEBHOOK", "URL", "EVENTS", "CREATED"],
        lambda hook: [
            hook.webhook_id,
            hook.url,
            ",".join(event.value for event in hook.events),
            _time(hook.created_at),
        ],
    )


@webhooks_cli.command("delete")
def webhooks_delete(webhook_id: str, url: Url = DEFAULT_URL, token: Token = None) -> None:
    """Delete a subscription and its deliveries."""
    with _service(url, token) as store:
        store.delete_webhook(webhook_id)
    typer.echo(f"webhook {webhook_id} deleted")


@webhooks_cli.command("deliveries")
def webhooks_deliveries(
    webhook_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    status: Annotated[
        list[str], typer.Option("--status", help="pending, delivered or failed (repeatable).")
    ] = [],  # noqa: B006 - typer copies defaults
    limit: Limit = 100,
    cursor: Cursor = "",
    everything: Everything = False,
    as_json: AsJson = False,
) -> None:
    """A subscription's deliveries, in the order their events committed."""
    with _service(url, token) as store:

        def fetch(after: str) -> tuple[list[WebhookDelivery], str]:
            page = store.list_webhook_deliveries(webhook_id, status, after, limit)
            return page.deliveries, page.next_cursor

        _print(
            _pages(fetch, cursor, everything),
            as_json,
            delivery_json,
            ["EVENT", "TYPE", "STATUS", "ATTEMPTS", "LAST CODE", "NEXT ATTEMPT"],
            lambda d: [
                d.event_id,
                d.type.value,
                d.status.value,
                str(d.attempts),
                "" if d.last_status_code is None else str(d.last_status_code),
                _time(d.next_attempt_at),
            ],
        )


@webhooks_cli.command("retry")
def webhooks_retry(
    webhook_id: str, event_id: str, url: Url = DEFAULT_URL, token: Token = None
) -> None:
    """Queue a failed delivery again."""
    with _service(url, token) as store:
        delivery = store.retry_webhook_delivery(webhook_id, event_id)
    sys.stdout.write(json.dumps(delivery_json(delivery), ensure_ascii=False) + "\n")
