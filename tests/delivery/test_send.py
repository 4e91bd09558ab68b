"""One attempt (CONTRACT.md 13.1, 13.3): the address check at the moment of sending (a
host that resolves to loopback when a delivery goes out is not sent to unless allowed;
the connection goes to the address that was checked), and the attempt's total deadline:
the whole answer within it or the attempt failed, however the receiver drips it."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from app.domain import webhooks as rules
from app.storage.webhooks.delivery_claims import Claimed
from app.storage.webhooks.subscriptions import WebhookConfig
from app.webhook_delivery.dispatcher import LEASE_MARGIN_SECONDS, LEASE_SECONDS, attempt_seconds
from app.webhook_delivery.sending import send
from tests.delivery.receiver import Received, Receiver, receiving

LOOPBACK = WebhookConfig(allowed_hosts=("127.0.0.1",))


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


def _send(config: WebhookConfig, claimed: Claimed, seconds: float = 10.0) -> int | None:
    async def attempt() -> int | None:
        async with httpx.AsyncClient(trust_env=False) as client:
            return await send(config, claimed, client, seconds)

    return asyncio.run(attempt())


def _ended(receiver: Receiver) -> list[Received]:
    """What the receiver got, once each exchange has ended."""
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        with receiver.lock:
            if all(item.ended_at is not None for item in receiver.received):
                return list(receiver.received)
        time.sleep(0.02)
    raise AssertionError("an exchange did not end")


def test_a_host_resolving_to_loopback_at_send_time_is_not_sent_to() -> None:
    with receiving() as receiver:
        # The name was public when subscribed; now it resolves to the receiver's loopback.
        config = WebhookConfig(resolve=lambda _host: ["127.0.0.1"])
        claimed = _claimed(f"http://hooks.example.test:{receiver.port}/hook")
        assert _send(config, claimed) is None
        assert receiver.received == []


def test_an_allowed_host_is_sent_to_the_checked_address_with_its_own_host_header() -> None:
    with receiving(default=204) as receiver:
        config = WebhookConfig(
            allowed_hosts=("hooks.example.test",), resolve=lambda _host: ["127.0.0.1"]
        )
        claimed = _claimed(f"http://hooks.example.test:{receiver.port}/hook")
        assert _send(config, claimed) == 204
        (item,) = receiver.received
        assert item.headers["host"] == f"hooks.example.test:{receiver.port}"
        assert item.headers["webhook-id"] == "evt_1"
        assert item.headers["webhook-signature"].startswith("v1,")


def test_a_redirect_is_not_followed() -> None:
    with receiving(default=307) as receiver:
        assert _send(LOOPBACK, _claimed(receiver.url)) == 307
        assert len(receiver.received) == 1


@pytest.mark.parametrize("drip", ["body", "head"])
def test_an_answer_dripped_past_the_deadline_is_cut_off_and_is_no_answer(drip: str) -> None:
    """A 200 whose body (or whose status line and headers) trickles in one byte a second
    never completes within the deadline: the attempt ends at the deadline, failed."""
    with receiving(drip=drip, drip_bytes=30, drip_seconds=0.25) as receiver:
        started = time.monotonic()
        assert _send(LOOPBACK, _claimed(receiver.url), seconds=1.5) is None
        elapsed = time.monotonic() - started
        assert 1.4 < elapsed < 2.5, elapsed  # its 1.5 s deadline; 30 drips would take 7.5 s
        (item,) = _ended(receiver)
        assert item.cut, "the sender did not close the connection"
        assert item.ended_at is not None
        assert item.ended_at - item.at < 2.0


def test_a_whole_answer_within_the_deadline_counts_however_it_arrives() -> None:
    with receiving(drip="body", drip_bytes=4, drip_seconds=0.1) as receiver:
        assert _send(LOOPBACK, _claimed(receiver.url), seconds=3) == 200
        (item,) = _ended(receiver)
        assert not item.cut


def test_an_attempt_without_time_left_is_not_sent() -> None:
    with receiving() as receiver:
        assert _send(LOOPBACK, _claimed(receiver.url), seconds=0) is None
        assert receiver.received == []


def test_an_attempt_takes_at_most_ten_seconds_and_ends_well_inside_its_lease() -> None:
    assert rules.ATTEMPT_TIMEOUT_SECONDS == 10.0  # 13.3: a 2xx within 10 s
    assert LEASE_SECONDS >= rules.ATTEMPT_TIMEOUT_SECONDS + LEASE_MARGIN_SECONDS
    assert LEASE_MARGIN_SECONDS >= 2.0
    leased_at = 1000.0
    # Started at once: the contract's 10 s.
    assert attempt_seconds(leased_at + 0.01, leased_at) == 10.0
    # Started late (a slow claim): cut so that it still ends the margin before the lease.
    for late in (1.5, 3.0, 8.0, 12.0):
        now = leased_at + late
        assert now + attempt_seconds(now, leased_at) <= (
            leased_at + LEASE_SECONDS - LEASE_MARGIN_SECONDS
        )


def _resolving_to(address: str) -> rules.Resolve:
    return lambda _host: [address]


def test_a_host_resolving_to_an_address_embedding_an_internal_ipv4_is_not_sent_to() -> None:
    """NAT64, 6to4 and IPv4-compatible addresses that embed an internal IPv4 address are
    refused at send time as the address itself would be; one embedding a public one is
    sent to (the receiver listens on loopback, allowed here by name)."""
    with receiving(default=204) as receiver:
        url = f"http://hooks.example.test:{receiver.port}/hook"
        for address in ("64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::127.0.0.1"):
            config = WebhookConfig(resolve=_resolving_to(address))
            assert _send(config, _claimed(url)) is None
        assert receiver.received == []
        allowed = WebhookConfig(
            allowed_hosts=("hooks.example.test",), resolve=lambda _host: ["127.0.0.1"]
        )
        assert _send(allowed, _claimed(url)) == 204
        assert len(receiver.received) == 1
