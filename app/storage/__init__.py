"""The SQL storage layer: the only code that knows SQL (docs/architecture.md).

This package is its facade: every other layer imports storage from here, never from a
module inside it (``lint-imports``), except the CLI's database commands.
"""

from sqlalchemy.engine import Engine

from .claims import ImportSweeper, sweep_abandoned_imports
from .engine import create_async_engine, create_engine, database_backend
from .failures import is_transient
from .interrupts import Canceler, calling, reads_of
from .migrate import readiness, upgrade_schema
from .notifications import Notifications, Subscription
from .records import StreamPage
from .replicas import (
    CONNECT_TIMEOUT_SECONDS as REPLICA_CONNECT_TIMEOUT_SECONDS,
)
from .replicas import (
    RequestPositions,
    format_position,
    parse_position,
    request_positions,
)
from .replicas import (
    current as current_positions,
)
from .retention import Sweep
from .store import SqlStore
from .tokens import Tokens
from .transfer import FORMAT as EXPORT_FORMAT
from .transfer import encode_line as encode_export_line
from .waiting import greenlet_spawn
from .webhooks import Claimed, WebhookConfig

__all__ = [
    "EXPORT_FORMAT",
    "Engine",
    "Canceler",
    "Claimed",
    "ImportSweeper",
    "REPLICA_CONNECT_TIMEOUT_SECONDS",
    "Notifications",
    "RequestPositions",
    "SqlStore",
    "StreamPage",
    "Subscription",
    "Sweep",
    "Tokens",
    "WebhookConfig",
    "calling",
    "create_async_engine",
    "create_engine",
    "greenlet_spawn",
    "current_positions",
    "database_backend",
    "encode_export_line",
    "format_position",
    "is_transient",
    "parse_position",
    "readiness",
    "reads_of",
    "request_positions",
    "sweep_abandoned_imports",
    "upgrade_schema",
]
