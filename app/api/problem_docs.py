"""What the OpenAPI document says of problems: each route's possible problems with an
example answer per code (``problems``), and ``application/problem+json`` as their media
type."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime_store_client import (
    AuthError,
    InvalidArgumentError,
    PayloadTooLargeError,
    PermissionDeniedError,
    StoreError,
    UnavailableError,
)

from .media_types import JSON, UNSUPPORTED_MEDIA_TYPE
from .problems import _TITLES, PROBLEM_JSON, STATUS_OF, Problem

#: What every route can answer; ``StoreError`` stands for ``internal``.
_EVERY_ROUTE: tuple[type[StoreError], ...] = (
    AuthError,
    PermissionDeniedError,
    InvalidArgumentError,
    PayloadTooLargeError,
    StoreError,
    UnavailableError,
)


def problems(*errors: type[StoreError]) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: every problem it can return, by status, each code with
    an example of its answer.

    ``errors`` are the classes of the route's own codes. Every route can also answer
    ``unauthenticated`` (401), ``permission_denied`` (403), ``invalid_argument`` (422),
    ``payload_too_large`` (413), ``internal`` (500) and ``unavailable`` (503).
    """
    by_status: dict[int, list[str]] = {}
    for error in (*errors, *_EVERY_ROUTE):
        codes = by_status.setdefault(error.default_status, [])
        if error.default_code not in codes:
            codes.append(error.default_code)
    return {
        status: {
            "model": Problem,
            "description": _describe(status, found),
            "content": {"application/json": {"examples": problem_examples(found)}},
        }
        for status, found in sorted(by_status.items())
    }


#: What a problem of each code says, in the examples of the document (the story of
#: app/api/examples.py); the status, title and type follow from the code.
_EXAMPLE_DETAILS: Mapping[str, tuple[str, dict[str, str]]] = {
    "unauthenticated": ("a bearer token is required", {}),
    "permission_denied": (
        "this operation needs a token of the worker or admin role; the token 'ops-reader' "
        "has the reader role",
        {},
    ),
    "invalid_argument": ("run.session_id is required", {}),
    "payload_too_large": ("the request body is larger than 8388608 bytes", {}),
    "internal": ("internal error; quote the request_id when reporting it", {}),
    "unavailable": ("the database is unavailable; retry", {}),
    "session_not_found": (
        "session 'chat-session-123' not found",
        {"session_id": "chat-session-123"},
    ),
    "run_not_found": ("run 'run-42' not found", {"run_id": "run-42"}),
    "run_suspension_not_found": ("run 'run-42' has no suspension checkpoint", {"run_id": "run-42"}),
    "session_purged": ("session 'chat-session-123' was purged", {"run_id": "run-42"}),
    "session_ended": ("session 'chat-session-123' has ended", {"session_id": "chat-session-123"}),
    "session_active": (
        "session 'chat-session-123' is active; end it first",
        {"session_id": "chat-session-123"},
    ),
    "session_has_active_runs": (
        "session 'chat-session-123' has running runs; finish them first",
        {"session_id": "chat-session-123"},
    ),
    "run_conflict": (
        "run 'run-42' already exists (in this session) with another identity",
        {"run_id": "run-42"},
    ),
    "run_terminal_conflict": ("run 'run-42' is already completed", {"run_id": "run-42"}),
    "run_cancellation_conflict": (
        "run 'run-42' was already canceled with reason 'user_requested'",
        {"run_id": "run-42"},
    ),
    "run_suspension_conflict": ("run 'run-42' holds another checkpoint", {"run_id": "run-42"}),
    "run_not_active": ("run 'run-42' is completed", {"run_id": "run-42"}),
    "run_session_mismatch": (
        "parent run 'run-42' is in session 'chat-session-123', not 'chat-session-124'",
        {"run_id": "run-43"},
    ),
    "run_record_owner_mismatch": (
        "record 'run-42:note-1' must carry agent 'planner' and session 'chat-session-123' of "
        "run 'run-42'",
        {"run_id": "run-42", "event_key": "run-42:note-1"},
    ),
    "event_conflict": (
        "event 'run-42:note-1' of run 'run-42' is already stored with other content",
        {"run_id": "run-42", "event_key": "run-42:note-1"},
    ),
    "import_conflict": (
        "session 'chat-session-123' already exists",
        {"session_id": "chat-session-123"},
    ),
    "invalid_transcript": ("the transcript breaks 1 planner rule(s)", {"run_id": "run-42"}),
    "invalid_transcript_position": (
        "through '99' is not a record of run 'run-42'",
        {"run_id": "run-42"},
    ),
    "record_not_found": (
        "run 'run-42' has no record 'run-42:missing'",
        {"run_id": "run-42", "event_key": "run-42:missing"},
    ),
    "seed_not_found": ("run 'job-7' has no seed declaration", {"run_id": "job-7"}),
    "seed_not_published": ("run 'job-7' has no published seed", {"run_id": "job-7"}),
    "seed_conflict": (
        "previous_id must be the attempt's body end '1'",
        {"run_id": "job-7"},
    ),
    "preparation_abandoned": (
        "attempt 'attempt-1' of run 'job-7' was settled without publication and can never publish",
        {"run_id": "job-7"},
    ),
    UNSUPPORTED_MEDIA_TYPE: (f"the request body must be {JSON}, not text/plain", {}),
}


def problem_examples(codes: Iterable[str]) -> dict[str, dict[str, Any]]:
    """OpenAPI ``examples`` of a response: one real-looking problem per code."""
    examples = {}
    for code in codes:
        status = STATUS_OF[code]
        detail, extra = _EXAMPLE_DETAILS.get(code, (code.replace("_", " "), {}))
        body = Problem(
            type=f"urn:runtime-store:problem:{code}",
            title=_TITLES.get(status, "Error"),
            status=status,
            detail=detail,
            code=code,
            request_id="3f9c2b7e8d6a4c1e9b0f5a2d7c4e6b1a",
            **extra,  # type: ignore[arg-type]
        )
        examples[code] = {"summary": code, "value": body.model_dump(mode="json", exclude_none=True)}
    return examples


def _describe(status: int, codes: Iterable[str]) -> str:
    return f"{_TITLES.get(status, 'Error')}: " + ", ".join(f"`{code}`" for code in codes)


def problem_media_types(openapi: dict[str, Any]) -> dict[str, Any]:
    """Declare every error response as ``application/problem+json``, as it is sent, and
    ``415 unsupported_media_type`` on every operation that takes a request body."""
    for path in openapi.get("paths", {}).values():
        for operation in path.values():
            if "requestBody" in operation:
                operation.setdefault("responses", {}).setdefault(
                    "415",
                    {
                        "description": _describe(415, [UNSUPPORTED_MEDIA_TYPE]),
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/Problem"},
                                "examples": problem_examples([UNSUPPORTED_MEDIA_TYPE]),
                            }
                        },
                    },
                )
                operation["responses"] = dict(
                    sorted(operation["responses"].items(), key=lambda item: str(item[0]))
                )
            for status, response in operation.get("responses", {}).items():
                content = response.get("content")
                if int(status) >= 400 and content and "application/json" in content:
                    response["content"] = {PROBLEM_JSON: content.pop("application/json")}
    return openapi
