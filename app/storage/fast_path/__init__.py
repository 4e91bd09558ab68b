"""PostgreSQL's fast path: the common writes answered by one SQL function call.

An optimisation of the Python path, never a second home of a rule. Each function here
takes the lock the Python path takes, reads what the Python path reads, and either writes
exactly what the Python path would write for the *common* case (a new record on a running
run, its exact retry, a new run in an active session, a terminal write) or writes nothing
and answers ``refused``; the store then runs the ordinary transaction, which decides with
the rules of ``app/domain`` and raises the contract's error. Values a rule computes (the
run's labels as stored, the cancellation reasons a ``run_completed`` accepts) are computed
in Python and passed in: the SQL only compares.

* Each version of each function is one file, ``sql/<name>/<revision>.sql``, which the
  migration ``<revision>`` executes by name and nothing edits afterwards (sources.py);
  ``tests/storage/test_fast_path_source.py`` fails until the versions, the migrations and
  the functions of a migrated database agree.
* ``RUNTIME_STORE_PG_FAST_PATH=off`` (``SqlStore(fast_path=False)``) sends every write
  through the Python path; the contract suite runs that way as a backend of its own, and
  ``tests/storage/test_fast_path_differential.py`` runs random operation sequences both
  ways and compares every answer and every row.
* Concurrent single appends are combined into one call (group_commit.py), one statement for
  a whole group.
"""

from app.storage.fast_path import sources
from app.storage.fast_path.calls import (
    FUNCTIONS,
    Outcome,
    SqlFunction,
    StartResults,
    append_group,
    append_many,
    append_one,
    finish_run,
    many_params,
    start_run,
)

__all__ = [
    "FUNCTIONS",
    "Outcome",
    "SqlFunction",
    "StartResults",
    "append_group",
    "append_many",
    "append_one",
    "finish_run",
    "many_params",
    "sources",
    "start_run",
]
