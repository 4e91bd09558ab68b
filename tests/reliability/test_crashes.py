"""Replicas killed with SIGKILL at random moments under load lose and duplicate nothing."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from runtime_store_client import HttpStore, MemoryEvent, UnavailableError
from tests.contract.builders import T0, new_session, record, start_root

from .cluster import Database, Replica, replicas
from .load import LoadShape, check_load, figures, run_load, seed_from_environment

SEED = seed_from_environment(2)
MIN_KILLS = 3
MAX_KILLS = 12


def killer(
    cluster: Sequence[Replica], seed: int, kills: list[int], enough: threading.Event
) -> Callable[[threading.Event], None]:
    """Every 0.5-2 s, SIGKILL a random replica, then restart it on its port after 0-0.5 s.

    One replica at most is down at a time; ``kills`` collects the PID of each victim and
    ``enough`` is set after ``MIN_KILLS`` kills, so the load outlasts them however slowly
    the machine restarts a replica.
    """
    rng = random.Random(seed)

    def disrupt(done: threading.Event) -> None:
        while len(kills) < MAX_KILLS and not done.wait(rng.uniform(0.5, 2.0)):
            victim = rng.choice(cluster)
            kills.append(victim.pid)
            victim.kill()
            time.sleep(rng.uniform(0.0, 0.5))
            victim.start()
            if len(kills) >= MIN_KILLS:
                enough.set()

    return disrupt


def test_replicas_killed_at_random_moments_lose_no_acknowledged_write_and_store_none_twice(
    database: Database, tmp_path: Path
) -> None:
    kills: list[int] = []
    enough = threading.Event()
    with replicas(database.url, tmp_path) as cluster:
        load = run_load(
            cluster,
            seed=SEED,
            shape=LoadShape(workers=8, duration=15.0, lossy=True, retries=100, deadline=90.0),
            disrupt=killer(cluster, SEED, kills, enough),
            disrupted=enough,
        )
        restarts = sum(replica.starts - 1 for replica in cluster)
    engine = database.engine()
    try:
        findings = check_load(engine, load)
    finally:
        engine.dispose()
    print(
        "\n"
        + figures(
            "replica crashes",
            load,
            findings,
            seed=SEED,
            replicas_killed=len(kills),
            replica_restarts=restarts,
            connection_terminations=0,
        )
    )
    assert not findings.problems, "\n".join(findings.problems[:40])
    # The load runs on until the third kill's replacement answers (or another 15 s pass).
    assert len(kills) >= MIN_KILLS
    assert restarts == len(kills)
    assert load.traffic.connection_errors > 0, "no request ever met a killed replica"


class LoseFirstAnswer(httpx.HTTPTransport):
    """Lets the first ``POST`` to a path ending in ``suffix`` reach the server and commit,
    then loses its answer: what a client sees when a replica dies after the commit."""

    def __init__(self, suffix: str) -> None:
        super().__init__()
        self.suffix = suffix
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if not self.lost and request.method == "POST" and request.url.path.endswith(self.suffix):
            response.read()
            response.close()
            self.lost += 1
            raise httpx.RemoteProtocolError("server disconnected after its commit", request=request)
        return response


def test_a_record_append_cut_off_after_its_commit_is_retried_as_an_exact_retry(
    database: Database, tmp_path: Path
) -> None:
    transport = LoseFirstAnswer("/records")
    with (
        replicas(database.url, tmp_path, count=1) as (replica,),
        HttpStore(replica.base_url, httpx_args={"transport": transport}) as store,
    ):
        session = new_session(store)
        run = start_root(store, session.id).run
        note = record(run, event_key="note")
        result = store.append_run_record(note)
        assert transport.lost == 1
        assert (result.id, result.inserted) == ("2", False)
        assert [r.event_key for r in store.list_run_records(run.run_id).records] == [
            "start",
            "note",
        ]


def test_a_memory_append_cut_off_after_its_commit_is_not_stored_twice(
    database: Database, tmp_path: Path
) -> None:
    # Memory events carry no event keys, so a blind retry of an append that had committed
    # stores its events again. The call may fail (its outcome is unknown); it must not
    # duplicate.
    transport = LoseFirstAnswer("/memory")
    events = [
        MemoryEvent(type="user_message", timestamp=T0, data={"text": "hello"}, labels={}),
        MemoryEvent(type="assistant_message", timestamp=T0, data={"text": "hi"}, labels={}),
    ]
    with (
        replicas(database.url, tmp_path, count=1) as (replica,),
        HttpStore(replica.base_url, httpx_args={"transport": transport}) as store,
    ):
        with contextlib.suppress(UnavailableError):
            store.append_memory_events("agent-1", "run-1", events)
        assert transport.lost == 1
        stored = store.load_memory("agent-1", "run-1").events
        assert len(stored) == len(events), f"{len(stored)} events stored for {len(events)} sent"
