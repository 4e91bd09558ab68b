"""One attempt of a webhook delivery (CONTRACT.md 13.3): resolving its host, connecting,
sending and reading the whole answer.

**Each attempt ends within 10 s in total** (``rules.ATTEMPT_TIMEOUT_SECONDS``): resolving
the host, connecting, sending and reading the whole answer run under one deadline
(``asyncio.timeout``); a receiver that drips its answer, or its status line, is cut off at
the deadline and the attempt is a failed one (retried as 13.3 says). The answer's body is
read (up to ``MAX_ANSWER_BYTES``) and dropped, never kept.

Sending guards against server-side request forgery at the moment of sending too: the
host is resolved, every address must be public unless the host is on the allow list,
and the connection goes to an address that was checked (the URL's host stays in the
``Host`` header and in TLS's server name), so a name re-pointed at an internal address
after the check is not followed. Redirects are not followed."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from typing import Final
from urllib.parse import urlsplit

import httpx

from app.domain import webhooks as rules
from app.storage import Claimed, WebhookConfig

log = logging.getLogger("runtime_store.webhooks")

USER_AGENT: Final = "runtime-store-webhooks/1"
#: Bytes of an answer's body read (and dropped) before the connection is closed.
MAX_ANSWER_BYTES: Final = 64 * 1024


def _host_for_url(address: str) -> str:
    return f"[{address}]" if ":" in address else address


async def send(
    config: WebhookConfig,
    claimed: Claimed,
    client: httpx.AsyncClient,
    seconds: float = rules.ATTEMPT_TIMEOUT_SECONDS,
    *,
    resolver: concurrent.futures.Executor | None = None,
) -> int | None:
    """One attempt, all of it (resolving, connecting, sending, the whole answer) within
    ``seconds``: the receiver's status code, or ``None`` when nothing whole was answered
    in time (a refused address, no connection, a deadline passed)."""
    try:
        async with asyncio.timeout(seconds):
            return await _exchange(config, claimed, client, resolver)
    except TimeoutError:
        log.info(
            "webhook %s: no whole answer from %s within %.1f s",
            claimed.event_id,
            claimed.webhook_id,
            seconds,
        )
        return None


async def _exchange(
    config: WebhookConfig,
    claimed: Claimed,
    client: httpx.AsyncClient,
    resolver: concurrent.futures.Executor | None,
) -> int | None:
    target = rules.parse_url(claimed.url)
    loop = asyncio.get_running_loop()
    addresses = list(await loop.run_in_executor(resolver, config.resolve, target.host))
    refused = rules.refused_addresses(target, config.allowed_hosts, lambda _host: addresses)
    if refused or not addresses:
        log.warning(
            "webhook %s: not sent to %s: %s resolves to a refused address (%s)",
            claimed.event_id,
            claimed.webhook_id,
            target.host,
            ", ".join(refused) or "none",
        )
        return None
    body = claimed.body.encode()
    timestamp = int(time.time())
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": claimed.event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": rules.sign(claimed.secret, claimed.event_id, timestamp, body),
    }
    parts = urlsplit(claimed.url)
    headers["host"] = parts.netloc
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    for address in addresses:  # each one checked above
        pinned = parts._replace(netloc=f"{_host_for_url(address)}:{target.port}").geturl()
        try:
            async with client.stream(
                "POST", pinned, content=body, headers=headers, extensions=extensions
            ) as response:
                # The answer counts once it is whole: its body is read (and dropped) too,
                # up to a bound, so a receiver dripping it is cut off at the deadline.
                read = 0
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if read >= MAX_ANSWER_BYTES:
                        break
                return response.status_code
        except httpx.ConnectError:
            continue
        except httpx.HTTPError as exc:
            log.info("webhook %s: attempt failed: %s", claimed.event_id, exc)
            return None
    return None
