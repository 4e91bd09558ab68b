"""What a wake-up source and its worker's hub see of each other."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Hub(Protocol):
    """What a source sees of its worker's subscribers."""

    @property
    def streams(self) -> int:
        """Streams subscribed now."""
        ...

    @property
    def idle_since(self) -> float:
        """Event-loop time when the last stream ended."""
        ...

    def wake(self, changes: Iterable[tuple[str, str]]) -> None:
        """Wake the subscribers of (session_id, run_id) pairs; run "" means a purge."""
        ...

    def wake_all(self) -> None:
        """Wake every subscriber (what committed is not known)."""
        ...


class WakeUpSource(Protocol):
    """One worker's source of wake-ups for commits it did not make itself."""

    #: The name of its task.
    name: str

    async def run(self, hub: Hub) -> None:
        """Wake ``hub``'s subscribers as commits arrive, until cancelled."""
        ...

    def wanted(self) -> None:
        """A stream subscribed: the source must hear commits from now on."""
        ...

    async def ready(self, timeout: float) -> None:
        """Until the source hears every commit from now on, at most ``timeout`` seconds.
        A subscriber awaits it between subscribing and its first read."""
        ...
