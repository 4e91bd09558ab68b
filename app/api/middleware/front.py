"""``Front``: the outermost of the service's own layers, with one ``send`` wrapper for all
it does to every HTTP request.

* **The request ID** (``request_id``): taken or made up first, so every log line and
  every answer below carries it.
* **Observation** (``app/observability/requests.py``): metrics and the access line, begun
  once the ID is known and ended after everything below, the unexpected errors included.
* **Unexpected errors**: an exception no handler took becomes a problem response (a 503
  when the database failed transiently, else a 500 naming only the request), logged once;
  it goes out through the same wrapper, so it is observed and carries the headers below.
* **One ``Host``**: an HTTP/1.1 request without one, or with two, is refused 400
  (RFC 9112, 3.2): a proxy and the service could otherwise each read another.
* **Response headers**: ``X-Request-ID``; the docs pages' Content-Security-Policy
  (``docs``); ``X-Content-Type-Options: nosniff`` where the response lacks it.

These were four middlewares, each wrapping ``send`` again (docs/performance.md, "The HTTP
path").
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.requests import RequestObserver
from runtime_store_client import InvalidArgumentError

from .. import nosniff
from ..problems import problem_response, unexpected_problem
from ..request_id import HEADER_BYTES, assign_request_id
from .offline_docs import CSP_HEADER, DOCS_PATHS


class Front:
    """Pure ASGI middleware: request ID, observation, unexpected errors, response headers."""

    def __init__(self, app: ASGIApp, *, observer: RequestObserver | None = None) -> None:
        self.app = app
        self.observer = observer

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, for a request with one ``Host`` (HTTP/1.1); else its refusal."""
        if scope.get("http_version") == "1.1" and _hosts(scope) != 1:
            await _refuse_host(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        added = [(HEADER_BYTES, assign_request_id(scope).encode())]
        if scope["path"] in DOCS_PATHS:
            added.insert(0, CSP_HEADER)
        observer = self.observer
        observation = None if observer is None else observer.begin()
        started = False

        async def front_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [*message.get("headers", ()), *added]
                if not any(name.lower() == nosniff.NAME_BYTES for name, _ in headers):
                    headers.append(nosniff.HEADER)
                message["headers"] = headers
                if observation is not None:
                    observation.response_started(message)
            await send(message)

        try:
            try:
                await self._checked(scope, receive, front_send)
            except Exception as exc:
                if started:
                    raise
                response = unexpected_problem(Request(scope), exc)
                await response(scope, receive, front_send)
        finally:
            if observer is not None and observation is not None:
                observer.end(scope, observation)


def _hosts(scope: Scope) -> int:
    return sum(1 for name, _ in scope["headers"] if name == b"host")


async def _refuse_host(scope: Scope, receive: Receive, send: Send) -> None:
    response = problem_response(
        Request(scope),
        code=InvalidArgumentError.default_code,
        detail="an HTTP/1.1 request must carry exactly one Host header",
        status=400,
        headers={"Connection": "close"},
    )
    await response(scope, receive, send)
