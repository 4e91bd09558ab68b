"""The SQL storage layer: the only code that knows SQL (docs/architecture.md)."""

from .engine import create_engine
from .migrate import upgrade_schema
from .notifications import Notifications, Subscription
from .store import SqlStore
from .unit_of_work import is_transient

__all__ = [
    "Notifications",
    "SqlStore",
    "Subscription",
    "create_engine",
    "is_transient",
    "upgrade_schema",
]
