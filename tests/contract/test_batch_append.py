"""Batch append (CONTRACT.md 11.2), on every backend."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runtime_store_client import (
    AppendResult,
    EventConflictError,
    InvalidArgumentError,
    Record,
    RunNotActiveError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStatus,
    SessionStatus,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    all_session_records,
    new_session,
    observe,
    record,
    start_root,
    terminal_record,
)

ACTIVE = SessionStatus.ACTIVE


def _run(store: Backend) -> RunStart:
    return start_root(store, new_session(store).id).run


def _refused(
    store: Backend, run: RunStart, records: list[Record], error: type[StoreError], key: str
) -> StoreError:
    before = observe(store, run.run_id, session_id=run.session_id)
    with pytest.raises(error) as info:
        store.append_run_records(run.run_id, records)
    assert info.value.event_key == key
    assert observe(store, run.run_id, session_id=run.session_id) == before
    return info.value


def test_a_batch_is_stored_in_order_with_consecutive_ids(store: Backend) -> None:
    run = _run(store)
    batch = [record(run, event_key=f"e{n}", payload=b'{"n":%d}' % n) for n in range(16)]
    results = store.append_run_records(run.run_id, batch)
    assert results == [
        AppendResult(id=str(n + 2), inserted=True, session_status=ACTIVE) for n in range(16)
    ]
    stored = all_records(store, run.run_id)[1:]
    assert stored == [replace(rec, id=str(n + 2)) for n, rec in enumerate(batch)]
    session_keys = [r.event_key for r in all_session_records(store, run.session_id)]
    assert session_keys == ["start", *(f"e{n}" for n in range(16))]


def test_a_batch_retried_whole_returns_the_original_ids(store: Backend) -> None:
    run = _run(store)
    batch = [record(run, event_key=f"e{n}") for n in range(3)]
    first = store.append_run_records(run.run_id, batch)
    before = observe(store, run.run_id, session_id=run.session_id)
    again = store.append_run_records(run.run_id, batch)
    assert again == [replace(r, inserted=False) for r in first]
    assert observe(store, run.run_id, session_id=run.session_id) == before


def test_an_exact_retry_inside_a_batch_returns_its_original_id(store: Backend) -> None:
    run = _run(store)
    old = record(run, event_key="old")
    store.append_run_record(old)
    new = record(run, event_key="new")
    results = store.append_run_records(run.run_id, [old, new])
    assert results == [
        AppendResult(id="2", inserted=False, session_status=ACTIVE),
        AppendResult(id="3", inserted=True, session_status=ACTIVE),
    ]


def test_a_key_repeated_with_the_same_content_is_a_retry_of_its_first(store: Backend) -> None:
    run = _run(store)
    rec = record(run, event_key="twice")
    results = store.append_run_records(run.run_id, [rec, record(run, event_key="x"), rec])
    assert results == [
        AppendResult(id="2", inserted=True, session_status=ACTIVE),
        AppendResult(id="3", inserted=True, session_status=ACTIVE),
        AppendResult(id="2", inserted=False, session_status=ACTIVE),
    ]
    assert len(all_records(store, run.run_id)) == 3


def test_a_key_repeated_with_other_content_is_event_conflict(store: Backend) -> None:
    run = _run(store)
    rec = record(run, event_key="twice")
    other = replace(rec, payload=b'{"other":true}')
    _refused(store, run, [rec, other], EventConflictError, "twice")


def test_a_conflict_with_a_stored_record_fails_the_batch_naming_it(store: Backend) -> None:
    run = _run(store)
    store.append_run_record(record(run, event_key="taken"))
    batch = [record(run, event_key="a"), record(run, event_key="taken", payload=b'{"x":1}')]
    _refused(store, run, batch, EventConflictError, "taken")


@pytest.mark.parametrize("what", ["lifecycle-type", "other-run", "nul-turn-id", "owner"])
def test_a_bad_record_fails_the_batch_naming_it(store: Backend, what: str) -> None:
    run = _run(store)
    bad = {
        "lifecycle-type": replace(record(run, event_key="bad"), type="run_started"),
        "other-run": replace(record(run, event_key="bad"), run_id="run-else"),
        "nul-turn-id": replace(record(run, event_key="bad"), turn_id="t\x00"),
        "owner": replace(record(run, event_key="bad"), agent_id="agent-else"),
    }[what]
    error = RunRecordOwnerMismatchError if what == "owner" else InvalidArgumentError
    _refused(store, run, [record(run, event_key="good"), bad], error, "bad")


@pytest.mark.parametrize("size", [0, 1001])
def test_a_batch_holds_1_to_1000_records(store: Backend, size: int) -> None:
    run = _run(store)
    batch = [record(run, event_key=f"e{n}", payload=b"{}") for n in range(size)]
    with pytest.raises(InvalidArgumentError):
        store.append_run_records(run.run_id, batch)
    assert len(all_records(store, run.run_id)) == 1


def test_a_batch_of_1000_records_is_stored(store: Backend) -> None:
    run = _run(store)
    batch = [record(run, event_key=f"e{n}", payload=b"{}") for n in range(1000)]
    results = store.append_run_records(run.run_id, batch)
    assert [r.id for r in results] == [str(n + 2) for n in range(1000)]


def test_new_records_on_a_finished_run_are_run_not_active(store: Backend) -> None:
    run = _run(store)
    done = record(run, event_key="done-before")
    store.append_run_record(done)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    # The stored one alone is an exact retry, also after the end.
    assert store.append_run_records(run.run_id, [done]) == [
        AppendResult(id="2", inserted=False, session_status=ACTIVE)
    ]
    _refused(store, run, [done, record(run, event_key="late")], RunNotActiveError, "late")


def test_a_batch_on_an_unknown_run_is_run_not_found(store: Backend) -> None:
    run = _run(store)
    ghost = replace(run, run_id="run-ghost")
    with pytest.raises(RunNotFoundError):
        store.append_run_records("run-ghost", [record(ghost, event_key="a")])
