"""A JSON request body nested deeper than the bound is refused before it is parsed
(CONTRACT.md 2.8).

FastAPI parses a JSON body with ``json.loads`` before any validation runs: a depth bomb
would cost a recursion up to the interpreter's limit, and a body a little less deep would
be parsed whole and handed on. This middleware measures the body first with the domain's
linear byte scan (``app.domain.json_bounds``). A body too deep never reaches the parser: the
app sees a body that is not JSON (one byte) and a mark in the request scope, so the refusal
takes the ordinary validation path (``app.api.problems``): an unauthenticated caller is
still told ``unauthenticated`` first, and everyone else ``invalid_argument`` naming the
bound.

A body carries its values inside an envelope of its own: the deepest is a memory append's
(the body, its ``events`` array, an event, then ``data``), so a body may nest
``BODY_ENVELOPE_DEPTH`` levels beyond the bound of the values in it, and each value is then
held to ``MAX_JSON_DEPTH`` itself (record payloads, memory data; label values are strings).

It sits inside ``BodySizeLimit``, which hands the app a bounded body in one message; a body
that still arrives in parts passes through unscanned (FastAPI's own parse then refuses a
bomb as ``invalid_argument`` too, ``app.api.problems``). A session import is never
scanned: its route reads NDJSON itself, and the importer bounds each line.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.domain.json_bounds import MAX_BODY_DEPTH, text_nests_deeper

from ..problems import BODY_TOO_DEEP

#: What the app reads instead of a body too deep: not JSON, so parsing fails at once.
_NOT_JSON: Final = b"!"


def _declares_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            media_type = value.partition(b";")[0].strip().lower()
            main, _, sub = media_type.partition(b"/")
            return bool(main == b"application" and (sub == b"json" or sub.endswith(b"+json")))
    return False


class BodyDepthLimit:
    """Pure ASGI middleware: a JSON body nested deeper than ``MAX_BODY_DEPTH`` is never
    parsed (see the module)."""

    def __init__(
        self,
        app: ASGIApp,
        max_depth: int = MAX_BODY_DEPTH,
        unscanned: Collection[tuple[str, str]] = (),
    ) -> None:
        self.app = app
        self.max_depth = max_depth
        #: (method, path) of the routes that read their body themselves (an import).
        self.unscanned = frozenset(unscanned)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or (scope["method"], scope["path"]) in self.unscanned
            or not _declares_json(scope)
        ):
            await self.app(scope, receive, send)
            return
        first = await receive()
        if (
            first["type"] == "http.request"
            and not first.get("more_body", False)
            and text_nests_deeper(first.get("body", b""), self.max_depth)
        ):
            scope[BODY_TOO_DEEP] = True
            first = {"type": "http.request", "body": _NOT_JSON, "more_body": False}
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        await self.app(scope, replay, send)
