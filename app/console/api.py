"""The console's one data path: the service's own JSON API, through the typed client.

A fragment route never reads the database: it calls ``AsyncHttpStore`` (the client every
worker uses) over ``httpx.ASGITransport`` into this same application, so every
middleware, auth check, validation, bound and problem code is exactly the API's, with
the caller's ``Authorization`` header and request ID; answers arrive as the contract's
types, refusals as its error classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import quote

import httpx
from fastapi import Request

from app.api.request_id import request_id_of

if TYPE_CHECKING:
    from runtime_store_client import AsyncHttpStore

#: The host of in-process API requests (never resolved: the transport is the app itself).
BASE_URL: Final = "http://runtime-store.console"


def path(*segments: str) -> str:
    """An API path with each identifier percent-encoded as one segment (for the browser)."""
    return "/" + "/".join(quote(segment, safe="") for segment in segments)


class Api:
    """In-process API calls on behalf of one console request (``async with``)."""

    def __init__(self, request: Request) -> None:
        # Loaded on the first console call, not in every worker's start (httpx-aiohttp
        # and the generated models: about 0.4 s).
        from runtime_store_client import AsyncHttpStore

        forwarded: dict[str, str] = {}
        authorization = request.headers.get("authorization")
        if authorization:  # as the caller sent it: the API judges it
            forwarded["authorization"] = authorization
        request_id = request_id_of(request)
        if request_id:  # one request ID on both access lines
            forwarded["x-request-id"] = request_id
        #: Requests sent so far: a refusal made before any was sent waits for the token's.
        self.sent = 0

        async def forward(outgoing: httpx.Request) -> None:
            outgoing.headers.update(forwarded)
            self.sent += 1

        self.store: AsyncHttpStore = AsyncHttpStore(
            BASE_URL,
            retries=0,  # the console's caller decides whether to ask again
            httpx_args={
                # Not a loopback address: nothing the API opens to loopback opens to the
                # console; the access line names the call's origin.
                "transport": httpx.ASGITransport(app=request.app, client=("console", 0)),
                "trust_env": False,  # no proxy from the environment between the two
                "event_hooks": {"request": [forward]},
            },
        )

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.store.aclose()

    async def check_token(self) -> None:
        """The API's answer to the caller's token alone (a page of one session): the API
        refuses a token before it reads any argument, and so does the console."""
        await self.store.list_sessions(limit=1)
