"""Request metrics and the access line: a pure ASGI middleware.

It never touches a body, so streamed responses (the live tail's event streams, exports)
pass through as they are sent. A request is counted, timed and logged once, when the app
is done with it; an event stream is timed to its first byte, since it stays open for as
long as its subscriber wants, and counted and logged when it ends.

Labels come from the route that served the request, its operation ID and path template
(``/v1/runs/{run_id}/records``), never the raw path, so their number is bounded; a request
no API route served (unknown path, static asset, a body refused before routing) is
``other``. The access line holds only fixed fields: never a token, a payload, a
checkpoint, a query string or a body.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .context import EXCHANGE, Exchange
from .metrics import OTHER, OUTCOMES, REQUEST_SECONDS, REQUESTS

ACCESS_LOGGER: Final = "runtime_store.access"
_EVENT_STREAM: Final = b"text/event-stream"


@dataclass
class RouteLabels:
    """The labels of one route, with its metric children (looked up once)."""

    operation: str
    path: str
    seconds: Histogram
    _requests: dict[int, Counter] = field(default_factory=dict)
    _outcomes: dict[str, Counter] = field(default_factory=dict)

    @staticmethod
    def of(route: Any) -> RouteLabels:
        operation = getattr(route, "operation_id", None) or getattr(route, "name", None)
        path = getattr(route, "path_format", None)
        if not operation or not path:
            operation = path = OTHER
        return RouteLabels(operation, path, REQUEST_SECONDS.labels(operation))

    def requests(self, status: int) -> Counter:
        found = self._requests.get(status // 100)
        if found is None:
            found = REQUESTS.labels(self.operation, f"{status // 100}xx")
            self._requests[status // 100] = found
        return found

    def outcomes(self, outcome: str) -> Counter:
        found = self._outcomes.get(outcome)
        if found is None:
            found = self._outcomes[outcome] = OUTCOMES.labels(self.operation, outcome)
        return found


def _is_event_stream(headers: Any) -> bool:
    return any(
        name.lower() == b"content-type" and value.startswith(_EVENT_STREAM)
        for name, value in headers or ()
    )


class ObserveRequests:
    """Counts, times and logs every HTTP request (``metrics``, ``access_log``).

    Sits inside the request-ID middleware (the ID is known) and outside the handler of
    unexpected errors (a 500 is seen as the 500 it is answered with).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: bool = True,
        access_log: bool = True,
        trace_id: Callable[[], str] | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.access = logging.getLogger(ACCESS_LOGGER) if access_log else None
        self.trace_id = trace_id
        self._routes: dict[int, RouteLabels] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        exchange = Exchange()
        token = EXCHANGE.set(exchange)
        status = 0
        first_byte = 0.0
        streaming = False

        async def observed_send(message: Message) -> None:
            nonlocal status, first_byte, streaming
            if message["type"] == "http.response.start":
                status = message["status"]
                first_byte = time.perf_counter()
                streaming = _is_event_stream(message.get("headers"))
            await send(message)

        trace_id = ""
        try:
            if self.trace_id is not None:
                trace_id = self.trace_id()
            await self.app(scope, receive, observed_send)
        finally:
            EXCHANGE.reset(token)
            ended = time.perf_counter()
            # No response started: the exception goes on to the server, which answers 500.
            self._finish(scope, exchange, status or 500, started, ended, first_byte, streaming)
            if self.access is not None:
                self._log(scope, exchange, status or 500, ended - started, streaming, trace_id)

    def _labels(self, scope: Scope) -> RouteLabels:
        route = scope.get("route")
        # By identity: routes are not hashable, and live as long as the app.
        labels = self._routes.get(id(route))
        if labels is None:
            labels = self._routes[id(route)] = RouteLabels.of(route)
        return labels

    def _finish(
        self,
        scope: Scope,
        exchange: Exchange,
        status: int,
        started: float,
        ended: float,
        first_byte: float,
        streaming: bool,
    ) -> None:
        if not self.metrics:
            return
        labels = self._labels(scope)
        labels.requests(status).inc()
        labels.seconds.observe((first_byte if streaming and first_byte else ended) - started)
        for outcome, count in exchange.outcomes.items():
            labels.outcomes(outcome).inc(count)

    def _log(
        self,
        scope: Scope,
        exchange: Exchange,
        status: int,
        seconds: float,
        streaming: bool,
        trace_id: str,
    ) -> None:
        access = self.access
        assert access is not None
        if not access.isEnabledFor(logging.INFO):
            return
        labels = self._labels(scope)
        state = scope.get("state") or {}
        client = scope.get("client")
        method = scope["method"]
        fields: dict[str, Any] = {
            "request_id": state.get("request_id", ""),
            "operation": labels.operation,
            "method": method,
            "path": labels.path,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
            "role": state.get("token_role"),
            "token_name": state.get("token_name"),
            "client": client[0] if client else None,
        }
        if exchange.code:
            fields["code"] = exchange.code
        if streaming:
            fields["stream"] = True
        if trace_id:
            fields["trace_id"] = trace_id
        # A record made here and handed over: the line needs no caller lookup (the costliest
        # step of a plain ``info`` call), and its fixed fields need no clash check.
        record = logging.LogRecord(
            ACCESS_LOGGER, logging.INFO, "", 0, "%s %s %s", (method, labels.path, status), None
        )
        record.__dict__.update(fields)
        access.handle(record)
