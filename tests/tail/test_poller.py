"""SQLite's poller keeps polling after a failed poll (``app/storage/live_tail/poller.py``)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from app.storage.live_tail.poller import Poller


class Woken:
    """A hub of one subscriber that notes what woke it."""

    streams = 1
    idle_since = 0.0

    def __init__(self) -> None:
        self.changes: list[tuple[str, str]] = []
        self.everyone = 0

    def wake(self, changes: Iterable[tuple[str, str]]) -> None:
        self.changes.extend(changes)

    def wake_all(self) -> None:
        self.everyone += 1


def test_a_failed_poll_is_retried_and_later_commits_still_wake_their_runs(tmp_path: Path) -> None:
    """A poll that fails after its connection was made (here: the table is not there yet)
    closes that connection on the poll's own thread and polls again; it used to close it
    on the event loop's thread, which sqlite3 refuses, and the poll task died."""
    database = tmp_path / "store.db"
    sqlite3.connect(database).close()  # a file without run_records: every poll fails
    hub = Woken()

    async def scenario() -> None:
        task = asyncio.create_task(Poller(str(database), poll_seconds=0.01).run(hub))
        await asyncio.sleep(0.1)  # several failed polls
        assert not task.done(), task.exception() if task.done() else None
        with sqlite3.connect(database) as conn:
            conn.execute("CREATE TABLE run_records (session_id TEXT, run_id TEXT)")
        await asyncio.sleep(0.1)  # a poll now connects and learns where the log ends
        with sqlite3.connect(database) as conn:
            conn.execute("INSERT INTO run_records VALUES ('s1', 'r1')")
        for _ in range(200):
            if hub.changes:
                break
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(scenario())
    assert hub.changes == [("s1", "r1")]
