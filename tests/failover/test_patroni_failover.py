"""The service follows the primary of a Patroni cluster through a failover, nothing
acknowledged lost (CONTRACT.md 16).

One real cluster on loopback (tests/failover/cluster.py: one etcd, three PostgreSQL
members under Patroni, synchronous mode), one ``runtime-store serve`` per scenario on the
multi-host URL, the reliability load through the real ``HttpStore``, a webhook
subscription to a real receiver (tests/failover/scenarios.py). The leader's PostgreSQL is
SIGKILLed; later a leader's Patroni is stopped cleanly; once the leader is frozen (its
Patroni and PostgreSQL SIGSTOPped: a hung machine) and thawed after the failover, when it
must rejoin as a standby. After each: every acknowledged write stored exactly once with
its original ID, every cut write's exact retry answered its original IDs, ``db verify``
clean, every webhook event delivered, each session's events first received in commit
order; the workers' batches stored whole, each record once; a live tail that ran across
the blow saw every record of its session exactly once in commit order (a paged read's
list), and a wait for a run finished after the failover answered at once; while no
primary took writes every answer came within its bound, ``/readyz`` said 503 and
``/healthz`` 200; writes came back within 5 s of Patroni's own failover.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.storage.database.engines import CONNECT_TIMEOUT_SECONDS
from app.storage.database.read_deadlines import DEFAULT_READ_TIMEOUT_SECONDS
from app.storage.database.server_probes import PROBE_TIMEOUT_SECONDS

from .cluster import PatroniCluster, missing_tools, patroni_cluster
from .scenarios import BLOWS, WAIT_WITHIN, run_scenario

pytestmark = [pytest.mark.serial, pytest.mark.postgres]

#: The longest any answer may take while no primary takes writes: a statement's deadline
#: and its probe, or a connection's timeout per host, and the scheduling of a busy
#: 2-core machine.
BOUND = DEFAULT_READ_TIMEOUT_SECONDS + PROBE_TIMEOUT_SECONDS + CONNECT_TIMEOUT_SECONDS + 2.0
#: Writes succeed again within this long of Patroni's own failover (CONTRACT.md 16).
WITHIN = 5.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[PatroniCluster]:
    reason = missing_tools()
    if reason is not None:
        pytest.skip(f"no Patroni cluster: {reason}")
    with patroni_cluster() as made:
        yield made


@pytest.mark.parametrize("blow", BLOWS)
def test_the_service_follows_the_primary_and_loses_nothing(
    cluster: PatroniCluster, blow: str, tmp_path: Path
) -> None:
    outcome = run_scenario(cluster, blow, seed=BLOWS.index(blow) + 1, log_dir=tmp_path)
    print(f"\n{outcome.line()}")
    assert outcome.problems == []
    assert (outcome.lost, outcome.duplicated) == (0, 0)
    assert outcome.acknowledged > 50
    assert outcome.events > 0
    assert outcome.events_delivered == outcome.events
    assert outcome.longest_ordering >= 2  # the order of one session's events was checked
    assert outcome.batch_records > 0
    assert outcome.tailed > 0
    assert outcome.wait_answered_after <= WAIT_WITHIN
    assert outcome.window <= outcome.patroni_failover + WITHIN, outcome.line()
    assert outcome.longest_answer <= BOUND, outcome.line()
    if outcome.readyz_during:  # the probe ran before another member took over
        assert outcome.readyz_during == 503, outcome.line()
        assert outcome.readyz_seconds <= BOUND, outcome.line()
        assert outcome.healthz_during == 200, outcome.line()
