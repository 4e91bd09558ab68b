"""Where a worker hears of commits, for the live tail: one wake-up source per dialect.

A source only says "read again" (``Hub.wake``); the streams read the log themselves. Each
worker's ``Notifications`` (``app.storage.live_tail.notifications``) runs the source its database
calls for:

* PostgreSQL (``listener.Listener``): the database tells every listening worker what each
  commit wrote (NOTIFY triggers, migration 0008), over one ``LISTEN`` connection held while
  the worker has streams.
* SQLite (``poller.Poller``): the store tells its own worker what each of its commits wrote
  (``SqlStore.watch_commits``, wired by the app); commits of other processes are found by
  polling ``PRAGMA data_version``.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from app.storage.database.dialects import dialect_of
from app.storage.live_tail.listener import Listener
from app.storage.live_tail.poller import Poller
from app.storage.live_tail.wakeup_source import Hub, WakeUpSource


def wake_up_source(engine: Engine, *, poll_seconds: float, idle_seconds: float) -> WakeUpSource:
    """The source for ``engine``'s database: its dialect says whether the database itself
    tells every worker what each commit wrote."""
    if dialect_of(engine).notifies_commits:
        return Listener(engine, idle_seconds=idle_seconds)
    return Poller(engine.url.database, poll_seconds=poll_seconds)


__all__ = ["Hub", "WakeUpSource", "wake_up_source"]
