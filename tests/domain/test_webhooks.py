"""Webhook rules as pure decisions (CONTRACT.md 13): the address check on literals (no
connection is opened), subscription input, signatures, the retry schedule."""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Sequence

import pytest
import standardwebhooks

from app.domain import webhooks as rules
from runtime_store_client import DeliveryStatus, InvalidArgumentError, WebhookEventType

REFUSED = [
    "127.0.0.1",
    "127.0.0.2",
    "::1",
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "fd00:ec2::254",  # cloud metadata over IPv6 (unique local)
    "fe80::1",
    "0.0.0.0",
    "::",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "100.64.0.1",  # shared address space
    "224.0.0.1",
]
PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"]


@pytest.mark.parametrize("address", REFUSED)
def test_internal_addresses_are_refused(address: str) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address: str) -> None:
    assert not rules.address_refused(address)


# An IPv6 address is allowed only if it and every IPv4 address it embeds are public: a
# transition gateway would forward the connection to the embedded address.


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::a9fe:a9fe", "64:ff9b::169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::a00:1"],
)
def test_nat64_addresses_embedding_an_internal_ipv4_address_are_refused(address: str) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", ["64:ff9b:1::a9fe:a9fe", "64:ff9b:1:808:808::"])
def test_local_use_nat64_addresses_are_refused_whatever_they_embed(address: str) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", ["2002:a9fe:a9fe::1", "2002:7f00:1::", "2002:a00:1::1"])
def test_6to4_addresses_embedding_an_internal_ipv4_address_are_refused(address: str) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize(
    "address",
    [
        "2001:0:a9fe:a9fe::1",  # server 169.254.169.254
        "2001:0:808:808:0:0:80ff:fefe",  # client 127.0.1.1 (inverted bits)
        "2001:0:808:808:0:0:f5ff:fffe",  # client 10.0.0.1
    ],
)
def test_teredo_addresses_embedding_an_internal_ipv4_address_are_refused(address: str) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", ["::127.0.0.1", "::a9fe:a9fe", "::10.0.0.1", "::192.168.0.1"])
def test_ipv4_compatible_addresses_embedding_an_internal_ipv4_address_are_refused(
    address: str,
) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", ["::ffff:a9fe:a9fe", "::ffff:169.254.169.254"])
def test_ipv4_mapped_addresses_embedding_an_internal_ipv4_address_are_refused(
    address: str,
) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", ["::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe"])
def test_ipv4_translated_addresses_embedding_an_internal_ipv4_address_are_refused(
    address: str,
) -> None:
    assert rules.address_refused(address)


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"])
def test_addresses_embedding_a_public_ipv4_address_are_allowed(address: str) -> None:
    assert not rules.address_refused(address)


@pytest.mark.parametrize(
    "url",
    [
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
        "http://[2002:a9fe:a9fe::1]/",
        "http://[2001:0:a9fe:a9fe::1]/",
        "http://[::127.0.0.1]/",
        "http://[::ffff:a9fe:a9fe]/",
    ],
)
def test_a_subscription_url_embedding_an_internal_ipv4_address_is_refused(url: str) -> None:
    with pytest.raises(InvalidArgumentError):
        rules.check_subscription_url(url, (), _resolver({}))


def _resolver(table: dict[str, Sequence[str]]) -> rules.Resolve:
    return lambda host: table.get(host, [host] if host[0].isdigit() or ":" in host else [])


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://127.0.0.2:8080/hook",
        "http://[::1]/hook",
        "http://localhost/hook",
        "http://10.0.0.7/hook",
        "http://169.254.169.254/latest/meta-data/",
        "https://internal.example/hook",  # resolves to a private address
        "https://nowhere.example/hook",  # does not resolve
    ],
)
def test_a_subscription_url_reaching_inside_is_refused_without_the_allow_list(url: str) -> None:
    resolve = _resolver({"localhost": ["127.0.0.1", "::1"], "internal.example": ["10.1.1.1"]})
    with pytest.raises(InvalidArgumentError):
        rules.check_subscription_url(url, (), resolve)


