"""RFC 9457 problem bodies for every error, and their declaration in the OpenAPI document.

One handler renders every contract error (``StoreError``), every validation error and
every unexpected exception as ``application/problem+json`` with a stable ``code``. A
transient database failure is ``503 unavailable`` with ``Retry-After``; anything
unexpected is a ``500`` that names only the request ID.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import unquote

import fastapi.routing
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.domain.json_bounds import body_too_deep_detail as too_deep_detail
from app.domain.text import escape_lone_surrogates
from app.observability.context import note_problem
from app.storage import is_transient
from runtime_store_client import (
    AuthError,
    InvalidArgumentError,
    InvalidTranscriptError,
    NotFoundError,
    StoreError,
    UnavailableError,
)
from runtime_store_client.errors import PROBLEM_TITLES, STATUS_BY_CODE

from .media_types import JSON, UNSUPPORTED_MEDIA_TYPE, UnsupportedMediaTypeError, refusal
from .nosniff import NOSNIFF_NAME, NOSNIFF_VALUE
from .request_id import request_id_of
from .schemas.transcripts import TranscriptViolationBody

log = logging.getLogger("runtime_store.api")

#: The scope key ``BodyDepthLimit`` sets on a request whose JSON body was too deep: the
#: app read a body that is not JSON, and its validation error is answered as that.
BODY_TOO_DEEP: Final = "runtime_store.body_too_deep"


def body_too_deep(request: Request) -> bool:
    """Whether this request's JSON body was refused for its depth (``BodyDepthLimit``)."""
    return bool(request.scope.get(BODY_TOO_DEEP))


PROBLEM_JSON = "application/problem+json"

#: The tag of the routes whose every problem carries the path's run ID (CONTRACT.md 15.8),
#: their validation problems included.
SEEDS_TAG: Final = "seeds"


def _path_run_id(request: Request) -> str | None:
    """The path's run ID, for a route of ``SEEDS_TAG``."""
    route = request.scope.get("route")
    if SEEDS_TAG not in (getattr(route, "tags", None) or ()):
        return None
    run_id = request.path_params.get("run_id")
    if not isinstance(run_id, str):
        return None
    # As ``exact_segment`` reads it (middleware/exact_path.py, which imports this module).
    return unquote(run_id) if "%" in run_id else run_id


RETRY_AFTER_SECONDS = "1"


#: The code of a Starlette HTTP error by its status: an unknown route, a route that exists
#: but not for this method, or a request body that did not arrive in time (written by the
#: server itself, app/serving.py) (HTTP-only: no client error class).
_HTTP_CODES: Mapping[int, str] = {
    400: "bad_request",  # not an HTTP request at all, e.g. an unknown method (app/serving.py)
    NotFoundError.default_status: NotFoundError.default_code,
    405: "method_not_allowed",
    408: "request_timeout",
    UnsupportedMediaTypeError.default_status: UNSUPPORTED_MEDIA_TYPE,
}


#: HTTP status of every code the API answers: the contract codes (CONTRACT.md section 6)
#: from their error classes, ``internal`` from the base class, and the HTTP-only codes.
STATUS_OF: Mapping[str, int] = MappingProxyType(
    {
        **STATUS_BY_CODE,
        StoreError.default_code: StoreError.default_status,
        **{code: status for status, code in _HTTP_CODES.items()},
    }
)


_TITLES = PROBLEM_TITLES  # one home: the client's errors (the console shows them too)


class FieldError(BaseModel):
    """One invalid field of a request."""

    field: str = Field(description="Where the field is, e.g. body.record.payload.")
    message: str
    type: str = Field(description="Machine-readable kind of the failure.")


