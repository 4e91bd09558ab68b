"""Error answers as the contract's errors."""

from __future__ import annotations

import httpx

from ..errors import (
    InvalidArgumentError,
    InvalidTranscriptError,
    StoreError,
    UnavailableError,
    error_class_for_code,
)
from ..transcript import TranscriptViolation

# --- problems --------------------------------------------------------------------------


def problem_error(response: httpx.Response) -> StoreError:
    """The contract error of an error response (a problem body, or a bare status)."""
    retry_after = _retry_after(response.headers.get("retry-after"))
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        if response.status_code in (502, 503, 504):
            error: StoreError = UnavailableError(
                f"HTTP {response.status_code} from {response.request.url.host}"
            )
        else:
            error = StoreError(
                f"HTTP {response.status_code} without a problem body",
                code="unknown",
                status=response.status_code,
            )
        error.retry_after = retry_after
        return error
    code: str = body["code"]
    if code == "invalid_transcript":
        error = InvalidTranscriptError(
            str(body.get("detail") or code),
            status=int(body.get("status") or response.status_code),
            run_id=str(body.get("run_id") or ""),
            violations=_violations(body.get("violations")),
        )
        error.retry_after = retry_after
        return error
    error = error_class_for_code(code)(
        str(body.get("detail") or body.get("title") or code),
        code=code,
        status=int(body.get("status") or response.status_code),
        run_id=str(body.get("run_id") or ""),
        session_id=str(body.get("session_id") or ""),
        event_key=str(body.get("event_key") or ""),
    )
    if isinstance(error, InvalidArgumentError) and isinstance(body.get("line"), int):
        error.line = body["line"]  # the broken line of an imported session file (11.4)
    error.retry_after = retry_after
    return error


def _violations(value: object) -> list[TranscriptViolation]:
    if not isinstance(value, list):
        return []
    return [
        TranscriptViolation(
            index=int(item.get("index", -1)),
            rule=str(item.get("rule", "")),
            message=str(item.get("message", "")),
        )
        for item in value
        if isinstance(item, dict)
    ]


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
