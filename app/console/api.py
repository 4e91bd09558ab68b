"""The console's one data path: the service's own JSON API, called in-process.

A fragment route never reads the database: it sends the API request a client would send
(through ``httpx.ASGITransport`` into this same application, so every middleware, auth
check, validation, bound and problem code is exactly the API's), with the caller's
``Authorization`` header and request ID, and renders what comes back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote

import httpx
from fastapi import Request

from app.api.request_id import request_id_of

#: The host of in-process API requests (never resolved: the transport is the app itself).
BASE_URL: Final = "http://runtime-store.console"

QueryParams = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class Problem:
    """An API refusal as the console shows it: RFC 9457 fields plus the stable code."""

    status: int
    code: str
    title: str
    detail: str
    violations: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, response: httpx.Response) -> Problem:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = {}
        violations = body.get("violations")
        return cls(
            status=response.status_code,
            code=str(body.get("code", "")) or f"http_{response.status_code}",
            title=str(body.get("title", "")) or response.reason_phrase,
            detail=str(body.get("detail", "")),
            violations=violations if isinstance(violations, list) else [],
        )


class ApiError(Exception):
    """The API answered with a problem; the fragment shows it instead of its data."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.status} {problem.code}: {problem.detail}")
        self.problem = problem


def path(*segments: str) -> str:
    """An API path with each identifier percent-encoded as one segment."""
    return "/" + "/".join(quote(segment, safe="") for segment in segments)


class Api:
    """In-process API calls on behalf of one console request (``async with``)."""

    def __init__(self, request: Request) -> None:
        headers = {"accept": "application/json"}
        authorization = request.headers.get("authorization")
        if authorization:
            headers["authorization"] = authorization
        request_id = request_id_of(request)
        if request_id:  # one request ID on both access lines
            headers["x-request-id"] = request_id
        # Not a loopback address: nothing the API opens to loopback opens to the console;
        # the access line names the call's origin.
        transport = httpx.ASGITransport(app=request.app, client=("console", 0))
        self._client = httpx.AsyncClient(
            transport=transport, base_url=BASE_URL, headers=headers, trust_env=False
        )

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self._client.aclose()

    async def get(self, api_path: str, params: QueryParams | Mapping[str, str] = ()) -> Any:
        """The JSON body of a successful ``GET``; ``ApiError`` for any problem."""
        response = await self._client.get(api_path, params=_params(params))
        if response.status_code != 200:
            raise ApiError(Problem.of(response))
        return response.json()

    async def problem_or_none(
        self, api_path: str, params: QueryParams | Mapping[str, str] = ()
    ) -> Problem | None:
        """``None`` when the ``GET`` succeeds, else its problem (for checks whose answer
        is the problem itself, such as a transcript validation)."""
        response = await self._client.get(api_path, params=_params(params))
        return None if response.status_code == 200 else Problem.of(response)


def _params(params: QueryParams | Mapping[str, str]) -> httpx.QueryParams:
    """The parameters without the empty ones (the API's defaults)."""
    items = params.items() if isinstance(params, Mapping) else params
    return httpx.QueryParams([(key, value) for key, value in items if value != ""])
