"""The address check at the moment of sending (CONTRACT.md 13.1, 13.3): a host that
resolves to loopback when a delivery goes out is not sent to unless allowed; the
connection goes to the address that was checked."""

from __future__ import annotations

import functools

import httpx

from app.domain import webhooks as rules
from app.storage.webhooks.subscriptions import Claimed, WebhookConfig
from app.webhook_dispatcher import send
from tests.delivery.receiver import receiving


def _claimed(url: str) -> Claimed:
    return Claimed(
        seq=1,
        webhook_id="wh_1",
        event_id="evt_1",
        url=url,
        secret=rules.new_secret(),
        body='{"event_id":"evt_1"}',
        attempts=0,
        window_start_ms=0,
        lease_until_ms=0,
    )


def test_a_host_resolving_to_loopback_at_send_time_is_not_sent_to() -> None:
    with receiving() as receiver, httpx.Client(trust_env=False) as client:
        # The name was public when subscribed; now it resolves to the receiver's loopback.
        config = WebhookConfig(resolve=lambda _host: ["127.0.0.1"])
        claimed = _claimed(f"http://hooks.example.test:{receiver.port}/hook")
        assert send(config, claimed, client) is None
        assert receiver.received == []


def test_an_allowed_host_is_sent_to_the_checked_address_with_its_own_host_header() -> None:
    with receiving(default=204) as receiver, httpx.Client(trust_env=False) as client:
        config = WebhookConfig(
            allowed_hosts=("hooks.example.test",), resolve=lambda _host: ["127.0.0.1"]
        )
        claimed = _claimed(f"http://hooks.example.test:{receiver.port}/hook")
        assert send(config, claimed, client) == 204
        (item,) = receiver.received
        assert item.headers["host"] == f"hooks.example.test:{receiver.port}"
        assert item.headers["webhook-id"] == "evt_1"
        assert item.headers["webhook-signature"].startswith("v1,")


def test_a_redirect_is_not_followed() -> None:
    with receiving(default=307) as receiver, httpx.Client(trust_env=False) as client:
        config = WebhookConfig(allowed_hosts=("127.0.0.1",))
        assert send(config, _claimed(receiver.url), client) == 307
        assert len(receiver.received) == 1


def _always(address: str, _host: str) -> list[str]:
    return [address]


def test_a_host_resolving_to_an_address_embedding_an_internal_ipv4_is_not_connected_to() -> None:
    # No NAT64 gateway here, so a real connection would fail either way: the transport
    # records whether one was even attempted.
    attempted: list[httpx.URL] = []

    def transport(request: httpx.Request) -> httpx.Response:
        attempted.append(request.url)
        return httpx.Response(204)

    with httpx.Client(transport=httpx.MockTransport(transport)) as client:
        for address in ("64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::127.0.0.1"):
            config = WebhookConfig(resolve=functools.partial(_always, address))
            assert send(config, _claimed("http://hooks.example.test/hook"), client) is None
        assert attempted == []
        public = WebhookConfig(resolve=lambda _host: ["64:ff9b::808:808"])
        assert send(public, _claimed("http://hooks.example.test/hook"), client) == 204
        assert [url.host for url in attempted] == ["64:ff9b::808:808"]
