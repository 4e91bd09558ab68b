"""Pages of the live tail read once and rendered once, shared by the subscribers of one
list at one cursor (``SharedReads``: single flight)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from fastapi import Request
from sse_starlette import ServerSentEvent

from app.api.schemas.records import RecordBody
from app.api.store_calls import StoreCalls
from app.storage import Notifications, StreamPage
from runtime_store_client import (
    LifecycleRecordType,
)

#: The record type only a run's final status writes (CONTRACT.md 1.7, 3.3, 3.10).
_FINAL_TYPE: Final = LifecycleRecordType.RUN_COMPLETED.value


@dataclass(frozen=True)
class Chunk:
    """A page as encoded events, with the cursor after the last one."""

    events: list[bytes]
    cursor: str
    more: bool
    #: The run's final status when the page ends with its ``run_completed`` record.
    final: str | None = None


def render(page: StreamPage, cursor: str, *, run_stream: bool) -> Chunk:
    """Encode a page's records as events (on a database thread: it costs CPU)."""
    events: list[bytes] = []
    final = None
    for record, after in zip(page.records, page.cursors, strict=True):
        data = RecordBody.of(record).model_dump_json()
        events.append(ServerSentEvent(data=data, event="record", id=after).encode())
        if run_stream and record.type == _FINAL_TYPE:
            final = str(json.loads(record.payload).get("phase", ""))
            break  # nothing follows it
    return Chunk(events, page.cursors[-1] if page.cursors else cursor, page.more, final)


class SharedReads:
    """Single-flight reads of one list at one cursor, per worker.

    A subscriber joins a read in flight only if it started at or after the wake-up
    generation the subscriber needs (``Subscription.wait``): a read begun before the
    commit that woke it might not see that commit.
    """

    def __init__(self, hub: Notifications, calls: StoreCalls) -> None:
        self._hub = hub
        self._offload = calls
        self._inflight: dict[tuple[str, str, str], tuple[int, asyncio.Future[Chunk]]] = {}

    async def read(self, key: tuple[str, str, str], need: int, read: Callable[[], Chunk]) -> Chunk:
        entry = self._inflight.get(key)
        if entry is None or entry[0] < need:
            future = asyncio.ensure_future(self._offload.unbound(read))
            entry = (self._hub.generation, future)
            self._inflight[key] = entry
            future.add_done_callback(lambda _: self._forget(key, entry))
        return await asyncio.shield(entry[1])

    def _forget(self, key: tuple[str, str, str], entry: tuple[int, asyncio.Future[Chunk]]) -> None:
        if self._inflight.get(key) is entry:
            del self._inflight[key]
        future = entry[1]
        if not future.cancelled():
            future.exception()  # retrieved: its awaiters may all have gone


def shared_reads(request: Request) -> SharedReads:
    """The worker's shared reads (made by the app's lifespan with its notifications)."""
    shared: SharedReads = request.app.state.tail_reads
    return shared
