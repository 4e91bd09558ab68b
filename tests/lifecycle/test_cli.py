"""The commands, run as an operator runs them (subprocesses): `sessions export|import`
against a live service, `retention run [--dry-run]` on a database, and `serve
--retention-interval` sweeping in the background (CONTRACT.md 11.4)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore, create_engine, upgrade_schema
from runtime_store_client import SessionStatus, StoreError
from tests.conftest import LiveServer, start_server, stop_server, wipe
from tests.lifecycle.test_retention import ended_session, status
from tests.lifecycle.world import build_world, exported

AGES = {"RUNTIME_STORE_RETENTION_ENDED_SESSIONS": "1h"}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_sessions_export_and_import_move_a_session_byte_for_byte(
    sqlite_server: LiveServer, sqlite_engine: Engine, tmp_path: Path
) -> None:
    wipe(sqlite_engine)
    store = SqlStore(sqlite_engine)
    world = build_world(store, notes=2)
    original = exported(store, world.session_id)
    url = ["--url", sqlite_server.base_url]
    file = tmp_path / "session.ndjson"

    to_stdout = run_cli("sessions", "export", world.session_id, *url)
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == original
    file.write_bytes(original)
    wipe(sqlite_engine)
    imported = run_cli("sessions", "import", str(file), *url)
    assert imported.returncode == 0, imported.stderr
    assert f"session {world.session_id} (ended) imported".encode() in imported.stdout
    assert exported(store, world.session_id) == original

    file.write_bytes(original[: original.rindex(b"\n", 0, -1) + 1])  # no end line
    wipe(sqlite_engine)
    cut = run_cli("sessions", "import", str(file), *url)
    missing = run_cli("sessions", "export", "nope", "-o", str(tmp_path / "nope.ndjson"), *url)
    assert (cut.returncode, missing.returncode) == (1, 1)
    cut_at = original.count(b"\n")  # the end line's number
    assert f"error: invalid_argument: line {cut_at}: ".encode() in cut.stderr
    assert b"error: session_not_found" in missing.stderr
    assert not (tmp_path / "nope.ndjson").exists()  # no partial file left behind


def test_retention_run_says_what_it_will_purge_then_purges_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'retention.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    store = SqlStore(engine)
    old = [ended_session(store, records=3) for _ in range(2)]
    database = ["--database-url", url]

    dry = run_cli("retention", "run", "--dry-run", *database, env=AGES)
    assert store.load_session_status(old[0]) is SessionStatus.ENDED
    swept = run_cli("retention", "run", *database, env=AGES)

    assert dry.returncode == 0, dry.stderr
    assert b"would purge 2 ended sessions (6 records)" in dry.stdout
    assert swept.returncode == 0, swept.stderr
    assert b"purged 2 ended sessions (6 records)" in swept.stdout
    for session_id in old:
        with pytest.raises(StoreError) as gone:
            store.load_session(session_id)
        assert gone.value.code == "session_purged"
    engine.dispose()


def test_serve_sweeps_in_the_background_every_interval(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'swept.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    store = SqlStore(engine)
    session_id = ended_session(store)
    server = start_server(url, tmp_path / "serve.log", "--retention-interval", "1s", env=AGES)
    try:
        deadline = time.monotonic() + 30
        while status(store, session_id) != "session_purged":
            if time.monotonic() > deadline:
                pytest.fail(f"no sweep within 30 s:\n{server.log()}")
            time.sleep(0.2)
    finally:
        stop_server(server)
        engine.dispose()
    assert "retention every 1s" in server.log()