class Problem(BaseModel):
    """An RFC 9457 problem; ``code`` is the stable machine-readable reason."""

    type: str = Field(
        description="`urn:runtime-store:problem:` and the code.",
        examples=["urn:runtime-store:problem:run_not_found"],
    )
    title: str = Field(examples=["Not found"])
    status: int = Field(description="The HTTP status.", examples=[404])
    detail: str = Field(examples=["run 'run-42' not found"])
    code: str = Field(
        description="Stable error code (docs/contract.md section 6).", examples=["run_not_found"]
    )
    run_id: str | None = None
    session_id: str | None = None
    event_key: str | None = None
    line: int | None = Field(
        default=None, description="The 1-based line of an imported session file that broke a rule."
    )
    errors: list[FieldError] | None = Field(
        default=None, description="The invalid fields of a validation error."
    )
    violations: list[TranscriptViolationBody] | None = Field(
        default=None, description="The broken rules of an `invalid_transcript` problem."
    )
    request_id: str | None = None


def problem_response(
    request: Request,
    *,
    code: str,
    detail: str,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    status = status or STATUS_OF.get(code, 500)
    note_problem(code)  # the outcome metrics and the access line (app/observability)
    body = Problem(
        type=f"urn:runtime-store:problem:{code}",
        title=_TITLES.get(status, "Error"),
        status=status,
        detail=detail,
        code=code,
        request_id=request_id_of(request),
        **{key: value for key, value in extra.items() if value},
    )
    return JSONResponse(
        _encodable(body.model_dump(mode="json", exclude_none=True)),
        status_code=status,
        media_type=PROBLEM_JSON,
        # Also on the problems the connection writes itself (app/serving.py), which no
        # middleware sees (app/api/nosniff.py).
        headers={NOSNIFF_NAME: NOSNIFF_VALUE, **(headers or {})},
    )


def _encodable(value: Any) -> Any:
    """A problem body whose text is all valid Unicode: a refused identifier may hold a lone
    surrogate (2.6), and a problem that names it shows it escaped (``\\ud800``) rather
    than failing to encode as UTF-8."""
    if isinstance(value, str):
        return escape_lone_surrogates(value)
    if isinstance(value, dict):
        return {_encodable(key): _encodable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    return value


def store_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The problem answer of a ``StoreError``."""
    assert isinstance(exc, StoreError)
    extra: dict[str, Any] = {}
    if isinstance(exc, InvalidTranscriptError) and exc.violations:
        extra["violations"] = [
            TranscriptViolationBody(index=v.index, rule=str(v.rule), message=v.message)
            for v in exc.violations
        ]
    if isinstance(exc, InvalidArgumentError) and exc.line:
        extra["line"] = exc.line
    headers = None
    if exc.code == UnavailableError.default_code:
        headers = {"Retry-After": RETRY_AFTER_SECONDS}
    elif exc.code == AuthError.default_code:
        headers = {"WWW-Authenticate": "Bearer"}
    return problem_response(
        request,
        code=exc.code,
        detail=exc.message or exc.code,
        status=STATUS_OF.get(exc.code, exc.status),
        headers=headers,
        run_id=exc.run_id,
        session_id=exc.session_id,
        event_key=exc.event_key,
        **extra,
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    refused = _refusal(request)
    if refused is not None:
        return store_error_response(request, refused)
    unsupported = _unsupported_media_type(request)
    if unsupported is not None:
        return store_error_response(request, unsupported)
    run_id = _path_run_id(request)
    if body_too_deep(request):
        return problem_response(
            request, code=InvalidArgumentError.default_code, detail=too_deep_detail(), run_id=run_id
        )
    errors = [
        FieldError(
            field=".".join(str(part) for part in error.get("loc", ())),
            message=str(error.get("msg", "invalid")),
            type=str(error.get("type", "invalid")),
        )
        for error in exc.errors()
    ]
    fields = ", ".join(error.field for error in errors)
    detail = _not_json(exc) or f"invalid request: {fields}"
    return problem_response(
        request, code=InvalidArgumentError.default_code, detail=detail, errors=errors, run_id=run_id
    )


def _refusal(request: Request) -> StoreError | None:
    """The auth refusal of a request whose body could not even be parsed, if any.

    FastAPI parses the body before it runs the route's permission check: a request that
    would be refused must be refused as such, not answered with a validation error that
    reveals the API. No store call: the caller's identity is known before the body
    (``app/api/auth``), whose ``AuthMode`` answers through ``app.state``.
    """
    refused: StoreError | None = request.app.state.auth.refusal(request)
    return refused


def _not_json(exc: RequestValidationError) -> str | None:
    """A body that is not JSON, said as a JSON parser says it: what was expected, at which
    line and column (FastAPI names only the character offset, ``body.20``)."""
    for error in exc.errors():
        if error.get("type") != "json_invalid":
            continue
        loc, doc = error.get("loc", ()), exc.body
        position = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else None
        expected = str(error.get("ctx", {}).get("error") or "cannot be parsed")
        if position is None or not isinstance(doc, str):
            return f"body is not valid JSON: {expected}"
        line = doc.count("\n", 0, position) + 1
        column = position - doc.rfind("\n", 0, position)
        return f"body is not valid JSON: {expected} at line {line} column {column}"
    return None


def _unsupported_media_type(request: Request) -> UnsupportedMediaTypeError | None:
    """The refusal of a request body that FastAPI did not parse as JSON, if that is why.

    FastAPI hands such a body to validation as bytes, which never match a body schema and
    would answer 422 about the fields; the body's fault is its type (``app/api/media_types.py``).
    A body without a ``content-type`` is not JSON either (FastAPI's strict content type); no
    body at all is a validation error.
    """
    if getattr(request.scope.get("route"), "body_field", None) is None:
        return None
    has_body = request.headers.get("content-length", "0") != "0" or (
        "transfer-encoding" in request.headers
    )
    return refusal(request.headers.get("content-type"), JSON, has_body=has_body)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:
        # FastAPI's "error parsing the body" (e.g. not UTF-8): a validation error like any.
        refused = _refusal(request)
        if refused is not None:
            return store_error_response(request, refused)
        detail = f"invalid request body: {exc.detail}"
        if isinstance(exc.__cause__, RecursionError):  # a body the depth scan did not see
            detail = too_deep_detail()
        return problem_response(request, code=InvalidArgumentError.default_code, detail=detail)
    code = _HTTP_CODES.get(exc.status_code, InvalidArgumentError.default_code)
    headers = exc.headers
    if exc.status_code == 405:
        allowed = allowed_methods(request)
        if allowed:
            headers = {**(headers or {}), "Allow": ", ".join(allowed)}
    return problem_response(
        request, code=code, detail=str(exc.detail), status=exc.status_code, headers=headers
    )


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app serves on the request's path, sorted.

    Starlette's 405 names the methods of the first route that matched the path only, and a
    path with GET and POST is two routes. ``iter_route_contexts`` lists the routes of the
    included routers (FastAPI keeps them whole); an older FastAPI copied them into
    ``app.routes``, so there the routes themselves are the list.
    """
    route_contexts = getattr(fastapi.routing, "iter_route_contexts", iter)
    root, path = request.scope.get("root_path", ""), request.scope["path"]
    if root and path.startswith(root + "/"):
        path = path[len(root) :]
    methods: set[str] = set()
    for route in route_contexts(request.app.routes):
        pattern, served = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if served and pattern is not None and pattern.match(path):
            methods |= served
    return sorted(methods)


def unexpected_problem(request: Request, exc: Exception) -> JSONResponse:
    """A transient database failure is 503; anything else a 500 naming only the request."""
    if is_transient(exc):
        return problem_response(
            request,
            code=UnavailableError.default_code,
            detail="the database is unavailable; retry",
            headers={"Retry-After": RETRY_AFTER_SECONDS},
        )
    log.error("unexpected error", exc_info=exc, extra={"request_id": request_id_of(request)})
    return problem_response(
        request,
        code=StoreError.default_code,
        detail="internal error; quote the request_id when reporting it",
    )


def install_problem_handlers(app: FastAPI) -> None:
    """The handlers that answer every error with a problem (a body too deep for
    ``BodyDepthLimit`` included: ``_validation_error`` answers its refusal)."""
    app.add_exception_handler(StoreError, store_error_response)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
