"""The most frequent operations answered without FastAPI's per-request machinery.

A worker's appends and its reads of a run's records are most of what the service serves,
and for them FastAPI's routing (a linear match over every route), dependency resolution and
request handling cost more CPU than the store call itself (docs/performance.md, "Hot
routes"). ``HotRoutes`` answers these operations directly, with the same parts the routes
use: the route's path template, the same permission check, the same request models,
the same store call on the database threads, the same rendering and problem handler.

It only answers what it is sure of: a request that is not exactly the common case (any
content type but ``application/json``, a body that does not parse or validate, a token that
is missing or refused, a record of another run, a query value that is not a plain number,
a mounted ``root_path``) goes to the FastAPI route unchanged, with the body it read, and
FastAPI answers it as it always has: every error is FastAPI's. The HTTP contract suite
runs through it on every backend; ``tests/api/test_hot_routes.py`` sends the same requests,
edge cases included, to an app with and without it and compares the answers byte for
byte. ``RUNTIME_STORE_HOT_ROUTES=off`` leaves every request to FastAPI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from fastapi.security.utils import get_authorization_scheme_param
from pydantic import ValidationError
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
from .problems import store_error_response
from .render import respond_append_result, respond_append_results, respond_record_page
from .schemas import AppendRecordRequest, AppendRecordsRequest

#: A page size as FastAPI's ``int`` query parameter surely reads it; anything else (a sign,
#: spaces, zero, huge numbers) is left to FastAPI.
_PLAIN_LIMIT: Final = re.compile(r"[1-9][0-9]{0,8}")

#: The scope key marking a request a hot route answered itself (tests read it).
ANSWERED: Final = "runtime_store.hot_route"

#: A hot route's answer, or ``None``: not sure, FastAPI answers.
Handler = Callable[[Request, str, bytes], Awaitable[Response | None]]


@dataclass
class _Hot:
    method: str
    path: re.Pattern[str]
    operation_id: str
    permission: Permission
    handler: Handler
    reads_body: bool
    #: The route FastAPI served this operation with, once it has served one: the hot
    #: route answers only from then on, labelled as FastAPI labels it (metrics, access
    #: line), and never if FastAPI's route for the path is another operation.
    route: Any = None


def _is_json(scope: Scope) -> bool:
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.lower() == b"application/json"
    return False


def _services(request: Request) -> tuple[Any, Offload]:
    state = request.app.state
    return state.store, state.offload


def _json_body(body: bytes) -> Any:
    """The body as FastAPI reads it (``json.loads``), or ``None`` when it is not JSON."""
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


async def _append(request: Request, run_id: str, body: bytes) -> Response | None:
    parsed = _json_body(body)
    if parsed is None:
        return None
    try:
        model = AppendRecordRequest.model_validate(parsed)
    except ValidationError:
        return None
    if model.record.run_id != run_id:
        return None
    store, offload = _services(request)
    return respond_append_result(await offload(store.append_run_record, model.record.contract()))


async def _append_batch(request: Request, run_id: str, body: bytes) -> Response | None:
    parsed = _json_body(body)
    if parsed is None:
        return None
    try:
        model = AppendRecordsRequest.model_validate(parsed)
    except ValidationError:
        return None
    store, offload = _services(request)
    records = [item.contract() for item in model.records]
    return respond_append_results(await offload(store.append_run_records, run_id, records))


def _query(request: Request) -> dict[str, str]:
    # FastAPI reads a scalar query parameter as the last of its values.
    return dict(request.query_params)


async def _page(request: Request, run_id: str, _body: bytes) -> Response | None:
    query = _query(request)
    limit_text = query.get("limit")
    if limit_text is None:
        limit = 100
    elif _PLAIN_LIMIT.fullmatch(limit_text):
        limit = int(limit_text)
    else:
        return None
    store, offload = _services(request)
    page = await offload(store.list_run_records, run_id, query.get("cursor", ""), limit)
    return respond_record_page(page)


def _table() -> list[_Hot]:
    def hot(
        method: str,
        path: str,
        operation_id: str,
        permission: Permission,
        handler: Handler,
        *,
        reads_body: bool,
    ) -> _Hot:
        pattern, _, _ = compile_path(path)
        return _Hot(method, pattern, operation_id, permission, handler, reads_body)

    return [
        hot(
            "POST",
            "/v1/runs/{run_id}/records",
            "append-run-record",
            Permission.WRITE,
            _append,
            reads_body=True,
        ),
        hot(
            "POST",
            "/v1/runs/{run_id}/records/batch",
            "append-run-records",
            Permission.WRITE,
            _append_batch,
            reads_body=True,
        ),
        hot(
            "GET",
            "/v1/runs/{run_id}/records",
            "list-run-records",
            Permission.READ,
            _page,
            reads_body=False,
        ),
    ]


def _bearer_token(request: Request) -> str | None:
    """The token as the routes' ``HTTPBearer`` scheme reads it."""
    header = request.headers.get("authorization")
    scheme, credentials = get_authorization_scheme_param(header)
    if not (header and scheme and credentials) or scheme.lower() != "bearer":
        return None
    return credentials


class HotRoutes:
    """Pure ASGI, innermost: the hot operations answered here when surely common."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._hot = _table()

    def _match(self, scope: Scope) -> tuple[_Hot, str] | None:
        method = scope["method"]
        path = scope["path"]
        for hot in self._hot:
            if hot.method == method:
                found = hot.path.match(path)
                if found is not None:
                    return hot, exact_segment(found.group("run_id"))
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = None
        if scope["type"] == "http" and not scope.get("root_path"):
            matched = self._match(scope)
        if matched is None:
            await self.app(scope, receive, send)
            return
        hot, run_id = matched
        if hot.route is None:  # FastAPI serves the first one; its route is learnt
            await self.app(scope, receive, send)
            route = scope.get("route")
            if getattr(route, "operation_id", None) == hot.operation_id:
                hot.route = route
            return
        read: list[Message] = []
        body = b""
        if hot.reads_body:
            if not _is_json(scope) or body_too_deep(HTTPConnection(scope)):
                await self.app(scope, receive, send)
                return
            body, complete = await _read_body(receive, read)
            if not complete:
                await self.app(scope, _replaying(read, receive), send)
                return
        # As the router does: the metrics and the access line label the request by route.
        scope["route"] = hot.route
        scope["endpoint"] = hot.route.endpoint
        scope["path_params"] = {"run_id": run_id}
        request = Request(scope, receive)
        response = await self._answer(request, hot, run_id, body)
        if response is None:
            await self.app(scope, _replaying(read, receive), send)
            return
        scope[ANSWERED] = True
        await response(scope, receive, send)

    async def _answer(
        self, request: Request, hot: _Hot, run_id: str, body: bytes
    ) -> Response | None:
        auth: AuthMode = request.app.state.auth
        if auth.required:
            offload: Offload = request.app.state.offload
            try:
                await offload(check_permission, request, _bearer_token(request), hot.permission)
            except StoreError:  # refused, or the database unreachable: FastAPI says so
                return None
        try:
            return await hot.handler(request, run_id, body)
        except StoreError as exc:
            return store_error_response(request, exc)


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
