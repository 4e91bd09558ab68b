"""Request metrics and the access line, for the service's outermost layer to call.

``app/api/middleware/front.py`` begins an ``Observation`` when a request arrives, tells it when the
response starts and ends it when the app is done: it never touches a body, so streamed
responses (the live tail's event streams, exports) pass through as they are sent. A
request is counted, timed and logged once, at its end; an event stream is timed to its
first byte, since it stays open for as long as its subscriber wants, and counted and
logged when it ends.

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
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any, Final

from prometheus_client import Counter, Histogram
from starlette.types import Message, Scope

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


@dataclass(slots=True)
class Observation:
    """One request being observed: when it began, what it told, how its answer started."""

    started: float
    exchange: Exchange
    token: Token[Exchange | None]
    trace_id: str = ""
    status: int = 0
    first_byte: float = 0.0
    streaming: bool = False

    def response_started(self, message: Message) -> None:
        """The response's ``http.response.start`` message is being sent."""
        self.status = message["status"]
        self.first_byte = time.perf_counter()
        self.streaming = _is_event_stream(message.get("headers"))


class RequestObserver:
    """Counts, times and logs every HTTP request (``metrics``, ``access_log``).

    Its caller begins the observation once the request ID is known and ends it after the
    handler of unexpected errors (a 500 is seen as the 500 it is answered with).
    """

    def __init__(
        self,
        *,
        metrics: bool = True,
        access_log: bool = True,
        trace_id: Callable[[], str] | None = None,
    ) -> None:
        self.metrics = metrics
        self.access = logging.getLogger(ACCESS_LOGGER) if access_log else None
        self.trace_id = trace_id
        self._routes: dict[int, RouteLabels] = {}

    def begin(self) -> Observation:
        """A request arrived: its exchange is the one log lines and metrics see."""
        exchange = Exchange()
        observation = Observation(time.perf_counter(), exchange, EXCHANGE.set(exchange))
        if self.trace_id is not None:
            observation.trace_id = self.trace_id()
        return observation

    def end(self, scope: Scope, observation: Observation) -> None:
        """The app is done with the request (answered, or raised past every handler)."""
        EXCHANGE.reset(observation.token)
        ended = time.perf_counter()
        # No response started: the exception goes on to the server, which answers 500.
        status = observation.status or 500
        self._finish(scope, observation, status, ended)
        if self.access is not None:
            self._log(scope, observation, status, ended - observation.started)

    def _labels(self, scope: Scope) -> RouteLabels:
        route = scope.get("route")
        # By identity: routes are not hashable, and live as long as the app.
        labels = self._routes.get(id(route))
        if labels is None:
            labels = self._routes[id(route)] = RouteLabels.of(route)
        return labels

    def _finish(self, scope: Scope, observation: Observation, status: int, ended: float) -> None:
        if not self.metrics:
            return
        labels = self._labels(scope)
        labels.requests(status).inc()
        streamed = observation.streaming and observation.first_byte
        labels.seconds.observe(
            (observation.first_byte if streamed else ended) - observation.started
        )
        for outcome, count in observation.exchange.outcomes.items():
            labels.outcomes(outcome).inc(count)

    def _log(self, scope: Scope, observation: Observation, status: int, seconds: float) -> None:
        access = self.access
        assert access is not None
        if not access.isEnabledFor(logging.INFO):
            return
        labels = self._labels(scope)
        state = scope.get("state") or {}
        identity = scope.get("user")  # app.api.auth's Identity, when a token authenticated
        client = scope.get("client")
        method = scope["method"]
        fields: dict[str, Any] = {
            "request_id": state.get("request_id", ""),
            "operation": labels.operation,
            "method": method,
            "path": labels.path,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
            "role": getattr(identity, "role", None),
            "token_name": getattr(identity, "name", None),
            "client": client[0] if client else None,
        }
        if observation.exchange.code:
            fields["code"] = observation.exchange.code
        if observation.streaming:
            fields["stream"] = True
        if observation.trace_id:
            fields["trace_id"] = observation.trace_id
        # A record made here and handed over: the line needs no caller lookup (the costliest
        # step of a plain ``info`` call), and its fixed fields need no clash check.
        record = logging.LogRecord(
            ACCESS_LOGGER, logging.INFO, "", 0, "%s %s %s", (method, labels.path, status), None
        )
        record.__dict__.update(fields)
        access.handle(record)
