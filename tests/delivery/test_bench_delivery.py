"""The delivery part of the bench (``python -m bench --parts delivery``) at tiny scale on
each database: every wait it times was answered by the finish (not at its timeout), and
the outbox rows it counts are the contract's (13.2): appends write none, a terminal
write one event only when ``run.finished`` is subscribed. Never any timing asserted."""

from __future__ import annotations

import re

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from bench.delivery import (
    CASES,
    PYTHON_PATH,
    delivery_targets,
    measure_outbox,
    measure_wait,
    outbox_table,
    wait_rows,
)
from bench.workloads import Database
from tests.conftest import LiveServer, wipe

CALLS = 4


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest) -> tuple[str, LiveServer, Engine]:
    name: str = request.param
    server: LiveServer = request.getfixturevalue(f"{name}_server")
    engine: Engine = request.getfixturevalue(f"{name}_engine")
    wipe(engine)  # no subscription of another test counts here
    return name, server, engine


def test_the_waits_it_times_are_answered_by_the_finish(
    live: tuple[str, LiveServer, Engine],
) -> None:
    name, server, _ = live
    samples = measure_wait(server.base_url, waits=3, warmup=1)  # raises on a timed-out wait
    assert len(samples.before_terminal) == len(samples.after_terminal) == 3
    rows = wait_rows(name, samples)
    assert [row.ops for row in rows] == [3, 3]
    judged = delivery_targets(rows)
    assert len(judged) == (1 if name == "postgres" else 0)


def test_the_outbox_rows_it_counts_are_the_contracts(
    live: tuple[str, LiveServer, Engine],
) -> None:
    name, _, engine = live
    db = Database(name, str(engine.url), engine, SqlStore(engine), list_records=1)
    found = measure_outbox(db, calls=CALLS, rounds=1)
    cases = [case for case, _ in CASES] + ([PYTHON_PATH] if name == "postgres" else [])
    assert list(found) == cases
    for case, samples in found.items():
        assert len(samples.append) == len(samples.terminal) == CALLS
        assert samples.append_events == 0, case
        assert samples.terminal_events == (CALLS if case == "run.finished subscribed" else 0)
    rows = outbox_table(name, found)
    assert len(rows) == 2 * len(cases)
    for row in rows:
        counted = re.search(r"(\d+) outbox events for (\d+) calls", row.note)
        assert counted is not None
    # The subscriptions it made are gone: the next part measures without them.
    assert SqlStore(engine).list_webhooks() == []
