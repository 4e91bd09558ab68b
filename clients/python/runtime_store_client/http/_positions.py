"""Read-your-writes with read replicas: the client keeps the highest write position it
has seen and sends it with its reads.

A service with read replicas answers every successful write with ``Runtime-Store-Position``
(the primary's WAL position after the commit). This client remembers the highest one and
sends it as ``Runtime-Store-Min-Position`` on every read, so a read is served only by a
database that already holds every write this client made, whichever replica or service
instance answers. Without replicas the service sends no position and nothing is sent.
Positions are PostgreSQL's LSN text (``16/B374D848``), compared as numbers.
"""

from __future__ import annotations

import threading
from typing import Final

import httpx

POSITION_HEADER: Final = "Runtime-Store-Position"
MIN_POSITION_HEADER: Final = "Runtime-Store-Min-Position"
_READS: Final = frozenset({"GET", "HEAD"})


def _as_number(text: str) -> int | None:
    high, slash, low = text.strip().partition("/")
    try:
        return (int(high, 16) << 32) | int(low, 16) if slash else None
    except ValueError:
        return None


class Positions:
    """The highest position one store has seen; its httpx hooks (thread-safe)."""

    def __init__(self, start: str | None = None) -> None:
        self._lock = threading.Lock()
        self._number = 0
        self._text: str | None = None
        if start:
            self.observe(start)

    @property
    def current(self) -> str | None:
        """The highest position seen, as the service spelled it; ``None`` before any."""
        return self._text

    def observe(self, text: str) -> None:
        """Keep ``text`` if it is past the highest position seen."""
        number = _as_number(text)
        if number is None:
            return
        with self._lock:
            if number > self._number:
                self._number, self._text = number, text.strip()

    def on_request(self, request: httpx.Request) -> None:
        if self._text is not None and request.method in _READS:
            request.headers[MIN_POSITION_HEADER] = self._text

    def on_response(self, response: httpx.Response) -> None:
        value = response.headers.get(POSITION_HEADER)
        if value is not None:
            self.observe(value)

    async def on_request_async(self, request: httpx.Request) -> None:
        self.on_request(request)

    async def on_response_async(self, response: httpx.Response) -> None:
        self.on_response(response)
