"""The SQL storage layer: the only code that knows SQL (docs/architecture.md).

This package is its facade: every other layer imports storage from here, never from a
module inside it (``lint-imports``), except the CLI's database commands.
"""

from sqlalchemy.engine import Engine

from app.storage.access.tokens import Tokens
from app.storage.database.dialects import Exclusive
from app.storage.database.engines import create_async_engine, create_engine, database_backend
from app.storage.database.failures import is_transient
from app.storage.database.migrations import readiness, upgrade_schema
from app.storage.database.positions import (
    RequestPositions,
    format_position,
    parse_position,
    request_positions,
)
from app.storage.database.positions import current as current_positions
from app.storage.database.read_deadlines import Canceler, calling, reads_of
from app.storage.database.replicas import CONNECT_TIMEOUT_SECONDS as REPLICA_CONNECT_TIMEOUT_SECONDS
from app.storage.database.waiting import greenlet_spawn
from app.storage.live_tail.notifications import Notifications, Subscription
from app.storage.records.pages import StreamPage
from app.storage.retention import Sweep
from app.storage.store import SqlStore
from app.storage.transfer import FORMAT as EXPORT_FORMAT
from app.storage.transfer import encode_line as encode_export_line
from app.storage.unit_of_work.import_holds import ImportSweeper, sweep_abandoned_imports
from app.storage.webhooks.delivery_claims import Claimed
from app.storage.webhooks.subscriptions import WebhookConfig

__all__ = [
    "EXPORT_FORMAT",
    "Exclusive",
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