def test_a_host_on_the_allow_list_is_accepted_whatever_it_resolves_to() -> None:
    resolve = _resolver({"localhost": ["127.0.0.1"]})
    for url in ("http://localhost:9000/hook", "http://127.0.0.1/hook", "http://[::1]/hook"):
        rules.check_subscription_url(url, ("localhost", "127.0.0.1", "[::1]"), resolve)


def test_a_host_resolving_to_any_internal_address_is_refused() -> None:
    resolve = _resolver({"mixed.example": ["93.184.216.34", "10.0.0.1"]})
    with pytest.raises(InvalidArgumentError):
        rules.check_subscription_url("https://mixed.example/", (), resolve)
    rules.check_subscription_url("https://8.8.8.8/", (), resolve)


@pytest.mark.parametrize(
    "url", ["ftp://8.8.8.8/", "file:///etc/passwd", "8.8.8.8/hook", "http://user:pw@8.8.8.8/", ""]
)
def test_only_http_and_https_urls_with_a_host_and_no_credentials(url: str) -> None:
    with pytest.raises(InvalidArgumentError):
        rules.check_subscription_url(url, (), _resolver({}))


def test_unknown_event_types_are_invalid_and_known_ones_kept_once_in_order() -> None:
    with pytest.raises(InvalidArgumentError):
        rules.event_types(["run.finished", "run.started"])
    with pytest.raises(InvalidArgumentError):
        rules.event_types([])
    assert rules.event_types(["session.ended", "run.finished", "session.ended"]) == (
        WebhookEventType.SESSION_ENDED,
        WebhookEventType.RUN_FINISHED,
    )


def test_a_secret_is_whsec_and_base64_of_at_least_24_random_bytes() -> None:
    secret = rules.new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) >= 24
    assert rules.new_secret() != secret


def test_a_signature_verifies_with_a_standard_webhooks_library() -> None:
    secret = rules.new_secret()
    body = b'{"event_id":"evt_1","type":"run.finished"}'
    timestamp = int(time.time())
    headers = {
        "webhook-id": "evt_1",
        "webhook-timestamp": str(timestamp),
        "webhook-signature": rules.sign(secret, "evt_1", timestamp, body),
    }
    assert standardwebhooks.Webhook(secret).verify(body, headers)["event_id"] == "evt_1"
    tampered = {
        **headers,
        "webhook-signature": rules.sign(rules.new_secret(), "evt_1", timestamp, body),
    }
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError):
        standardwebhooks.Webhook(secret).verify(body, tampered)


def test_a_2xx_is_delivered_and_anything_else_retried_until_the_window_closes() -> None:
    rng = random.Random(7)
    for code in (200, 204, 299):  # delivered
        outcome = rules.after_attempt(
            code, attempts=1, now_ms=0, window_start_ms=0, retry_seconds=10
        )
        assert outcome.status is DeliveryStatus.DELIVERED
    for failed in (None, 301, 404, 500):
        outcome = rules.after_attempt(
            failed, attempts=1, now_ms=1_000, window_start_ms=0, retry_seconds=10, rng=rng
        )
        assert outcome.status is DeliveryStatus.PENDING
        assert outcome.next_attempt_at_ms is not None
        assert 1_000 < outcome.next_attempt_at_ms <= 10_000
    late = rules.after_attempt(500, attempts=9, now_ms=10_000, window_start_ms=0, retry_seconds=10)
    assert late.status is DeliveryStatus.FAILED


def test_backoff_grows_exponentially_with_jitter_and_ends_at_the_window() -> None:
    rng = random.Random(1)
    delays = [
        rules.after_attempt(
            None, attempts=n, now_ms=0, window_start_ms=0, retry_seconds=86_400, rng=rng
        ).next_attempt_at_ms
        for n in range(1, 8)
    ]
    assert all(d is not None for d in delays)
    assert delays[-1] > delays[0] * 8  # type: ignore[operator]
    last = rules.after_attempt(
        None, attempts=30, now_ms=86_000_000, window_start_ms=0, retry_seconds=86_400
    )
    assert last.next_attempt_at_ms == 86_400_000
