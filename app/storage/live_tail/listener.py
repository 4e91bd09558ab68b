"""PostgreSQL's wake-up source: one ``LISTEN`` connection per worker, while it has streams.

Triggers (migration 0008) send a ``NOTIFY`` per (session, run) from the writing
transaction, so every listening replica hears every commit, after it is visible. On a
(re)connect every subscriber is woken (notifications may have been missed meanwhile). A
worker with no stream does not listen (every commit would otherwise wake every worker's
event loop, about 0.08 ms of CPU per append per worker, docs/performance.md): the first
subscriber starts the listener and waits until it listens (``ready``) before its first
read, so no commit falls between the two; the listener stops ``idle_seconds`` after the
last stream ended.

After a failover (CONTRACT.md 16) the listener follows the primary: its connection breaks
(or, on a server that froze, stops answering its probe every ``PROBE_SECONDS``, or finds
itself on a standby), it reconnects through the URL's hosts to the one that accepts
writes, and every subscriber is woken to read from its cursor: nothing skipped or repeated.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, Final

import psycopg
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import Engine

from app.awaiting import first_of
from app.storage.database.engines import CONNECT_TIMEOUT_SECONDS
from app.storage.database.server_probes import sever_connection
from app.storage.live_tail.wakeup_source import Hub

log = logging.getLogger("runtime_store.tail")

CHANNEL: Final = "runtime_store_records"
#: The listener connection's ``application_name`` (``pg_stat_activity``), with the pid of
#: its worker.
LISTENER_NAME: Final = "runtime-store live tail {pid}"
_SEPARATOR: Final = "\x1f"
_MAX_BACKOFF: Final = 5.0
#: Seconds between two probes of the listening connection while no notification came.
PROBE_SECONDS: Final = 2.0
#: Longest a probe may go unanswered before the server counts as gone.
PROBE_TIMEOUT_SECONDS: Final = 2.0


class _Lost(Exception):
    """The listening connection's server stopped answering, or no longer takes writes."""


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
        """The engine's connection parameters as libpq reads them: every host of a
        multi-host URL, ``target_session_attrs`` and a connect timeout."""
        _, params = self._engine.dialect.create_connect_args(self._engine.url)
        params.setdefault("connect_timeout", CONNECT_TIMEOUT_SECONDS)
        # Only libpq's options: the dialect adds psycopg's own (``context``).
        options = {k: v for k, v in params.items() if isinstance(v, str | int)}
        return make_conninfo("", **options)

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
                    probed = asyncio.get_running_loop().time()
                    while not self._idle(hub):
                        async for note in conn.notifies(timeout=check):
                            session_id, _, run_id = note.payload.partition(_SEPARATOR)
                            hub.wake(((session_id, run_id),))
                        now = asyncio.get_running_loop().time()
                        if now - probed >= PROBE_SECONDS:
                            await _probe(conn)
                            probed = now
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


async def _probe(conn: psycopg.AsyncConnection[Any]) -> None:
    """Raise ``_Lost`` unless the connection's server answers within
    ``PROBE_TIMEOUT_SECONDS`` and still takes writes: a frozen server keeps a TCP
    connection open (its kernel answers), and a demoted one would never notify again."""
    probe = asyncio.ensure_future(conn.execute("SELECT pg_is_in_recovery()"))
    done, _ = await asyncio.wait({probe}, timeout=PROBE_TIMEOUT_SECONDS)
    if not done:
        # Not cancelled (psycopg would send a cancel request to a server that does not
        # answer, and wait): the socket is cut, so the probe fails at once.
        sever_connection(conn)
        await asyncio.wait({probe}, timeout=PROBE_TIMEOUT_SECONDS)
        if probe.done() and not probe.cancelled():
            probe.exception()  # seen: no "never retrieved" warning
        raise _Lost("the database did not answer the listener's probe")
    row = await (await probe).fetchone()
    if row is None or row[0]:
        raise _Lost("the database the listener is on no longer takes writes")
