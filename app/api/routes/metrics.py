"""``GET /metrics``: Prometheus' text format, outside the public schema.

Guarded like every read: with tokens on, a ``reader`` (or any stronger) token. With
``RUNTIME_STORE_METRICS_OPEN_TO_LOOPBACK`` a scraper connecting from a loopback address
needs none (a sidecar or node agent on the same host); behind a reverse proxy on the same
host every client looks local, so leave it off there.
"""

from __future__ import annotations

import asyncio
import ipaddress

from fastapi import APIRouter, Request, Response, Security

from app.api.auth import READ
from app.observability.metrics import render

router = APIRouter(include_in_schema=False)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _may_scrape(request: Request) -> None:
    client = request.client
    if request.app.state.metrics_open_to_loopback and client and _loopback(client.host):
        return
    READ.dependency.authorize(request)


@router.get("/metrics", dependencies=[Security(_may_scrape)])
async def metrics(request: Request) -> Response:
    """Every metric of the service, summed over its workers (docs/operations.md)."""
    # Several workers: the values are read from their files, off the event loop.
    body, content_type = await asyncio.to_thread(render, request.headers.get("accept", ""))
    return Response(body, media_type=content_type)
