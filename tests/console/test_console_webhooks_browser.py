"""The console's webhooks page in chromium (issue 33): an administrator sees each
subscription with its failed deliveries, queues a failed one again, and deletes the
subscription after confirming; a reader is offered none of it.

Its own server: the webhook dispatcher on, a 7 s retry window, and a receiver on loopback
that always answers 500, so a delivery fails for real."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from app.domain.tokens import Role
from app.storage import create_engine, upgrade_schema
from app.storage.access.tokens import Tokens
from runtime_store_client import DeliveryStatus, HttpStore, WebhookDelivery, WebhookNotFoundError
from tests.conftest import LiveServer, start_server, stop_server
from tests.console.conftest import TOKEN_KEY, Tab, open_tab
from tests.console.test_console_browser import assert_stayed_home, text
from tests.contract.builders import T0
from tests.delivery.receiver import Receiver, receiving

ENV = {
    "RUNTIME_STORE_TOKEN_KEY": TOKEN_KEY,
    "RUNTIME_STORE_WEBHOOK_DISPATCH": "on",
    "RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "RUNTIME_STORE_WEBHOOK_RETRY_HOURS": "0.002",  # 7.2 s, then failed
}


@dataclass(frozen=True)
class Hooked:
    server: LiveServer
    admin: str
    reader: str
    webhook_id: str
    event_id: str
    receiver: Receiver


@pytest.fixture(scope="module")
def hooked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooked]:
    directory = tmp_path_factory.mktemp("console-webhooks")
    url = f"sqlite:///{directory / 'webhooks.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        tokens = Tokens(engine, TOKEN_KEY)
        admin = tokens.create("hooks-admin", Role.ADMIN)
        reader = tokens.create("hooks-reader", Role.READER)
    finally:
        engine.dispose()
    server = start_server(url, directory / "server.log", env=ENV)
    try:
        with receiving(default=500) as receiver, HttpStore(server.base_url, token=admin) as store:
            hook = store.create_webhook(receiver.url, ["session.ended"])
            store.create_session("hooked", T0)
            store.end_session("hooked", T0)
            deadline = time.monotonic() + 30
            failed: list[WebhookDelivery] = []
            while not failed and time.monotonic() < deadline:
                time.sleep(0.5)
                failed = store.list_webhook_deliveries(hook.webhook_id, ["failed"]).deliveries
            assert failed, "the delivery did not fail within the window"
            yield Hooked(server, admin, reader, hook.webhook_id, failed[0].event_id, receiver)
    finally:
        stop_server(server)


@pytest.fixture
def hooks_tab(browser: Any, hooked: Hooked) -> Iterator[Tab]:
    opened = open_tab(browser, hooked.server.base_url)
    yield opened
    opened.page.context.close()


def test_an_admin_retries_a_failed_delivery_and_deletes_the_subscription_after_confirming(
    hooks_tab: Tab, hooked: Hooked
) -> None:
    tab, page = hooks_tab, hooks_tab.page
    tab.open("/console/sessions")
    tab.use_token(hooked.admin)
    page.click("nav >> text=Webhooks")
    tab.ready()
    listed = text(tab, "#webhooks")
    assert hooked.receiver.url in listed
    assert "session.ended" in listed
    row = page.locator(f"tr[data-event-id='{hooked.event_id}']").first
    assert "failed" in row.inner_text()
    tab.screenshot("webhooks-failed")

    row.locator("text=Retry").click()
    page.wait_for_selector(f"#notice:has-text('Delivery {hooked.event_id} queued again.')")
    with HttpStore(hooked.server.base_url, token=hooked.admin) as store:
        (delivery,) = store.list_webhook_deliveries(hooked.webhook_id).deliveries
    assert delivery.status in {DeliveryStatus.PENDING, DeliveryStatus.FAILED}
    assert delivery.attempts >= 1
    assert "Pending deliveries" in text(tab, "#webhooks")

    page.click("text=Delete subscription…")
    page.wait_for_selector("#webhook-delete-dialog[open]")
    assert hooked.receiver.url in text(tab, "#webhook-delete-dialog")
    tab.screenshot("webhooks-delete-confirmation")
    page.click("#webhook-delete-dialog >> text=Cancel")
    with HttpStore(hooked.server.base_url, token=hooked.admin) as store:
        assert [hook.webhook_id for hook in store.list_webhooks()] == [hooked.webhook_id]

    page.click("text=Delete subscription…")
    page.click("#webhook-delete-confirm")
    page.wait_for_selector("#webhooks:has-text('No webhook subscriptions.')")
    with HttpStore(hooked.server.base_url, token=hooked.admin) as store:
        assert store.list_webhooks() == []
        with pytest.raises(WebhookNotFoundError):
            store.list_webhook_deliveries(hooked.webhook_id)
    assert_stayed_home(tab, 401, 401)


def test_a_reader_is_offered_no_webhooks_and_the_api_refuses_the_page(
    hooks_tab: Tab, hooked: Hooked
) -> None:
    tab, page = hooks_tab, hooks_tab.page
    tab.open("/console/sessions")
    tab.use_token(hooked.reader)
    page.wait_for_selector("body[data-whoami=done]")
    assert not page.is_visible("nav >> text=Webhooks")
    tab.open("/console/webhooks")
    page.wait_for_selector("#webhooks [data-problem=permission_denied]")
    assert_stayed_home(tab, 401, 401, 403)
