"""Two replicas over one PostgreSQL under a concurrent load: the database is the only arbiter."""

from __future__ import annotations

from pathlib import Path

from .cluster import Database, replicas
from .load import LoadShape, check_load, figures, run_load, seed_from_environment

SEED = seed_from_environment(1)


def test_two_replicas_under_load_store_each_acknowledged_write_once_and_refused_ones_not_at_all(
    database: Database, tmp_path: Path
) -> None:
    with replicas(database.url, tmp_path) as cluster:
        load = run_load(cluster, seed=SEED, shape=LoadShape(workers=8, duration=15.0))
    engine = database.engine()
    try:
        findings = check_load(engine, load)
    finally:
        engine.dispose()
    print(
        "\n"
        + figures(
            "two replicas", load, findings, seed=SEED, replicas_killed=0, connection_terminations=0
        )
    )
    assert not findings.problems, "\n".join(findings.problems[:40])
    # Without failures nothing is retried: every first write was inserted (not lossy).
    assert load.traffic.unavailable == load.traffic.connection_errors == 0
    refused = {r.code for r in load.ledger.refused}
    assert refused >= {
        "event_conflict",
        "run_not_active",
        "run_cancellation_conflict",
        "run_terminal_conflict",
    }
    stopped = [e for e in load.ledger.expected.values() if e.cancellation_reason == "session_ended"]
    assert stopped, "no start met an ended session"
    assert load.reader.pages > 10
