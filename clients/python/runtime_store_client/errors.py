"""Error classes of the runtime-store contract (CONTRACT.md sections 6 and 7).

Every error carries a stable machine ``code`` and the HTTP ``status`` of section 6, also
when it is raised in-process. Only :class:`UnavailableError` is worth retrying.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .transcript.violations import TranscriptViolation


class StoreError(Exception):
    """Base of every contract error."""

    default_code: ClassVar[str] = "internal"
    default_status: ClassVar[int] = 500

    def __init__(
        self,
        message: str = "",
        *,
        code: str | None = None,
        status: int | None = None,
        run_id: str = "",
        session_id: str = "",
        event_key: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else self.default_code
        self.status = status if status is not None else self.default_status
        self.run_id = run_id
        self.session_id = session_id
        self.event_key = event_key
        #: Seconds the server asked to wait before a retry (``Retry-After``), if any.
        self.retry_after: float | None = None

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.message else self.code

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={value!r}"
            for name, value in (
                ("run_id", self.run_id),
                ("session_id", self.session_id),
                ("event_key", self.event_key),
            )
            if value
        )
        return f"{type(self).__name__}({self.message!r}, code={self.code!r}{extra})"


class InvalidArgumentError(StoreError):
    """Input that breaks a rule. ``line`` is the 1-based line of an imported session file
    that broke it (CONTRACT.md 11.4), 0 otherwise."""

    default_code = "invalid_argument"
    default_status = 422

    def __init__(self, message: str = "", *, line: int = 0, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.line = line


class InvalidTranscriptError(StoreError):
    """A transcript breaks a rule of CONTRACT.md section 10.

    ``violations`` lists every broken rule, each naming the message index (``-1`` when the
    problem is not inside one message) and the rule; it is empty when the error came from
    a source that did not give them (for example an HTTP problem body).
    """

    default_code = "invalid_transcript"
    default_status = 422

    def __init__(
        self,
        message: str = "",
        *,
        code: str | None = None,
        status: int | None = None,
        run_id: str = "",
        session_id: str = "",
        event_key: str = "",
        violations: Sequence[TranscriptViolation] | None = None,
    ) -> None:
        found = list(violations or ())
        if not message and found:
            message = "; ".join(str(violation) for violation in found)
        super().__init__(
            message,
            code=code,
            status=status,
            run_id=run_id,
            session_id=session_id,
            event_key=event_key,
        )
        self.violations: list[TranscriptViolation] = found


class InvalidTranscriptPositionError(StoreError):
    """A transcript read's ``through``, ``after`` or ``limit`` is not a position of that
    run (CONTRACT.md 12.3)."""

    default_code = "invalid_transcript_position"
    default_status = 422


class AuthError(StoreError):
    """Missing or unknown credentials (401) or a role that does not allow the call (403)."""

    default_code = "unauthenticated"
    default_status = 401


class PermissionDeniedError(AuthError):
    """A role that does not allow the call: ``permission_denied``'s one home (403)."""

    default_code = "permission_denied"
    default_status = 403


class NotFoundError(StoreError):
    default_code = "not_found"
    default_status = 404


class SessionNotFoundError(NotFoundError):
    default_code = "session_not_found"


class RunNotFoundError(NotFoundError):
    default_code = "run_not_found"


class RunSuspensionNotFoundError(NotFoundError):
    default_code = "run_suspension_not_found"


class RecordNotFoundError(NotFoundError):
    """No record of the run has that event key (CONTRACT.md 12.5)."""

    default_code = "record_not_found"


class WebhookNotFoundError(NotFoundError):
    """No webhook subscription has that ID (CONTRACT.md 13.1)."""

    default_code = "webhook_not_found"


class SeedNotFoundError(NotFoundError):
    """The run ID has no seed declaration, or the named attempt does not exist (15.8)."""

    default_code = "seed_not_found"


class SessionPurgedError(StoreError):
    default_code = "session_purged"
    default_status = 410


class ConflictError(StoreError):
    default_code = "conflict"
    default_status = 409


class SessionEndedError(ConflictError):
    default_code = "session_ended"


