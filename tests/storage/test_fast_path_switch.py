"""``RUNTIME_STORE_PG_FAST_PATH=off``: a served PostgreSQL store never calls the fast path.

The proof hides the fast path's functions (renamed for the length of the test): a service
with the switch off must serve every kind of fast-path write without them, while an
in-process store with the switch on must fail on the first of them (so the hiding is seen).
Renaming rather than counting calls: PostgreSQL's function statistics are flushed late and
lost when the server restarts after a crash, so a count could miss a call or lose one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine
from app.storage.fast_path import FUNCTIONS
from runtime_store_client import HttpStore, RunStatus
from tests.conftest import start_server, stop_server, wipe
from tests.contract.builders import (
    canceled_record,
    link_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    terminal_record,
)

HIDDEN = "_hidden_by_test"


@contextmanager
def _hidden(engine: Engine, names: list[str]) -> Iterator[None]:
    def rename(old: str, new: str) -> None:
        with engine.begin() as conn:
            for name in names:
                conn.exec_driver_sql(f"ALTER FUNCTION {name}{old} RENAME TO {name}{new}")

    rename("", HIDDEN)
    try:
        yield
    finally:
        rename(HIDDEN, "")


def _workload(store: HttpStore | SqlStore) -> None:
    parent = start_root(store, new_session(store).id).run
    store.append_run_record(record(parent, event_key="a"))
    store.append_run_records(parent.run_id, [record(parent, event_key=f"b{i}") for i in range(3)])
    child = run_start(session_id=parent.session_id, parent_run_id=parent.run_id)
    store.start_child_run(
        child,
        link_record(parent, child),
        started_record(child),
        canceled_record(child),
    )
    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )


def test_a_service_with_the_fast_path_off_never_calls_its_functions(
    postgres_url: str, postgres_engine: Engine, tmp_path: Path
) -> None:
    wipe(postgres_engine)
    with _hidden(postgres_engine, [function.name for function in FUNCTIONS]):
        server = start_server(
            postgres_url, tmp_path / "server.log", env={"RUNTIME_STORE_PG_FAST_PATH": "off"}
        )
        try:
            with HttpStore(server.base_url) as store:
                _workload(store)
        finally:
            stop_server(server)
    with postgres_engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM runs")).scalar_one() == 3


@pytest.mark.parametrize("function", [function.name for function in FUNCTIONS])
def test_a_store_with_the_fast_path_on_calls_each_of_its_functions(
    postgres_url: str, postgres_engine: Engine, function: str
) -> None:
    """The counterpart that shows the hiding is seen: the same workload in process, with
    the switch on, fails when any one function is missing."""
    wipe(postgres_engine)
    fast = create_engine(postgres_url)
    try:
        with (
            _hidden(postgres_engine, [function]),
            pytest.raises(sa.exc.ProgrammingError, match=f"function {function}"),
        ):
            _workload(SqlStore(fast))
    finally:
        fast.dispose()
