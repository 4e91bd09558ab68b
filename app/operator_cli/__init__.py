"""``runtime-store sessions …``, ``runs …``, ``webhooks …`` and ``whoami``: the operator's commands.

They talk to a running service with the real client (``HttpStore``), never to the
database: ``--url``/``RUNTIME_STORE_URL`` and ``--token``/``RUNTIME_STORE_TOKEN``. Lists
print a table on a terminal (``rich``) or JSON lines with ``--json``, one page by default
(the next page's cursor on stderr) or every page with ``--all``. Times are RFC 3339 or an
age such as ``90s``, ``15m``, ``1h``, ``7d`` (that long before now). Every failure is one
line on stderr and a non-zero exit: 1 for an answer of the service (not found, conflict,
refused token), 2 for a bad command line, 3 when the service cannot be reached.
"""

from . import runs, sessions, webhooks
from .common import (
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    RunStatusOption,
    SessionStatusOption,
    parse_when,
    print_table,
    progress_bar,
    runs_cli,
    sessions_cli,
    webhooks_cli,
)
from .whoami import whoami

__all__ = [
    "EXIT_REFUSED",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "RunStatusOption",
    "SessionStatusOption",
    "parse_when",
    "print_table",
    "progress_bar",
    "runs",
    "runs_cli",
    "sessions",
    "sessions_cli",
    "webhooks",
    "webhooks_cli",
    "whoami",
]
