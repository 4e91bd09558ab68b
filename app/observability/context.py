"""What the request in flight has told so far, for log lines and metrics.

The request-ID middleware sets ``REQUEST_ID``; the observing middleware sets ``EXCHANGE``.
Both are context variables, so every log line written while a request is served carries
its ID, on the event loop and on the database threads alike (``StoreCalls`` runs each call in
a copy of the caller's context).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

#: The ID of the request being served ("" outside any request).
REQUEST_ID: ContextVar[str] = ContextVar("runtime_store_request_id", default="")

INSERTED = "inserted"
EXACT_RETRY = "exact_retry"


@dataclass
class Exchange:
    """One request in flight: what the API answered besides its status."""

    #: Outcome (``inserted``, ``exact_retry`` or a problem code) -> how many.
    outcomes: dict[str, int] = field(default_factory=dict)
    #: The problem code of the response, if it was a problem.
    code: str = ""

    def add(self, outcome: str, count: int = 1) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + count


EXCHANGE: ContextVar[Exchange | None] = ContextVar("runtime_store_exchange", default=None)


def note_record(inserted: bool) -> None:
    """A record result was rendered: newly stored, or an exact retry of a stored one."""
    exchange = EXCHANGE.get()
    if exchange is not None:
        exchange.add(INSERTED if inserted else EXACT_RETRY)


def note_problem(code: str) -> None:
    """A problem response with ``code`` was rendered."""
    exchange = EXCHANGE.get()
    if exchange is not None:
        exchange.code = code
        exchange.add(code)
