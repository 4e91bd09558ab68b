"""``runtime-store serve`` with two workers on PostgreSQL, as an operator runs it: its
``/metrics`` adds up both workers, survives a dead worker, and its log lines are JSON.

One server for the whole module (starting workers costs seconds of CPU), with tokens on, a
trigger that fails one write (a real 500), and ``TMPDIR`` pointed at the test's directory
so the metrics directory ``serve`` makes can be watched.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.domain.tokens import Role
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from tests.api.wire_builders import append_body, note, root_start_body
from tests.conftest import free_port
from tests.contract.builders import run_start, uid
from tests.observability import Samples
from tests.security import fresh_postgres_url
from tests.security.test_no_leaks import _explode_on

TOKEN_KEY = "serve-metrics-token-key-0123456789abcdef"
POOL_SIZE = 10  # the default RUNTIME_STORE_DB_POOL_SIZE
START_TIMEOUT_S = 60


@dataclass
class Served:
    base_url: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    tmpdir: Path
    admin: str
    reader: str

    def entries(self) -> list[dict[str, Any]]:
        """Every line of standard error, each parsed as JSON (a line that is not fails)."""
        return [json.loads(line) for line in self.stderr.read_text().splitlines()]

    def started_workers(self) -> list[int]:
        return [
            entry["pid"]
            for entry in self.entries()
            if entry["message"] == "Application startup complete."
        ]

    def metrics_directories(self) -> list[Path]:
        return list(self.tmpdir.glob("runtime-store-metrics-*"))

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request on a connection of its own, so the kernel spreads them over the
        workers' sockets."""
        token = kwargs.pop("token", self.admin)
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.request(method, self.base_url + path, headers=headers, timeout=30, **kwargs)

    def scrape(self) -> Samples:
        response = self.call("GET", "/metrics", token=self.reader)
        assert response.status_code == 200, response.text
        return Samples.parse(response.text)


def _wait(served: Served, workers: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while len(served.started_workers()) < workers:
        assert served.process.poll() is None, served.stderr.read_text()
        assert time.monotonic() < deadline, served.stderr.read_text()
        time.sleep(0.1)


@pytest.fixture(scope="module")
def served(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("serve-metrics")
    with fresh_postgres_url(postgres_url) as url:
        engine = create_engine(url)
        try:
            tokens = Tokens(engine, TOKEN_KEY)
            admin, reader = tokens.create("ops", Role.ADMIN), tokens.create("scraper", Role.READER)
        finally:
            engine.dispose()
        _explode_on(url, "explode")
        (directory / "tmp").mkdir()
        port = free_port()
        env = {
            **os.environ,
            "RUNTIME_STORE_DATABASE_URL": url,
            "RUNTIME_STORE_TOKEN_KEY": TOKEN_KEY,
            "TMPDIR": str(directory / "tmp"),
        }
        for name in [name for name in env if name.startswith(("RUNTIME_STORE_LOG", "OTEL_"))]:
            del env[name]
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        stdout, stderr = directory / "stdout.log", directory / "stderr.log"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(port), "--workers", "2"],
                env=env,
                stdout=out,
                stderr=err,
            )
        served = Served(
            f"http://127.0.0.1:{port}", process, stdout, stderr, directory / "tmp", admin, reader
        )
        try:
            _wait(served, 2)
            yield served
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


REQUESTS = "runtime_store_http_requests_total"
OUTCOMES = "runtime_store_outcomes_total"


def _business(samples: Samples) -> dict[tuple[str, str, str], float]:
    """Request and outcome counters, the scrapes' own requests left out."""
    found = {}
    for (name, labels), value in samples.values.items():
        fields = dict(labels)
        if name in (REQUESTS, OUTCOMES) and fields["operation"] != "metrics":
            found[(name, fields["operation"], fields.get("status") or fields["outcome"])] = value
    return found


def test_two_workers_serve_one_sum_of_their_metrics_and_json_log_lines(served: Served) -> None:
    session_id = uid("sess")
    body = {"session_id": session_id, "created_at": "2026-11-30T01:02:03.456Z"}
    assert served.call("POST", "/v1/sessions", json=body).status_code == 200
    run = run_start(session_id=session_id)
    assert served.call("POST", "/v1/runs/root-starts", json=root_start_body(run)).status_code == 200
    path = f"/v1/runs/{run.run_id}/records"
    for key in ("a", "b", "c", "d", "e", "f", "a", "b"):  # six new, two exact retries
        response = served.call("POST", path, json=append_body(note(run, key)))
        assert response.status_code == 200, response.text
    changed = note(run, "c", payload=b'{"changed":true}')
    assert served.call("POST", path, json=append_body(changed)).status_code == 409
    failed = served.call("POST", path, json=append_body(note(run, "explode")))
    assert failed.status_code == 500, failed.text

    scrapes = [_business(served.scrape()) for _ in range(4)]
    assert scrapes[0] == {
        (REQUESTS, "create-session", "2xx"): 1,
        (REQUESTS, "start-root-run", "2xx"): 1,
        (REQUESTS, "append-run-record", "2xx"): 8,
        (REQUESTS, "append-run-record", "4xx"): 1,
        (REQUESTS, "append-run-record", "5xx"): 1,
        (OUTCOMES, "start-root-run", "inserted"): 1,
        (OUTCOMES, "append-run-record", "inserted"): 6,
        (OUTCOMES, "append-run-record", "exact_retry"): 2,
        (OUTCOMES, "append-run-record", "event_conflict"): 1,
        (OUTCOMES, "append-run-record", "internal"): 1,
    }
    # Whichever worker answers a scrape, it reports both.
    assert all(scrape == scrapes[0] for scrape in scrapes), scrapes
    samples = served.scrape()
    assert samples.get("runtime_store_db_pool_size") == 2 * POOL_SIZE
    assert samples.get("runtime_store_db_pool_in_use") == 0

    entries = served.entries()
    access = [entry for entry in entries if entry["logger"] == "runtime_store.access"]
    assert len({entry["pid"] for entry in access}) == 2, "one worker served every connection"
    assert {entry["token_name"] for entry in access} == {"ops", "scraper"}
    errors = [entry for entry in entries if entry["level"] == "error"]
    assert [entry["request_id"] for entry in errors] == [failed.json()["request_id"]]
    assert "Traceback" in errors[0]["exception"]
    assert served.admin not in served.stderr.read_text()
    assert len(served.metrics_directories()) == 1


def test_a_dead_worker_takes_no_count_away_and_stops_counting_in_live_gauges(
    served: Served,
) -> None:
    before = _business(served.scrape())
    victim = served.started_workers()[0]
    os.kill(victim, signal.SIGKILL)
    _wait(served, 3)  # its replacement started
    after = served.scrape()
    assert _business(after) == before
    # The dead worker's pool left the live gauge; the replacement's joined it.
    assert after.get("runtime_store_db_pool_size") == 2 * POOL_SIZE


def test_serve_removes_its_metrics_directory_and_wrote_only_json_to_standard_error(
    served: Served,
) -> None:
    served.process.send_signal(signal.SIGINT)
    assert served.process.wait(timeout=20) == 0
    assert served.metrics_directories() == []
    entries = served.entries()  # every line parses
    assert {entry["logger"] for entry in entries} >= {"uvicorn.error", "runtime_store.access"}
    # Standard output holds serve's start summary only.
    assert "2 worker(s)" in served.stdout.read_text()
