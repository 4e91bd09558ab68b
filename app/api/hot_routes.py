"""The most frequent operations answered without FastAPI's per-request machinery.

A worker's starts, appends, terminal writes and reads of a run are most of what the service
serves, and for them FastAPI's routing (a linear match over every route), dependency
resolution and request handling cost more CPU than the store call itself
(docs/performance.md, "Hot routes"). ``HotRoutes`` calls the route's own endpoint function
directly: with the path parameters its types would give it (``exact_segment``), the body
parsed (``json.loads``) and validated by the route's own request model, its query values
(plain strings, and a page's ``limit``), and the ``Request``; after the route's own
permission check.
The endpoint is unchanged (its checks, its store call, its rendering), and a ``StoreError``
it raises goes to the same handler FastAPI's would.

It only answers what it is sure of. A request that is not exactly the common case (any
content type but ``application/json``, a body that does not parse or validate, a token
that is missing or refused, a query value FastAPI might read otherwise, a mounted
``root_path``) goes on to FastAPI unchanged, with the body it read, before the endpoint
runs: every refusal is FastAPI's own answer. An operation is taken over only once FastAPI
has served one request of it and only if its route has exactly the shape above (read from
FastAPI's own description of the route's parameters); the route FastAPI chose is kept, so
the metrics and the access line label the request as FastAPI would. The HTTP contract
suite runs through it on every backend; ``tests/api/test_hot_routes.py`` sends the same
requests, edge cases included, to an app with and one without it and compares the answers
byte for byte. ``RUNTIME_STORE_HOT_ROUTES=off`` leaves every request to FastAPI.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from annotated_types import Ge
from fastapi.routing import APIRoute
from fastapi.security.utils import get_authorization_scheme_param
from pydantic import AfterValidator, BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.domain.tokens import Permission
from runtime_store_client import StoreError

from .auth import AuthMode, check_permission
from .body_depth import body_too_deep
from .exact_path import exact_segment
from .offload import Offload

#: The operations answered here: (method, path template, operation ID). No other route of
#: the same method matches a request one of these patterns matches, so the pattern alone
#: names the route FastAPI would choose.
HOT: Final = (
    ("POST", "/v1/sessions", "create-session"),
    ("GET", "/v1/sessions/{session_id}", "load-session"),
    ("POST", "/v1/sessions/{session_id}/end", "end-session"),
    ("GET", "/v1/sessions/{session_id}/status", "load-session-status"),
    ("GET", "/v1/sessions/{session_id}/records", "list-session-run-records"),
    ("POST", "/v1/runs/root-starts", "start-root-run"),
    ("POST", "/v1/runs/child-starts", "start-child-run"),
    ("POST", "/v1/runs/one-shot-starts", "start-one-shot-run"),
    ("POST", "/v1/runs/synchronous-starts", "start-synchronous-run"),
    ("POST", "/v1/runs/one-shot-child-starts", "start-one-shot-child-run"),
    ("GET", "/v1/runs/{run_id}", "load-run"),
    ("POST", "/v1/runs/{run_id}/records", "append-run-record"),
    ("GET", "/v1/runs/{run_id}/records", "list-run-records"),
    ("GET", "/v1/runs/{run_id}/transcript-records", "list-run-transcript-records"),
    ("GET", "/v1/runs/{run_id}/record", "load-run-record"),
    ("GET", "/v1/agents/{agent_id}/runs/{run_id}/memory", "load-memory"),
    ("POST", "/v1/runs/{run_id}/records/batch", "append-run-records"),
    ("POST", "/v1/runs/{run_id}/cancellation", "record-run-cancellation"),
    ("POST", "/v1/runs/{run_id}/suspension", "record-run-suspension"),
    ("POST", "/v1/runs/{run_id}/terminal", "record-run-terminal"),
)

#: The scope key marking a request a hot route answered itself (tests read it).
ANSWERED: Final = "runtime_store.hot_route"

#: A page size as FastAPI's ``int`` query parameter surely reads it; anything else (a sign,
#: spaces, zero, huge numbers) is left to FastAPI.
_PLAIN_LIMIT: Final = re.compile(r"[1-9][0-9]{0,8}")


@dataclass(frozen=True)
class _Plan:
    """How to call one route's endpoint without FastAPI (read from its ``dependant``)."""

    route: APIRoute
    endpoint: Callable[..., Awaitable[Response]]
    permission: Permission
    path_params: tuple[str, ...]
    #: The body parameter's name and model, if the route takes a body.
    body: tuple[str, type[BaseModel]] | None
    #: The query parameters with their defaults (``_REQUIRED``: none).
    query: dict[str, Any]
    request_param: str


