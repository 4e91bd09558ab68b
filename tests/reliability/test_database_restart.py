"""Database connections cut under load: 503 meanwhile, recovery without a restart.

The cluster is shared with other test runs, so it is never restarted: every connection of
the test's own database is ended with ``pg_terminate_backend``. For a deterministic outage
the replicas log in as a dedicated non-superuser role and ``CONNECT`` is revoked from
PUBLIC while the backends are terminated (then granted back), so no new connection can
be made: ``/readyz`` must answer 503, a write must answer ``503 unavailable``, and both
must recover by themselves once connections are allowed again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from threading import Event

import pytest

from runtime_store_client import HttpStore, SessionNotFoundError, UnavailableError
from tests.contract.builders import T0

from .cluster import Database, Replica, replicas, service_role
from .load import LoadShape, Unexpected, check_load, figures, run_load, seed_from_environment

SEED = seed_from_environment(3)
#: (seconds after the load starts, what happens, how long an outage holds)
SCHEDULE = (
    (1.5, "terminate", 0.0),
    (3.5, "outage", 2.0),
    (8.0, "terminate", 0.0),
    (9.5, "terminate", 0.0),
    (11.0, "outage", 1.5),
    (15.0, "terminate", 0.0),
)


@dataclass
class Disruptions:
    terminations: int = 0  # rounds of pg_terminate_backend over the database
    backends_terminated: int = 0
    outages: int = 0
    readyz_unavailable: int = 0  # replicas seen answering 503 on /readyz in an outage
    readyz_recovered: int = 0  # replicas seen answering 200 again afterwards
    writes_unavailable: int = 0  # probe writes answered 503 unavailable in an outage
    probe_sessions: list[str] = field(default_factory=list)


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def terminate(database: Database, seen: Disruptions) -> None:
    """One round of ``pg_terminate_backend`` over the test's database."""
    seen.terminations += 1
    seen.backends_terminated += database.terminate_connections()


def probe_write(cluster: Sequence[Replica], seen: Disruptions) -> None:
    """A session creation in an outage must answer ``503 unavailable``."""
    probe = f"probe-{seen.outages}"
    seen.probe_sessions.append(probe)
    with HttpStore(cluster[0].base_url, retries=0) as store:
        try:
            store.create_session(probe, T0)
        except UnavailableError as exc:
            if exc.status != 503:
                raise Unexpected(f"an outage write answered {exc.status}") from exc
            seen.writes_unavailable += 1
        else:
            raise Unexpected("a write succeeded while no connection could be made")


def outage(database: Database, cluster: Sequence[Replica], seen: Disruptions, hold: float) -> None:
    """No connection can be made for ``hold`` seconds: /readyz and writes answer 503, then
    /readyz answers 200 again once connections are allowed."""
    seen.outages += 1
    database.allow_connections(False)
    try:
        terminate(database, seen)
        if not wait_until(lambda: all(r.ready() == 503 for r in cluster), 10):
            raise Unexpected("/readyz kept answering 200 while no connection could be made")
        seen.readyz_unavailable += len(cluster)
        probe_write(cluster, seen)
        time.sleep(hold)
    finally:
        database.allow_connections(True)
    if not wait_until(lambda: all(r.ready() == 200 for r in cluster), 15):
        raise Unexpected("/readyz did not answer 200 again after connections were allowed")
    seen.readyz_recovered += len(cluster)


def disruptor(
    database: Database, cluster: Sequence[Replica], seen: Disruptions, finished: Event
) -> Callable[[Event], None]:
    """Runs ``SCHEDULE``, then sets ``finished``; the load waits for it (on a slow machine
    an outage's recovery can take longer than the schedule allows for)."""

    def disrupt(done: Event) -> None:
        started = time.monotonic()
        for at, action, hold in SCHEDULE:
            if done.wait(max(0.0, started + at - time.monotonic())):
                return
            if action == "outage":
                outage(database, cluster, seen, hold)
            else:
                terminate(database, seen)
        finished.set()

    return disrupt


def test_cut_database_connections_answer_503_then_recover_and_retries_complete_every_write_once(
    database: Database, tmp_path: Path
) -> None:
    seen = Disruptions()
    finished = Event()
    with (
        service_role(database) as (user, password),
        replicas(database.url_for(user, password), tmp_path) as cluster,
    ):
        pids = [replica.pid for replica in cluster]
        load = run_load(
            cluster,
            seed=SEED,
            shape=LoadShape(workers=8, duration=18.0, lossy=True, retries=100, deadline=90.0),
            disrupt=disruptor(database, cluster, seen, finished),
            disrupted=finished,
        )
        assert [replica.pid for replica in cluster] == pids
        assert all(replica.alive() and replica.ready() == 200 for replica in cluster)
        with HttpStore(cluster[0].base_url) as store:
            for probe in seen.probe_sessions:
                with pytest.raises(SessionNotFoundError):
                    store.load_session(probe)
    engine = database.engine()
    try:
        findings = check_load(engine, load)
    finally:
        engine.dispose()
    print(
        "\n"
        + figures(
            "database connections cut",
            load,
            findings,
            seed=SEED,
            replicas_killed=0,
            connection_terminations=seen.terminations,
            backends_terminated=seen.backends_terminated,
            outages=seen.outages,
            readyz_503=seen.readyz_unavailable,
            readyz_200_again=seen.readyz_recovered,
            probe_writes_503=seen.writes_unavailable,
        )
    )
    assert not findings.problems, "\n".join(findings.problems[:40])
    assert seen.terminations == len(SCHEDULE)
    assert seen.outages == seen.writes_unavailable == 2
    assert seen.backends_terminated > 0
    assert load.traffic.unavailable > 0, "no worker request met the outage"
