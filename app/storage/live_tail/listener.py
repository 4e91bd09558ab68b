"""PostgreSQL's wake-up source: one ``LISTEN`` connection per worker, while it has streams.

Triggers (migration 0008) send a ``NOTIFY`` per (session, run) from the writing
transaction, so every listening replica hears every commit, after it is visible. On a
(re)connect every subscriber is woken (notifications may have been missed meanwhile). A
worker with no stream does not listen (every commit would otherwise wake every worker's
event loop, about 0.08 ms of CPU per append per worker, docs/performance.md): the first
subscriber starts the listener and waits until it listens (``ready``) before its first
read, so no commit falls between the two; the listener stops ``idle_seconds`` after the
last stream ended.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Final

import psycopg
from sqlalchemy.engine import Engine

from app.awaiting import first_of
from app.storage.live_tail.wakeup_source import Hub

log = logging.getLogger("runtime_store.tail")

CHANNEL: Final = "runtime_store_records"
#: The listener connection's ``application_name`` (``pg_stat_activity``), with the pid of
#: its worker.
LISTENER_NAME: Final = "runtime-store live tail {pid}"
_SEPARATOR: Final = "\x1f"
_MAX_BACKOFF: Final = 5.0


class Listener:
    """``LISTEN`` while the worker has streams; a ``WakeUpSource``."""

    name = "tail-listener"

    def __init__(self, engine: Engine, *, idle_seconds: float) -> None:
        self._engine = engine
        self._idle_seconds = idle_seconds
        #: Set while a stream wants the listener, and while it listens.
        self._wanted = asyncio.Event()
        self._listening = asyncio.Event()
        #: Set while the last connection attempt has failed: a stream then reads at once
        #: (its first read meets the same database; its safety re-reads cover the rest)
        #: instead of waiting for a listener that cannot start.
        self._failing = asyncio.Event()

    def wanted(self) -> None:
        self._wanted.set()

    async def ready(self, timeout: float) -> None:
        """Until listening, or the last attempt failed, at most ``timeout`` seconds (a
        database that does not answer: the stream's safety re-reads cover it)."""
        if self._listening.is_set() or self._failing.is_set():
            return
        # Cancelled and awaited however this ends (a waiting request may be cancelled).
        await first_of(timeout, self._listening.wait(), self._failing.wait())

    def _conninfo(self) -> str:
        url = self._engine.url.set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    def _idle(self, hub: Hub) -> bool:
        """No stream for ``idle_seconds``: the listener may stop. Checked and acted on with
        no ``await`` in between, so a new subscriber either kept it or sees it stopped."""
        now = asyncio.get_running_loop().time()
        if hub.streams or now - hub.idle_since < self._idle_seconds:
            return False
        self._listening.clear()
        self._failing.clear()  # the next stream waits for a fresh attempt
        self._wanted.clear()
        return True

    async def run(self, hub: Hub) -> None:
        backoff = 0.05
        check = min(1.0, self._idle_seconds)
        while True:
            await self._wanted.wait()
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._conninfo(),
                    autocommit=True,
                    application_name=LISTENER_NAME.format(pid=os.getpid()),
                    # A silently dead server is noticed, so the listener reconnects.
                    keepalives=1,
                    keepalives_idle=10,
                    keepalives_interval=5,
                    keepalives_count=3,
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    backoff = 0.05
                    self._failing.clear()
                    self._listening.set()
                    hub.wake_all()  # what committed while nobody listened
                    while not self._idle(hub):
                        async for note in conn.notifies(timeout=check):
                            session_id, _, run_id = note.payload.partition(_SEPARATOR)
                            hub.wake(((session_id, run_id),))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure: reconnect, never die
                self._listening.clear()
                self._failing.set()
                log.warning("live-tail listener lost its connection (%s); reconnecting", exc)
                hub.wake_all()
                self._idle(hub)  # nobody left to listen for: wait for a stream, not the server
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF)
