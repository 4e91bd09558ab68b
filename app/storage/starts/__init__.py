"""The four engine starts (CONTRACT.md 3.3-3.6, with request digests: 12.1), the
synchronous start (12.2) and continuation admission (3.13, 12.4).

Each start validates its input without state. On PostgreSQL a new engine run without a
request digest in an active session (or none) is then one statement
(``fast_path.start_run``, migration 0012) that refuses anything else. Otherwise, in one
transaction, a start takes the lock that serialises it (the session's row for a sessionful
start, the parent's row for a one-shot child), checks purge, answers an existing run ID as
a retry (the request digest first, then the kind, then identity and remembered keys; the
records go through the append check, or, for a closed run replayed with its digest, are
compared but for their times), checks the continuation, and otherwise creates the run,
``proceed`` in an active session and ``stop`` in an ended one.
"""

from app.storage.starts.sessionful import start_child_run, start_root_run
from app.storage.starts.sessionless import (
    start_one_shot_child_run,
    start_one_shot_run,
    start_synchronous_run,
)

__all__ = [
    "start_child_run",
    "start_one_shot_child_run",
    "start_one_shot_run",
    "start_root_run",
    "start_synchronous_run",
]
