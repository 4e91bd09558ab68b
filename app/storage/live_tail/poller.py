"""SQLite's wake-up source: commits of other processes, found by polling.

This process's own commits wake their subscribers as they commit (``SqlStore.watch_commits``
into ``Notifications.committed``); another process writing the same file (a CLI import, a
second server) is noticed by a poll of ``PRAGMA data_version`` every ``poll_seconds`` on a
read-only connection of its own, then of the ``run_records`` rows added since the last poll.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from app.storage.live_tail.wakeup_source import Hub

log = logging.getLogger("runtime_store.tail")

#: Most rows one poll reads to learn which runs changed; beyond, everyone is woken.
_POLL_ROWS: Final = 10_000


class Poller:
    """Polls the SQLite file for other processes' commits; a ``WakeUpSource``."""

    name = "tail-poller"

    def __init__(self, database: str | None, *, poll_seconds: float) -> None:
        self._database = database
        self._poll_seconds = poll_seconds

    def wanted(self) -> None:
        """Always polling: a poll that finds nothing costs one pragma."""

    async def ready(self, timeout: float) -> None:
        """At once: the poll runs from the start, and this process's commits wake their
        subscribers as they commit."""

    async def run(self, hub: Hub) -> None:
        database = self._database
        if not database or database == ":memory:":
            return  # one process, one connection: its own commits wake everyone
        loop = asyncio.get_running_loop()
        # sqlite3 connections belong to the thread that made them: one thread for the poll.
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tail-poll")
        poller = _DataVersion(database)
        try:
            while True:
                try:
                    changes = await loop.run_in_executor(executor, poller.poll)
                except sqlite3.Error as exc:
                    log.warning("live-tail poll failed (%s); retrying", exc)
                    changes = None
                    # On the poll's thread: the connection belongs to it (closing it here
                    # raised, and the poll task died with it).
                    await loop.run_in_executor(executor, poller.close)
                    poller = _DataVersion(database)
                if isinstance(changes, set):
                    hub.wake(changes)
                elif changes == "all":
                    hub.wake_all()
                await asyncio.sleep(self._poll_seconds)
        finally:
            executor.submit(poller.close)
            executor.shutdown(wait=False)


class _DataVersion:
    """Finds the runs whose records other connections committed since the last poll."""

    def __init__(self, database: str) -> None:
        self._database = database
        self._conn: sqlite3.Connection | None = None
        self._version = -1
        self._last_rowid = 0

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(
                f"file:{self._database}?mode=ro", uri=True, isolation_level=None
            )
            self._version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            self._last_rowid = self._conn.execute(
                "SELECT coalesce(max(rowid), 0) FROM run_records"
            ).fetchone()[0]
        return self._conn

    def poll(self) -> set[tuple[str, str]] | str | None:
        """The (session, run) pairs with new records, ``"all"`` when too many to read,
        ``None`` when nothing committed."""
        conn = self._connect()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return None
        self._version = version
        conn.execute("BEGIN")
        try:
            rows = conn.execute(
                "SELECT rowid, coalesce(session_id, ''), run_id FROM run_records "
                "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (self._last_rowid, _POLL_ROWS + 1),
            ).fetchall()
            top = conn.execute("SELECT coalesce(max(rowid), 0) FROM run_records").fetchone()[0]
        finally:
            conn.execute("COMMIT")
        # Purges delete rows, and a new row may then reuse a rowid at or below the last
        # one seen: when the top went down, everyone reads again.
        went_down = top < self._last_rowid
        self._last_rowid = top
        if went_down or len(rows) > _POLL_ROWS:
            return "all"
        return {(session_id, run_id) for _, session_id, run_id in rows}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
