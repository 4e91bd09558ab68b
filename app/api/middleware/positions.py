"""Read-your-writes over read replicas (CONTRACT.md 14), installed only with replicas.

Each request gets its ``RequestPositions`` (app/storage/database/positions.py) in its
context, which the database threads it calls see (they run in a copy of it):

* a ``GET``/``HEAD`` request may have its reads served by a replica, at least as far as
  its ``Runtime-Store-Min-Position``; a live tail or a wait never (they follow the
  primary's wake-ups);
* a successful write answers ``Runtime-Store-Position``: the position its unit of work
  noted after the commit, or, for a write that went another way (an import, an exact
  retry answered without a transaction), the primary's position when the answer is sent,
  which is past its commit as well.

A browser (the console) cannot send a header with a page load, so a write a browser made
(it says ``Sec-Fetch-Site``, which scripts cannot forge and other clients do not send) also
sets the position as a same-site cookie, which later requests of that browser carry like
the header. A request made in process for another (the console's calls into the API)
keeps the positions of the request it serves.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.storage import (
    RequestPositions,
    SqlStore,
    current_positions,
    format_position,
    parse_position,
    request_positions,
)
from runtime_store_client import InvalidArgumentError

from ..problems import problem_response
from ..store_calls import StoreCalls

log = logging.getLogger("runtime_store.positions")

POSITION_HEADER: Final = "Runtime-Store-Position"
MIN_POSITION_HEADER: Final = "Runtime-Store-Min-Position"
_MIN_NAME: Final = MIN_POSITION_HEADER.lower().encode()
#: The cookie a browser's writes set and its requests carry (module docstring).
POSITION_COOKIE: Final = "runtime_store_position"
_POSITION_NAME: Final = POSITION_HEADER.lower().encode()
_READS: Final = frozenset({"GET", "HEAD"})
#: Reads that follow the primary's wake-ups: the live tails and the waits.
_PRIMARY_ONLY_SUFFIXES: Final = ("/records/stream", "/wait")


class ReadYourWrites:
    """Pure ASGI middleware: the positions of each request (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        values = [v.decode("latin-1") for name, v in scope["headers"] if name == _MIN_NAME]
        request = Request(scope)
        cookie = request.cookies.get(POSITION_COOKIE)
        browser = b"sec-fetch-site" in {name for name, _ in scope["headers"]}
        try:
            min_position = max((parse_position(v) for v in values), default=0)
        except ValueError:
            response = problem_response(
                Request(scope),
                code=InvalidArgumentError.default_code,
                detail=f"{MIN_POSITION_HEADER} must be a position a write answered in "
                f"{POSITION_HEADER}, such as 16/B374D848",
            )
            await response(scope, receive, send)
            return
        if cookie:
            min_position = max(min_position, _position_or_zero(cookie))
        outer = current_positions()
        if outer is not None:  # an in-process call made for another request
            min_position = max(min_position, outer.min_position)
        reading = scope["method"] in _READS
        path: str = scope["path"]
        positions = RequestPositions(
            routed=reading and not path.endswith(_PRIMARY_ONLY_SUFFIXES),
            min_position=min_position,
        )
        store: SqlStore = scope["app"].state.store

        async def send_position(message: Message) -> None:
            start = message["type"] == "http.response.start"
            if start and not reading and 200 <= message["status"] < 300:
                position = positions.written or await _position_now(scope["app"], store)
                if position:
                    text = format_position(position)
                    headers = list(message.get("headers", []))
                    headers.append((_POSITION_NAME, text.encode()))
                    if browser:
                        headers.append((b"set-cookie", _cookie(text)))
                    message["headers"] = headers
            await send(message)

        with request_positions(positions):
            await self.app(scope, receive, send_position)


def _position_or_zero(text: str) -> int:
    try:
        return parse_position(text)
    except ValueError:  # a stale or edited cookie only loses its routing
        return 0


def _cookie(position: str) -> bytes:
    return f"{POSITION_COOKIE}={position}; Path=/; SameSite=Strict; HttpOnly".encode()


async def _position_now(app: Any, store: SqlStore) -> int:
    """The primary's position now; 0 (no header) when the primary cannot say."""
    try:
        calls: StoreCalls = app.state.calls
        return await calls.unbound(store.write_position)
    except Exception as exc:
        log.warning("no %s for a write: %s", POSITION_HEADER, exc)
        return 0
