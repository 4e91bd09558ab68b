"""Webhook rules (CONTRACT.md 13), as pure code: subscription input, the address check
that refuses internal hosts (SSRF), the event body, the Standard Webhooks signature, and
the retry schedule.

Nothing here opens a connection: name resolution is handed in (``Resolve``), so the rules
are proved on literals without touching the network.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import hashlib
import hmac
import ipaddress
import json
import random
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit

from runtime_store_client import (
    DeliveryStatus,
    InvalidArgumentError,
    RunMeta,
    WebhookEventType,
)
from runtime_store_client.times import format_rfc3339

from .text import check_plain_text
from .times import from_millis

#: Prefix of a subscription's secret (Standard Webhooks).
SECRET_PREFIX: Final = "whsec_"
#: Random bytes of a new secret (the contract asks for at least 24).
SECRET_BYTES: Final = 32
#: Longest URL a subscription may name.
MAX_URL_CHARS: Final = 2048
#: Seconds an answer may take; past them the attempt failed (13.3).
ATTEMPT_TIMEOUT_SECONDS: Final = 10.0
#: Backoff: the first retry after about this many seconds, doubling up to the cap.
BACKOFF_FIRST_SECONDS: Final = 1.0
BACKOFF_CAP_SECONDS: Final = 3600.0

#: Resolves a host name (or literal) to the addresses a connection could reach.
Resolve = Callable[[str], Sequence[str]]


def new_secret() -> str:
    """``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: its base64 part, decoded (as Standard Webhooks libraries
    read it)."""
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)


def sign(secret: str, event_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header: ``v1,`` + base64 HMAC-SHA256 of
    ``id.timestamp.body``."""
    message = f"{event_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def event_types(values: Iterable[str]) -> tuple[WebhookEventType, ...]:
    """The subscription's event types, in the order given, each once; at least one."""
    found: list[WebhookEventType] = []
    for value in values:
        check_plain_text(value, "events")
        try:
            event_type = WebhookEventType(value)
        except ValueError:
            known = ", ".join(t.value for t in WebhookEventType)
            raise InvalidArgumentError(f"unknown event type {value!r} (known: {known})") from None
        if event_type not in found:
            found.append(event_type)
    if not found:
        raise InvalidArgumentError("events must name at least one event type")
    return tuple(found)


