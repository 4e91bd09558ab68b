"""Request IDs: taken from a sane ``X-Request-ID`` header or made up, echoed on responses
(by ``front.Front``)."""

from __future__ import annotations

import re
import secrets

from starlette.requests import Request
from starlette.types import Scope

from app.observability.context import REQUEST_ID

HEADER = "x-request-id"
HEADER_BYTES = HEADER.encode()
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def request_id_of(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


def assign_request_id(scope: Scope) -> str:
    """The request's ID, kept in its scope's state and in ``REQUEST_ID``."""
    incoming = ""
    for name, value in scope["headers"]:
        if name == HEADER_BYTES:
            incoming = value.decode("latin-1")  # the last one, as a dict of them kept
    # 32 random hex digits, as ``uuid4().hex`` but without building a UUID per request.
    request_id = incoming if _SANE.fullmatch(incoming) else secrets.token_hex(16)
    scope.setdefault("state", {})["request_id"] = request_id
    # Every log line written while this request is served carries its ID (the request
    # runs in a task of its own, so the value ends with it).
    REQUEST_ID.set(request_id)
    return request_id
