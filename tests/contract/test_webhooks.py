"""Webhook subscriptions (CONTRACT.md 13.1) on every backend: ``SqlStore`` and
``HttpStore`` alike."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from runtime_store_client import (
    CreatedWebhook,
    DeliveryStatus,
    InvalidArgumentError,
    WebhookEventType,
    WebhookNotFoundError,
)
from tests.contract.builders import T0, Backend, new_session

#: A public literal: accepted without resolving a name (no delivery is made in these tests).
URL = "https://93.184.216.34/runtime-store"


def _hooks(store: Backend) -> Any:
    return store  # the webhook methods are on SqlStore and both HTTP clients


def test_a_subscription_answers_its_secret_once_and_lists_without_it(store: Backend) -> None:
    hooks = _hooks(store)
    created = hooks.create_webhook(URL, ["run.finished", "session.purged"])
    assert isinstance(created, CreatedWebhook)
    assert created.secret.startswith("whsec_")
    assert len(base64.b64decode(created.secret.removeprefix("whsec_"))) >= 24
    assert created.events == (WebhookEventType.RUN_FINISHED, WebhookEventType.SESSION_PURGED)
    listed = {hook.webhook_id: hook for hook in hooks.list_webhooks()}
    assert created.webhook_id in listed
    assert not hasattr(listed[created.webhook_id], "secret")
    assert listed[created.webhook_id].url == URL


def test_an_unknown_event_type_is_invalid(store: Backend) -> None:
    with pytest.raises(InvalidArgumentError):
        _hooks(store).create_webhook(URL, ["run.started"])


@pytest.mark.parametrize(
    "url", ["ftp://93.184.216.34/", "http://127.0.0.1/hook", "http://[::1]/", "http://10.0.0.1/"]
)
def test_a_url_that_is_not_public_http_is_invalid(store: Backend, url: str) -> None:
    with pytest.raises(InvalidArgumentError):
        _hooks(store).create_webhook(url, ["run.finished"])


@pytest.mark.parametrize(
    "url",
    [
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
        "http://[2002:7f00:1::1]/",  # 6to4 of 127.0.0.1
        "http://[::127.0.0.1]/",  # IPv4-compatible
    ],
)
def test_a_url_embedding_an_internal_ipv4_address_is_invalid(store: Backend, url: str) -> None:
    with pytest.raises(InvalidArgumentError):
        _hooks(store).create_webhook(url, ["run.finished"])


def test_deleting_a_subscription_removes_it_and_an_unknown_one_is_not_found(
    store: Backend,
) -> None:
    hooks = _hooks(store)
    created = hooks.create_webhook(URL, ["session.ended"])
    hooks.delete_webhook(created.webhook_id)
    assert created.webhook_id not in {hook.webhook_id for hook in hooks.list_webhooks()}
    with pytest.raises(WebhookNotFoundError) as raised:
        hooks.delete_webhook(created.webhook_id)
    assert raised.value.code == "webhook_not_found"
    assert raised.value.status == 404
    with pytest.raises(WebhookNotFoundError):
        hooks.list_webhook_deliveries(created.webhook_id)


def test_deliveries_page_by_cursor_bound_to_its_list(store: Backend) -> None:
    hooks = _hooks(store)
    created = hooks.create_webhook(URL, ["session.ended"])
    page = hooks.list_webhook_deliveries(created.webhook_id, [DeliveryStatus.PENDING.value])
    assert page.deliveries == []
    assert page.next_cursor == ""
    with pytest.raises(InvalidArgumentError):
        hooks.list_webhook_deliveries(created.webhook_id, cursor="forged")
    with pytest.raises(InvalidArgumentError):
        hooks.list_webhook_deliveries(created.webhook_id, ["lost"])


def test_each_first_end_of_a_session_is_one_delivery_in_commit_order(store: Backend) -> None:
    hooks = _hooks(store)
    created = hooks.create_webhook(URL, ["session.ended"])
    ended = []
    for _ in range(3):
        session = new_session(store).id
        store.end_session(session, T0)
        store.end_session(session, T0)  # already ended: no second event
        ended.append(session)
    first = hooks.list_webhook_deliveries(created.webhook_id, limit=2)
    assert len(first.deliveries) == 2
    assert first.next_cursor
    second = hooks.list_webhook_deliveries(created.webhook_id, cursor=first.next_cursor, limit=2)
    assert len(second.deliveries) == 1
    assert second.next_cursor == ""
    deliveries = [*first.deliveries, *second.deliveries]
    assert [d.type for d in deliveries] == [WebhookEventType.SESSION_ENDED] * 3
    assert len({d.event_id for d in deliveries}) == 3
    with pytest.raises(InvalidArgumentError):  # a cursor is bound to its filters
        hooks.list_webhook_deliveries(created.webhook_id, ["failed"], cursor=first.next_cursor)
