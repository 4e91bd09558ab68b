"""``runtime-store webhooks …`` and ``runtime-store runs wait`` against a live service."""

from __future__ import annotations

import json

from runtime_store_client import HttpStore, RunStatus
from tests.conftest import LiveServer
from tests.contract.builders import T0, new_session, start_root, terminal_record
from tests.test_operator_cli import run_cli

URL = "https://93.184.216.34/runtime-store"


def test_webhooks_create_list_deliveries_and_delete(sqlite_server: LiveServer) -> None:
    code, out, _ = run_cli(sqlite_server, "webhooks", "create", URL, "--event", "session.ended")
    assert code == 0
    created = json.loads(out)
    assert created["secret"].startswith("whsec_")
    assert created["events"] == ["session.ended"]
    with HttpStore(sqlite_server.base_url) as store:
        store.end_session(new_session(store).id, T0)
    code, out, _ = run_cli(sqlite_server, "webhooks", "list", "--json")
    listed = [json.loads(line) for line in out.splitlines()]
    assert created["webhook_id"] in {hook["webhook_id"] for hook in listed}
    assert all("secret" not in hook for hook in listed)
    code, out, _ = run_cli(sqlite_server, "webhooks", "deliveries", created["webhook_id"], "--json")
    assert code == 0
    assert [json.loads(line)["type"] for line in out.splitlines()] == ["session.ended"]
    code, out, _ = run_cli(sqlite_server, "webhooks", "delete", created["webhook_id"])
    assert code == 0
    code, _, err = run_cli(sqlite_server, "webhooks", "delete", created["webhook_id"])
    assert code == 1
    assert "webhook_not_found" in err


def test_webhooks_create_refuses_an_unknown_event_type(sqlite_server: LiveServer) -> None:
    """Before it asks the service: the line lists the events there are."""
    code, _, err = run_cli(sqlite_server, "webhooks", "create", URL, "--event", "run.started")
    assert code == 2
    assert err.strip() == (
        "error: --event: 'run.started' is not a webhook event; the events are run.finished, "
        "run.suspended, session.ended, session.purged"
    )


def test_runs_wait_prints_the_finished_run_and_exits_4_at_the_timeout(
    sqlite_server: LiveServer,
) -> None:
    with HttpStore(sqlite_server.base_url) as store:
        run = start_root(store, new_session(store).id).run
        code, out, _ = run_cli(sqlite_server, "runs", "wait", run.run_id, "--timeout", "0.5")
        assert code == 4
        assert json.loads(out)["status"] == "running"
        store.record_run_terminal(
            run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
        )
    code, out, _ = run_cli(sqlite_server, "runs", "wait", run.run_id)
    assert code == 0
    assert json.loads(out)["status"] == "completed"