_NOT_HOT: Final = object()  # FastAPI's route did not have the shape: it stays FastAPI's
_REQUIRED: Final = object()  # a query parameter without a default


def _exact_id(field: Any) -> bool:
    metadata = field.field_info.metadata
    return (
        field.field_info.annotation is str
        and len(metadata) == 1
        and isinstance(metadata[0], AfterValidator)
        and metadata[0].func is exact_segment
    )


def _plain_query(field: Any) -> bool:
    """A query parameter read as ``_query_arguments`` reads it: a page's ``limit`` (an
    ``int``, at least 1 if bounded), or a ``str`` with no constraint, either required or
    with a string default; under its own name."""
    info = field.field_info
    if field.alias != field.name:
        return False
    if field.name == "limit":
        return (
            info.annotation is int
            and isinstance(info.default, int)
            and (
                not info.metadata
                or (
                    len(info.metadata) == 1
                    and isinstance(info.metadata[0], Ge)
                    and info.metadata[0].ge == 1
                )
            )
        )
    return (
        info.annotation is str
        and not info.metadata
        and (info.is_required() or isinstance(info.default, str))
    )


def _plan_of(route: Any) -> _Plan | None:
    """The plan of a route FastAPI served, or ``None`` unless its shape is the known one:
    exact-ID path parameters, at most one body model, plain query parameters, the
    ``Request``, one permission dependency, and an endpoint that returns a ``Response``."""
    if not isinstance(route, APIRoute):
        return None
    dependant = route.dependant
    permissions = [getattr(d.call, "permission", None) for d in dependant.dependencies]
    if (
        dependant.header_params
        or dependant.cookie_params
        or dependant.request_param_name is None
        or dependant.websocket_param_name is not None
        or dependant.http_connection_param_name is not None
        or dependant.response_param_name is not None
        or dependant.background_tasks_param_name is not None
        or dependant.security_scopes_param_name is not None
        or len(permissions) != 1
        or not isinstance(permissions[0], Permission)
        or len(dependant.body_params) > 1
        or not all(_exact_id(field) for field in dependant.path_params)
        or not all(_plain_query(field) for field in dependant.query_params)
        or dependant.call is None
    ):
        return None
    hints = typing.get_type_hints(dependant.call)
    if hints.get("return") is not Response:
        return None
    body = None
    if dependant.body_params:
        (field,) = dependant.body_params
        model = field.field_info.annotation
        embedded = getattr(field.field_info, "embed", None)
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or embedded:
            return None
        body = (field.name, model)
    return _Plan(
        route=route,
        endpoint=dependant.call,
        permission=permissions[0],
        path_params=tuple(field.name for field in dependant.path_params),
        body=body,
        query={
            field.name: _REQUIRED if field.field_info.is_required() else field.field_info.default
            for field in dependant.query_params
        },
        request_param=dependant.request_param_name,
    )


@dataclass
class _Hot:
    method: str
    pattern: re.Pattern[str]
    operation_id: str
    #: ``None`` until FastAPI has served one request of the operation, then its plan (or
    #: ``_NOT_HOT``).
    plan: Any = None


def _is_json(scope: Scope) -> bool:
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.lower() == b"application/json"
    return False


def _bearer_token(request: Request) -> str | None:
    """The token as the routes' ``HTTPBearer`` scheme reads it."""
    header = request.headers.get("authorization")
    scheme, credentials = get_authorization_scheme_param(header)
    if not (header and scheme and credentials) or scheme.lower() != "bearer":
        return None
    return credentials


def _query_arguments(request: Request, defaults: dict[str, Any]) -> dict[str, Any] | None:
    """The query parameters as FastAPI reads them (the last of repeated values), or
    ``None`` when one is missing or is one FastAPI might read otherwise or refuse."""
    given = dict(request.query_params)
    arguments: dict[str, Any] = {}
    for name, default in defaults.items():
        value = given.get(name)
        if value is None:
            if default is _REQUIRED:
                return None
            arguments[name] = default
        elif name == "limit":
            if not _PLAIN_LIMIT.fullmatch(value):
                return None
            arguments[name] = int(value)
        else:
            arguments[name] = value
    return arguments


