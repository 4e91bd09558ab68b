"""The SQL storage layer: the only code that knows SQL."""

from .engine import create_engine
from .migrate import upgrade_schema
from .store import SqlStore

__all__ = ["SqlStore", "create_engine", "upgrade_schema"]
