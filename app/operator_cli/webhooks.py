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
    EXIT_USAGE,
    URL_ENV,
    AsJson,
    Cursor,
    Everything,
    Limit,
    Token,
    Url,
    _fail,
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


_EXAMPLE = "runtime-store webhooks create https://hooks.example/rs --event run.finished"


@webhooks_cli.command("create")
def webhooks_create(
    ctx: typer.Context,
    webhook_url: Annotated[
        str | None,
        typer.Argument(
            metavar="URL",
            help="Where events are POSTed (the argument; --url is the service's).",
            show_default=False,
        ),
    ] = None,
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help="run.finished, run.suspended, session.ended or session.purged (repeatable).",
            show_default=False,
        ),
    ] = None,
    url: Url = DEFAULT_URL,
    token: Token = None,
) -> None:
    """Subscribe a URL to events; prints the subscription with its secret (shown once).

    The webhook's URL is the argument; --url (RUNTIME_STORE_URL) names the service, as for
    every operator command."""
    if webhook_url is None:
        source = ctx.get_parameter_source("url")
        if source is not None and source.name == "COMMANDLINE":
            events = " ".join(f"--event {name}" for name in event or ["EVENT"])
            raise _fail(
                f"--url names the service, not the webhook: give the webhook's URL as the "
                f"argument: runtime-store webhooks create {url} {events} (and the service's "
                f"as --url or {URL_ENV} if it is not {DEFAULT_URL})",
                EXIT_USAGE,
            )
        raise _fail(f"give the webhook's URL as the argument: {_EXAMPLE}", EXIT_USAGE)
    from runtime_store_client import WebhookEventType

    known = [kind.value for kind in WebhookEventType]
    unknown = [name for name in event or () if name not in known]
    if unknown or not event:
        said = f"{unknown[0]!r} is not a webhook event" if unknown else "name at least one"
        raise _fail(f"--event: {said}; the events are {', '.join(known)}", EXIT_USAGE)
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
        nothing="no webhooks",
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
            nothing="no deliveries",
        )


@webhooks_cli.command("retry")
def webhooks_retry(
    webhook_id: str, event_id: str, url: Url = DEFAULT_URL, token: Token = None
) -> None:
    """Queue a failed delivery again."""
    with _service(url, token) as store:
        delivery = store.retry_webhook_delivery(webhook_id, event_id)
    sys.stdout.write(json.dumps(delivery_json(delivery), ensure_ascii=False) + "\n")
