"""Contract rules of synchronous starts and start kinds (CONTRACT.md 12.2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

import pytest

from runtime_store_client import (
    AppendResult,
    InvalidArgumentError,
    OneShotRunStartResult,
    Record,
    RunConflictError,
    RunMeta,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
)
from tests.contract.builders import (
    Backend,
    all_records,
    at,
    canceled_record,
    checkpoint,
    expect_rejected,
    link_record,
    new_session,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)

SITE: Final = {"site": "one"}
DIGEST: Final = bytes(range(1, 33))


def synchronous(**changes: object) -> RunStart:
    return replace(run_start(labels=SITE), **changes)  # type: ignore[arg-type]


def start_synchronous(store: Backend, run: RunStart | None = None) -> RunStart:
    run = run or synchronous()
    store.start_synchronous_run(run, started_record(run))
    return run


def rejected(
    store: Backend, call: Callable[[], object], error: type, code: str, *run_ids: str
) -> None:
    expect_rejected(store, call, error, code, *run_ids)


# --- a new synchronous run ----------------------------------------------------------------


def test_synchronous_start_stores_a_running_sessionless_run_with_its_run_started(
    store: Backend,
) -> None:
    run = synchronous()
    started = started_record(run)
    result = store.start_synchronous_run(run, started)
    assert result == OneShotRunStartResult(
        run_status=RunStatus.RUNNING,
        record=AppendResult(id="1", inserted=True, session_status=None),
    )
    assert all_records(store, run.run_id) == [replace(started, id="1")]


def test_synchronous_runs_meta_says_start_kind_synchronous(store: Backend) -> None:
    run = start_synchronous(store)
    meta = store.load_run(run.run_id)
    assert meta == RunMeta(
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id="",
        parent_run_id="",
        status=RunStatus.RUNNING,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=run.started_at,
        updated_at=meta.updated_at,
        labels=SITE,
        start_kind=RunStartKind.SYNCHRONOUS,
    )


def test_engine_started_runs_say_start_kind_engine(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id).run
    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    for run_id in (root.run_id, one_shot.run_id):
        assert store.load_run(run_id).start_kind is RunStartKind.ENGINE


def test_search_results_carry_the_start_kind(store: Backend) -> None:
    agent = f"agent-{run_start().run_id}"
    sync_run = start_synchronous(store, synchronous(agent_id=agent))
    engine_run = synchronous(agent_id=agent)
    store.start_one_shot_run(engine_run, started_record(engine_run))
    kinds = {meta.run_id: meta.start_kind for meta in store.search_runs(agent_id=agent).runs}
    assert kinds == {
        sync_run.run_id: RunStartKind.SYNCHRONOUS,
        engine_run.run_id: RunStartKind.ENGINE,
    }


def test_synchronous_run_takes_records_and_finishes_as_any_run(store: Backend) -> None:
    run = start_synchronous(store)
    note = replace(terminal_record(run, RunStatus.COMPLETED), type="planner_note", event_key="n")
    store.append_run_record(note)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    assert store.load_run(run.run_id).status is RunStatus.COMPLETED


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [{"session_id": "s"}, {"parent_run_id": "p"}, {"predecessor_run_id": "p"}],
    ids=["session", "parent", "predecessor"],
)
def test_synchronous_start_with_a_session_parent_or_predecessor_is_invalid_argument(
    store: Backend, changes: dict[str, str]
) -> None:
    run = synchronous(**changes)
    rejected(
        store,
        lambda: store.start_synchronous_run(run, started_record(run)),
        InvalidArgumentError,
        "invalid_argument",
        run.run_id,
    )


def test_synchronous_start_with_a_request_digest_is_invalid_argument(store: Backend) -> None:
    run = synchronous()
    rejected(
        store,
        lambda: store.start_synchronous_run(run, started_record(run), request_digest=DIGEST),
        InvalidArgumentError,
        "invalid_argument",
        run.run_id,
    )


# --- one kind for ever --------------------------------------------------------------------


def test_synchronous_start_of_an_engine_run_id_is_run_conflict(store: Backend) -> None:
    run = synchronous()
    store.start_one_shot_run(run, started_record(run))
    rejected(
        store,
        lambda: store.start_synchronous_run(run, started_record(run)),
        RunConflictError,
        "run_conflict",
        run.run_id,
    )


def test_synchronous_start_of_a_sessions_run_id_is_run_conflict(store: Backend) -> None:
    session = new_session(store)
    root = start_root(store, session.id, labels=SITE).run
    run = replace(root, session_id="")
    rejected(
        store,
        lambda: store.start_synchronous_run(run, started_record(run)),
        RunConflictError,
        "run_conflict",
        root.run_id,
    )


def test_one_shot_start_of_a_synchronous_run_id_is_run_conflict(store: Backend) -> None:
    run = start_synchronous(store)
    rejected(
        store,
        lambda: store.start_one_shot_run(run, started_record(run)),
        RunConflictError,
        "run_conflict",
        run.run_id,
    )


def test_one_shot_start_with_digest_of_a_synchronous_run_id_is_run_conflict(
    store: Backend,
) -> None:
    run = start_synchronous(store)
    rejected(
        store,
        lambda: store.start_one_shot_run(run, started_record(run), request_digest=DIGEST),
        RunConflictError,
        "run_conflict",
        run.run_id,
    )


def test_root_start_of_a_synchronous_run_id_is_run_conflict(store: Backend) -> None:
    run = start_synchronous(store)
    session = new_session(store)
    root = replace(run, session_id=session.id)
    rejected(
        store,
        lambda: store.start_root_run(root, started_record(root), canceled_record(root)),
        RunConflictError,
        "run_conflict",
        run.run_id,
    )


def test_one_shot_child_start_of_a_synchronous_run_id_is_run_conflict(store: Backend) -> None:
    parent = run_start()
    store.start_one_shot_run(parent, started_record(parent))
    run = start_synchronous(store, synchronous())
    child = replace(run, parent_run_id=parent.run_id)
    rejected(
        store,
        lambda: store.start_one_shot_child_run(
            child, link_record(parent, child), started_record(child)
        ),
        RunConflictError,
        "run_conflict",
        run.run_id,
        parent.run_id,
    )


# --- retries: the exact command, in every status -------------------------------------------


def close(store: Backend, run: RunStart, status: RunStatus) -> None:
    if status is RunStatus.SUSPENDED:
        store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    elif status is not RunStatus.RUNNING:
        store.record_run_terminal(run.run_id, status, terminal_record(run, status))


@pytest.mark.parametrize("status", list(RunStatus))
def test_synchronous_exact_retry_returns_the_original_record_and_current_status(
    store: Backend, status: RunStatus
) -> None:
    run = start_synchronous(store)
    close(store, run, status)
    meta = store.load_run(run.run_id)
    result = store.start_synchronous_run(run, started_record(run))
    assert result == OneShotRunStartResult(
        run_status=status, record=AppendResult(id="1", inserted=False, session_status=None)
    )
    assert store.load_run(run.run_id) == meta


CHANGES: Final[dict[str, Callable[[RunStart], tuple[RunStart, Record]]]] = {
    "time": lambda r: (rr := replace(r, started_at=at(900)), started_record(rr)),
    "labels": lambda r: (rr := replace(r, labels={"site": "two"}), started_record(rr)),
    "agent": lambda r: (rr := replace(r, agent_id="agent-other"), started_record(rr)),
    "key": lambda r: (r, started_record(r, event_key="start-other")),
    "turn": lambda r: (r, replace(started_record(r), turn_id="turn-1")),
    "payload": lambda r: (r, replace(started_record(r), payload=started_record(r).payload + b" ")),
}


@pytest.mark.parametrize("status", [RunStatus.RUNNING, RunStatus.COMPLETED])
@pytest.mark.parametrize("change", list(CHANGES))
def test_synchronous_retry_with_any_change_is_run_conflict(
    store: Backend, status: RunStatus, change: str
) -> None:
    run = start_synchronous(store)
    close(store, run, status)
    changed, started = CHANGES[change](run)
    rejected(
        store,
        lambda: store.start_synchronous_run(changed, started),
        RunConflictError,
        "run_conflict",
        run.run_id,
    )