def _body_argument(body: bytes, model: type[BaseModel]) -> BaseModel | None:
    """The body as FastAPI reads it (``json.loads``, then the model), or ``None``."""
    if not body:
        return None
    try:
        return model.model_validate(json.loads(body))
    except (ValueError, ValidationError):  # JSONDecodeError is a ValueError
        return None


class HotRoutes:
    """Pure ASGI, innermost: the hot operations answered here when surely common."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._hot = [
            _Hot(method, compile_path(path)[0], operation_id) for method, path, operation_id in HOT
        ]

    def _match(self, scope: Scope) -> tuple[_Hot, re.Match[str]] | None:
        method = scope["method"]
        path = scope["path"]
        for hot in self._hot:
            if hot.method == method:
                found = hot.pattern.match(path)
                if found is not None:
                    return hot, found
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = None
        if scope["type"] == "http" and not scope.get("root_path"):
            matched = self._match(scope)
        if matched is None:
            await self.app(scope, receive, send)
            return
        hot, found = matched
        if hot.plan is None:  # FastAPI serves the first one; its route is learnt
            await self.app(scope, receive, send)
            route = scope.get("route")
            if getattr(route, "operation_id", None) == hot.operation_id:
                hot.plan = _plan_of(route) or _NOT_HOT
            return
        if hot.plan is _NOT_HOT:
            await self.app(scope, receive, send)
            return
        plan: _Plan = hot.plan
        read: list[Message] = []
        body = b""
        if plan.body is not None:
            if not _is_json(scope) or body_too_deep(HTTPConnection(scope)):
                await self.app(scope, receive, send)
                return
            body, complete = await _read_body(receive, read)
            if not complete:
                await self.app(scope, _replaying(read, receive), send)
                return
        # The body already read stays readable: an endpoint that reads it gets it again.
        request = Request(scope, _replaying(read, receive))
        response = await self._answer(request, plan, found, body)
        if response is None:
            await self.app(scope, _replaying(read, receive), send)
            return
        scope[ANSWERED] = True
        await response(scope, receive, send)

    async def _answer(
        self, request: Request, plan: _Plan, found: re.Match[str], body: bytes
    ) -> Response | None:
        """The endpoint's response, or ``None`` (before it ran) when FastAPI must answer."""
        arguments: dict[str, Any] = {name: exact_segment(found[name]) for name in plan.path_params}
        if plan.query:
            query = _query_arguments(request, plan.query)
            if query is None:
                return None
            arguments.update(query)
        if plan.body is not None:
            name, model = plan.body
            parsed = _body_argument(body, model)
            if parsed is None:
                return None
            arguments[name] = parsed
        arguments[plan.request_param] = request
        auth: AuthMode = request.app.state.auth
        if auth.required:
            offload: Offload = request.app.state.offload
            try:
                await offload(check_permission, request, _bearer_token(request), plan.permission)
            except StoreError:  # refused, or the database unreachable: FastAPI says so
                return None
        # As the router does: the metrics and the access line label the request by route.
        request.scope["route"] = plan.route
        request.scope["endpoint"] = plan.endpoint
        request.scope["path_params"] = dict(found.groupdict())
        try:
            return await plan.endpoint(**arguments)
        except Exception as exc:  # as Starlette does: the app's handler (a StoreError's
            # problem, …), if any
            handler = _handler_for(request, exc)
            if handler is None:
                raise
            answer = handler(request, exc)
            response: Response = await answer if inspect.isawaitable(answer) else answer
            return response


def _handler_for(request: Request, exc: Exception) -> Callable[..., Any] | None:
    handlers: dict[Any, Callable[..., Any]] = request.app.exception_handlers
    if isinstance(exc, HTTPException) and exc.status_code in handlers:
        return handlers[exc.status_code]
    for cls in type(exc).__mro__:
        if cls in handlers:
            return handlers[cls]
    return None


async def _read_body(receive: Receive, read: list[Message]) -> tuple[bytes, bool]:
    """The whole body, and whether it arrived whole (not cut by a disconnect)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            return b"", False
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replaying(read: list[Message], receive: Receive) -> Receive:
    """``receive`` that first gives back the messages already read."""
    pending = list(read)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