#: NAT64 prefixes (RFC 6052, RFC 8215): the well-known /96 carries the IPv4 address in its
#: last 32 bits; the local-use /48 is never global and where it puts the IPv4 address is
#: the operator's choice, so all of it is refused.
_NAT64_WELL_KNOWN: Final = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE: Final = ipaddress.IPv6Network("64:ff9b:1::/48")
#: Deprecated IPv4-compatible (::a.b.c.d) and SIIT IPv4-translated (::ffff:0:a.b.c.d)
#: addresses: the IPv4 address is the last 32 bits.
_IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED: Final = ipaddress.IPv6Network("::ffff:0:0:0/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address a transition mechanism could forward a connection to ``ip`` to:
    IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4 and both Teredo ends."""
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:  # 2002::/16, bits 16-48
        found.append(ip.sixtofour)
    if ip.teredo is not None:  # 2001::/32: (server, client), the client already un-inverted
        found.extend(ip.teredo)
    if any(ip in net for net in (_NAT64_WELL_KNOWN, _IPV4_COMPATIBLE, _IPV4_TRANSLATED)):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF))
    return found


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def address_refused(address: str) -> bool:
    """Whether a connection to ``address`` could reach something internal: loopback,
    private, link-local (cloud metadata at 169.254.169.254 included), unspecified,
    multicast, reserved or shared ranges (anything not globally routable). An IPv6 address
    is allowed only if it and every IPv4 address it embeds are public:
    ``64:ff9b::a9fe:a9fe`` is 169.254.169.254 through a NAT64 gateway."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:a.b.c.d is how a dual-stack socket names a.b.c.d
    if not _public(ip):
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        # ``is_global`` of Python 3.11 calls these prefixes global whatever they embed.
        if ip in _NAT64_LOCAL_USE:
            return True
        return not all(_public(v4) for v4 in embedded_ipv4(ip))
    return False


def normalized_host(host: str) -> str:
    """A host as the allow list compares it: lower case, no brackets, no trailing dot."""
    return host.strip().strip("[]").rstrip(".").lower()


@dataclass(frozen=True, slots=True)
class Target:
    """A subscription URL, parsed."""

    url: str
    scheme: str
    host: str
    port: int

    def allowed(self, allowed_hosts: Iterable[str]) -> bool:
        return self.host in {normalized_host(host) for host in allowed_hosts}


def parse_url(url: str) -> Target:
    """An ``http`` or ``https`` URL with a host and no credentials."""
    check_plain_text(url, "url")
    if len(url) > MAX_URL_CHARS:
        raise InvalidArgumentError(
            f"url is {len(url)} characters long; a webhook URL has at most {MAX_URL_CHARS}"
        )
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise InvalidArgumentError("url must be an http or https URL without spaces")
    try:
        parts: SplitResult = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidArgumentError(f"url is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgumentError("url must be an http or https URL with a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidArgumentError("url must not carry credentials")
    default = 443 if parts.scheme == "https" else 80
    return Target(
        url=url, scheme=parts.scheme, host=normalized_host(parts.hostname), port=port or default
    )


def refused_addresses(target: Target, allowed_hosts: Iterable[str], resolve: Resolve) -> list[str]:
    """The addresses of the target's host that must not be reached (empty: send). A host
    on the allow list is never refused; a host that resolves to nothing is refused."""
    if target.allowed(allowed_hosts):
        return []
    addresses = list(resolve(target.host))
    if not addresses:
        return [target.host]
    return [address for address in addresses if address_refused(address)]


def check_subscription_url(url: str, allowed_hosts: Iterable[str], resolve: Resolve) -> Target:
    """A subscription's URL, refused (``invalid_argument``) when its host resolves to an
    internal address and is not on ``RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS``."""
    target = parse_url(url)
    refused = refused_addresses(target, allowed_hosts, resolve)
    if refused:
        raise InvalidArgumentError(
            f"url host {target.host!r} resolves to an address webhooks may not reach "
            f"({', '.join(refused)}): loopback, private, link-local and unspecified hosts "
            "must be listed in RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS, a setting of the service "
            "(set it where `runtime-store serve` runs and restart it)"
        )
    return target


def _wire(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_rfc3339(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return dict(value)
    return value


def run_json(meta: RunMeta) -> dict[str, Any]:
    """A run as ``GET /v1/runs/{run_id}`` answers it: every field of ``RunMeta``, in its
    order, in the wire's spelling (a field added to ``RunMeta`` is in the event too)."""
    return {field.name: _wire(getattr(meta, field.name)) for field in dataclasses.fields(meta)}


def event_body(
    event_id: str,
    event_type: WebhookEventType,
    occurred_at_ms: int,
    run: RunMeta | None,
    session_id: str,
) -> str:
    """The JSON body every delivery of one event sends (13.3)."""
    return json.dumps(
        {
            "event_id": event_id,
            "type": event_type.value,
            "occurred_at": format_rfc3339(from_millis(occurred_at_ms)),
            "run": None if run is None else run_json(run),
            "session_id": session_id,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(16)


def new_webhook_id() -> str:
    return "wh_" + secrets.token_hex(12)


def delivered(status_code: int | None) -> bool:
    return status_code is not None and 200 <= status_code < 300


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    """What one attempt left: the delivery's status and, while pending, its next due
    time (epoch ms)."""

    status: DeliveryStatus
    next_attempt_at_ms: int | None


def after_attempt(
    status_code: int | None,
    *,
    attempts: int,
    now_ms: int,
    window_start_ms: int,
    retry_seconds: float,
    rng: random.Random | None = None,
) -> AttemptOutcome:
    """Delivered on a 2xx; else retried with exponential backoff and jitter until the
    retry window closes (one last attempt at its end), then failed. ``attempts`` counts
    this one."""
    if delivered(status_code):
        return AttemptOutcome(DeliveryStatus.DELIVERED, None)
    deadline_ms = window_start_ms + int(retry_seconds * 1000)
    if now_ms >= deadline_ms:
        return AttemptOutcome(DeliveryStatus.FAILED, None)
    backoff = min(BACKOFF_CAP_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** max(0, attempts - 1))
    jittered = backoff * (0.5 + 0.5 * (rng or random).random())
    return AttemptOutcome(
        DeliveryStatus.PENDING, min(deadline_ms, now_ms + max(1, int(jittered * 1000)))
    )


def check_secret(secret: str) -> None:
    """A stored secret decodes (the store only keeps the ones it made)."""
    try:
        secret_key(secret)
    except (binascii.Error, ValueError) as exc:
        raise InvalidArgumentError("not a webhook secret") from exc
