"""Issue 45, part 3: what each read replica is, said at start, in ``/readyz`` and in the
skips' reasons. A replica that cannot serve never stops the service nor makes it unready
(CONTRACT.md 14: it is skipped; readiness is the primary's), but is named with its state:
``unreachable`` (nothing listens), ``not_in_recovery`` (the primary itself), ``ok`` (a real
hot standby). Each case runs the real ``runtime-store serve`` on real databases."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.engine import make_url

from tests.conftest import free_port, start_server, stop_server

from .conftest import ReplicatedService

#: In the replicas' URLs: never printed, never answered.
SECRET = "s3cr3t"


def replica_states(base_url: str) -> dict[str, Any]:
    """``/readyz``'s body once no replica's state is ``unknown`` (a replica is asked on
    the first ``/readyz``; one that takes long is reported by a later one)."""
    deadline = time.monotonic() + 15
    while True:
        answer = httpx.get(f"{base_url}/readyz", timeout=10)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        states = {replica["state"] for replica in body["replicas"]}
        if "unknown" not in states or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


def skips(base_url: str) -> str:
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    return "\n".join(line for line in text.splitlines() if "replica" in line)


def test_an_unreachable_replica_and_the_primary_itself_are_named_not_silent(
    postgres_url: str, tmp_path: Path
) -> None:
    primary = make_url(postgres_url)
    host, port, name = primary.host, primary.port or 5432, primary.database
    closed = free_port()  # nothing listens there: connections are refused
    unreachable = f"postgresql://u:{SECRET}@127.0.0.1:{closed}/{name}"
    itself = primary.set(password=SECRET).render_as_string(hide_password=False)
    server = start_server(
        postgres_url,
        tmp_path / "serve.log",
        env={"RUNTIME_STORE_READ_DATABASE_URLS": f"{unreachable},{itself}"},
    )
    try:
        body = replica_states(server.base_url)
        for _ in range(3):  # reads: the primary serves them, each replica skipped
            assert httpx.get(f"{server.base_url}/v1/sessions", timeout=10).status_code == 200
        metrics = skips(server.base_url)
    finally:
        stop_server(server)
    log = server.log()
    assert SECRET not in log
    assert f"read replica replica-1 of 2 (127.0.0.1:{closed}/{name}): unreachable (" in log
    assert "Connection refused" in log
    assert (
        f"read replica replica-2 of 2 ({host}:{port}/{name}): not in recovery (is the primary "
        "itself, not a standby): the primary serves its reads; name only hot standbys in "
        "RUNTIME_STORE_READ_DATABASE_URLS"
    ) in log
    # Ready (the primary is fine), both replicas named with their state, no password.
    assert body["status"] == "ready"
    assert SECRET not in str(body)
    assert [(r["replica"], r["database"], r["state"]) for r in body["replicas"]] == [
        ("replica-1", f"127.0.0.1:{closed}/{name}", "unreachable"),
        ("replica-2", f"{host}:{port}/{name}", "not_in_recovery"),
    ]
    assert "Connection refused" in body["replicas"][0]["detail"]
    # The skips say why, not just "down".
    assert 'runtime_store_db_replica_skips_total{reason="unreachable",replica="replica-1"}' in (
        metrics
    )
    assert (
        'runtime_store_db_replica_skips_total{reason="not_in_recovery",replica="replica-2"}'
        in metrics
    )
    assert 'reason="down"' not in metrics
    assert 'runtime_store_db_replica_state{replica="replica-1",state="unreachable"} 1.0' in metrics
    assert (
        'runtime_store_db_replica_state{replica="replica-2",state="not_in_recovery"} 1.0' in metrics
    )


def test_a_hot_standby_is_named_ok(replicated: ReplicatedService) -> None:
    standby = f"127.0.0.1:{replicated.pair.standby_port}/{replicated.database}"
    assert f"read replica replica-1 of 1 ({standby}): ok (a hot standby)" in (
        replicated.server.log()
    )
    body = replica_states(replicated.server.base_url)
    assert body["status"] == "ready"
    assert body["replicas"] == [
        {"replica": "replica-1", "database": standby, "state": "ok", "detail": ""}
    ]
