"""A record by its key: ``load_run_record`` (CONTRACT.md 12.5).

The stored record with that ``(run_id, event_key)``, exactly as a page carries it (its
``id`` included), or ``record_not_found``; an unknown run is ``run_not_found``, a purged
one ``session_purged``.
"""

from __future__ import annotations

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    RecordNotFoundError,
    RunNotFoundError,
    RunStatus,
    SessionPurgedError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    assert_rejected,
    at,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    terminal_record,
    uid,
)


def test_a_record_is_loaded_by_its_key_as_a_page_carries_it(store: Backend) -> None:
    run = start_root(store, new_session(store).id).run
    store.append_run_record(record(run, event_key="note-1", turn_id="turn-1"))
    store.append_run_record(
        record(run, event_key="tool-out", type="tool_result_received", payload=b'{"ok":true}')
    )
    stored = all_records(store, run.run_id)

    found = [store.load_run_record(run.run_id, key) for key in ("start", "note-1", "tool-out")]

    assert found == stored  # every field, the store's ID and the payload bytes included
    assert [r.id for r in found] == ["1", "2", "3"]


def test_a_terminal_runs_records_stay_readable_by_key(store: Backend) -> None:
    run = start_root(store, new_session(store).id).run
    done = terminal_record(run, RunStatus.COMPLETED)
    store.record_run_terminal(run.run_id, RunStatus.COMPLETED, done)

    found = store.load_run_record(run.run_id, done.event_key)

    assert (found.id, found.type, found.payload) == ("2", "run_completed", done.payload)


def test_payload_bytes_come_back_exactly(store: Backend) -> None:
    run = start_root(store, new_session(store).id).run
    payload = b'{"text":"cut \\ud83d, nul \\u0000, \xc3\xa9",  "spaced" : [1, 2.50]}'
    store.append_run_record(record(run, event_key="odd", payload=payload))

    assert store.load_run_record(run.run_id, "odd").payload == payload


@pytest.mark.parametrize("key", ["a/b", "a%2Fb", "?x=1&y", "#frag", "é ü", " spaced "])
def test_every_accepted_key_is_reachable(store: Backend, key: str) -> None:
    run = start_root(store, new_session(store).id).run
    store.append_run_record(record(run, event_key=key))
    store.append_run_record(record(run, event_key=key + "-other"))

    found = store.load_run_record(run.run_id, key)

    assert (found.id, found.event_key) == ("2", key)


def test_a_sessionless_runs_record_is_loaded_too(store: Backend) -> None:
    run = run_start()
    store.start_one_shot_run(run, started_record(run))

    found = store.load_run_record(run.run_id, "start")

    assert (found.id, found.session_id, found.type) == ("1", "", "run_started")


def test_an_unknown_key_is_record_not_found_naming_run_and_key(store: Backend) -> None:
    run = start_root(store, new_session(store).id).run

    error = assert_rejected(
        store, lambda: store.load_run_record(run.run_id, "missing"), RecordNotFoundError, run.run_id
    )

    assert (error.run_id, error.event_key) == (run.run_id, "missing")


def test_a_key_of_another_run_is_record_not_found(store: Backend) -> None:
    session_id = new_session(store).id
    first, second = start_root(store, session_id).run, start_root(store, session_id).run
    store.append_run_record(record(first, event_key="only-on-first"))

    assert_rejected(
        store,
        lambda: store.load_run_record(second.run_id, "only-on-first"),
        RecordNotFoundError,
        first.run_id,
        second.run_id,
    )


def test_an_unknown_run_is_run_not_found(store: Backend) -> None:
    assert_rejected(store, lambda: store.load_run_record(uid("no-run"), "start"), RunNotFoundError)


def test_a_purged_run_is_session_purged(store: Backend) -> None:
    run = start_root(store, new_session(store).id).run
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(run.session_id, at(50))
    store.purge_session(run.session_id)

    assert_rejected(store, lambda: store.load_run_record(run.run_id, "start"), SessionPurgedError)


@pytest.mark.parametrize("key", ["", "a\x00b", "a\ud800b"], ids=["empty", "nul", "lone-surrogate"])
def test_a_key_no_record_can_hold_is_invalid_argument(store: Backend, key: str) -> None:
    run = start_root(store, new_session(store).id).run

    assert_rejected(
        store, lambda: store.load_run_record(run.run_id, key), InvalidArgumentError, run.run_id
    )
