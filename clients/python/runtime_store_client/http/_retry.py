"""Retries that are safe by construction.

Only ``UnavailableError`` (a 503, a refused or reset connection, a timeout) is retried:
every write is idempotent by its event keys, so a retried write that had in fact
committed comes back as an exact retry with the original IDs. Contract errors are final.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import httpx

from ..errors import InvalidArgumentError, StoreError, UnavailableError


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, bounded by a count and an overall deadline."""

    retries: int = 3
    deadline: float = 30.0
    base_delay: float = 0.1
    max_delay: float = 5.0

    def delay(self, attempt: int, error: StoreError) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        backoff = random.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))
        return max(backoff, error.retry_after or 0.0)


#: What a retry loop catches and hands to ``Attempts.after``.
FAILURES: tuple[type[BaseException], ...] = (
    UnicodeEncodeError,
    httpx.InvalidURL,
    httpx.TransportError,
    StoreError,
)


class Attempts:
    """Decides, after each failure, whether and how long to wait before the next attempt."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.failures = 0
        self.started = time.monotonic()

    def after(self, exc: BaseException, *, final: bool = False) -> float:
        """The wait before the next attempt after ``exc`` (a failure every retry loop of
        the client catches); raises the error to give the caller when there is none, or
        at once when the caller says the failure is ``final``."""
        if isinstance(exc, UnicodeEncodeError):
            raise unencodable_text(exc) from None
        if isinstance(exc, httpx.InvalidURL):
            raise unsendable(exc) from None
        error = transport_error(exc) if isinstance(exc, httpx.TransportError) else exc
        if not isinstance(error, StoreError):
            raise exc
        delay = None if final else self.next_delay(error)
        if delay is None:
            if error is exc:
                raise error
            raise error from exc
        return delay

    def next_delay(self, error: StoreError) -> float | None:
        """The wait before the next attempt, or ``None`` when ``error`` must be raised."""
        if not isinstance(error, UnavailableError):
            return None
        self.failures += 1
        if self.failures > self.policy.retries:
            return None
        delay = self.policy.delay(self.failures, error)
        if time.monotonic() - self.started + delay > self.policy.deadline:
            return None
        return delay


def unencodable_text(exc: UnicodeEncodeError) -> InvalidArgumentError:
    """A lone surrogate cannot travel as UTF-8: refused here as the store refuses it (2.6)."""
    return InvalidArgumentError(
        f"a string holds a lone surrogate ({exc.object[exc.start : exc.end]!r}); "
        "text must be valid Unicode"
    )


def unsendable(exc: httpx.InvalidURL) -> InvalidArgumentError:
    """An argument that cannot form a URL (e.g. a cursor too long for a query string)."""
    return InvalidArgumentError(f"the request cannot be sent: {exc}")


def transport_error(exc: httpx.TransportError) -> UnavailableError:
    """A connection that was refused, reset or timed out: transient."""
    return UnavailableError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