class SessionActiveError(ConflictError):
    default_code = "session_active"


class SessionHasActiveRunsError(ConflictError):
    default_code = "session_has_active_runs"


class RunConflictError(ConflictError):
    default_code = "run_conflict"


class RunTerminalConflictError(ConflictError):
    default_code = "run_terminal_conflict"


class RunCancellationConflictError(ConflictError):
    default_code = "run_cancellation_conflict"


class RunSuspensionConflictError(ConflictError):
    default_code = "run_suspension_conflict"


class RunNotActiveError(ConflictError):
    default_code = "run_not_active"


class RunSessionMismatchError(ConflictError):
    default_code = "run_session_mismatch"


class RunRecordOwnerMismatchError(ConflictError):
    default_code = "run_record_owner_mismatch"


class EventConflictError(ConflictError):
    default_code = "event_conflict"


class ImportConflictError(ConflictError):
    """An imported session's or run's ID already exists (CONTRACT.md 11.4); the error names
    it in ``session_id`` or ``run_id``."""

    default_code = "import_conflict"


class SeedNotPublishedError(ConflictError):
    """The run ID's seed is declared but no attempt is published (15.8)."""

    default_code = "seed_not_published"


class SeedConflictError(ConflictError):
    """The value differs from what the run ID's seed operation accepted (15.8)."""

    default_code = "seed_conflict"


class PreparationAbandonedError(ConflictError):
    """The attempt was settled without publication and can never publish (15.3)."""

    default_code = "preparation_abandoned"


class PayloadTooLargeError(StoreError):
    default_code = "payload_too_large"
    default_status = 413


class UnavailableError(StoreError):
    """A transient failure; the only error that is safe and useful to retry."""

    default_code = "unavailable"
    default_status = 503


#: The class of every contract code (section 6); each code's HTTP status is its class's.
_BY_CODE: dict[str, type[StoreError]] = {
    cls.default_code: cls
    for cls in (
        InvalidArgumentError,
        InvalidTranscriptError,
        InvalidTranscriptPositionError,
        AuthError,
        PermissionDeniedError,
        SessionNotFoundError,
        RunNotFoundError,
        RunSuspensionNotFoundError,
        RecordNotFoundError,
        WebhookNotFoundError,
        SessionPurgedError,
        SessionEndedError,
        SessionActiveError,
        SessionHasActiveRunsError,
        RunConflictError,
        RunTerminalConflictError,
        RunCancellationConflictError,
        RunSuspensionConflictError,
        RunNotActiveError,
        RunSessionMismatchError,
        RunRecordOwnerMismatchError,
        EventConflictError,
        ImportConflictError,
        SeedNotFoundError,
        SeedNotPublishedError,
        SeedConflictError,
        PreparationAbandonedError,
        PayloadTooLargeError,
        UnavailableError,
    )
}

#: Every stable error code the contract defines.
ERROR_CODES: frozenset[str] = frozenset(_BY_CODE)

#: The HTTP status of every contract code (section 6), read off the error classes.
STATUS_BY_CODE: Mapping[str, int] = MappingProxyType(
    {code: cls.default_status for code, cls in _BY_CODE.items()}
)


#: A problem's ``title`` (RFC 9457) by its HTTP status: the service writes it in every
#: problem body, and the console titles the errors it shows with it.
PROBLEM_TITLES: Mapping[int, str] = MappingProxyType(
    {
        400: "Bad request",
        401: "Unauthenticated",
        403: "Permission denied",
        404: "Not found",
        405: "Method not allowed",
        408: "Request timeout",
        409: "Conflict",
        410: "Gone",
        413: "Payload too large",
        415: "Unsupported media type",
        422: "Invalid argument",
        500: "Internal error",
        503: "Unavailable",
    }
)


def problem_title(status: int) -> str:
    """The title of a problem with this HTTP status."""
    return PROBLEM_TITLES.get(status, "Error")


def error_class_for_code(code: str) -> type[StoreError]:
    """The exception class of a contract ``code``; :class:`StoreError` for an unknown one."""
    return _BY_CODE.get(code, StoreError)
