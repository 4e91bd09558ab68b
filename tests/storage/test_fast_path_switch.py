"""``RUNTIME_STORE_PG_FAST_PATH=off``: a served PostgreSQL store never calls the fast path.

PostgreSQL counts the calls of each PL/pgSQL function when ``track_functions`` is ``pl``
(set for the service's connections through libpq's ``PGOPTIONS``); the counts must not move
while a service with the switch off serves every kind of fast-path write, and must move
when an in-process store with it on does one (so the measurement can see a call).
"""

from __future__ import annotations

import time
from pathlib import Path

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

TRACKED = "-c track_functions=pl"


def _calls(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT funcname, calls FROM pg_stat_user_functions WHERE funcname = ANY(:n)"),
            {"n": [function.name for function in FUNCTIONS]},
        ).all()
    return {row.funcname: row.calls for row in rows}


def _settled(
    engine: Engine, before: dict[str, int], *, moved: bool, seconds: float
) -> dict[str, int]:
    """The counts once the backends have reported (on their exit, and at most every second
    while they run): as soon as they moved, or after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        now = _calls(engine)
        if (now != before) == moved or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


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
    before = _calls(postgres_engine)
    server = start_server(
        postgres_url,
        tmp_path / "server.log",
        env={"RUNTIME_STORE_PG_FAST_PATH": "off", "PGOPTIONS": TRACKED},
    )
    try:
        with HttpStore(server.base_url) as store:
            _workload(store)
    finally:
        stop_server(server)
    after_off = _settled(postgres_engine, before, moved=True, seconds=5)
    assert after_off == before

    tracked = create_engine(postgres_url, connect_args={"options": TRACKED})
    try:
        _workload(SqlStore(tracked))
    finally:
        tracked.dispose()
    # A busy machine may take its time to end the disposed connections' backends.
    after_on = _settled(postgres_engine, after_off, moved=True, seconds=60)
    assert {name for name, calls in after_on.items() if calls > after_off.get(name, 0)} == {
        function.name for function in FUNCTIONS
    }
