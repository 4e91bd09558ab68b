"""The ``runtime-store`` command: serve, database administration, tokens, retention,
OpenAPI export, the configuration reference (docs/configuration.md), and the operator's
commands (``sessions``, ``runs``, ``webhooks``: app/operator_cli/).

Building the command tree (and ``--help``) imports only typer and a few small modules:
the settings, the storage layer (SQLAlchemy, Alembic), the app (FastAPI) and the client
package are imported by the commands that use them (tests/test_cli_imports.py).
"""

from __future__ import annotations

from . import config_reference, database, retention, serve, tokens
from .common import cli, main
from .serve import openapi_yaml

__all__ = [
    "cli",
    "config_reference",
    "database",
    "main",
    "openapi_yaml",
    "retention",
    "serve",
    "tokens",
]
