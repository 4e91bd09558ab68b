"""Text is text, the same everywhere (CONTRACT.md 2.6).

A lone surrogate anywhere is ``invalid_argument``; NUL is ``invalid_argument`` in every
string kept in a plain text column and allowed (returned unchanged) in label keys and
values and memory data, which are kept as JSON text. Every backend gives the same answer,
and a refused write changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    MemoryEvent,
    RunStart,
    RunStatus,
)
from tests.contract.builders import (
    Backend,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    new_session,
    observe,
    record,
    run_start,
    start_root,
    started_record,
    suspended_record,
    uid,
)

NUL = "a\x00b"
SURROGATE = "a\ud800b"
BAD = pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "lone-surrogate"])


def _refused(
    store: Backend, call: Callable[[], object], *run_ids: str, session_id: str = ""
) -> None:
    before = observe(store, *run_ids, session_id=session_id)
    with pytest.raises(InvalidArgumentError):
        call()
    assert observe(store, *run_ids, session_id=session_id) == before


def _json_escaped(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _started(run: RunStart) -> tuple[RunStart, object, object]:
    """A root start whose records name ``run`` whatever its text (payload ASCII-escaped)."""
    started = replace(
        started_record(run),
        payload=_json_escaped(
            {"ParentRunID": "", "PredecessorRunID": run.predecessor_run_id, "Labels": run.labels}
        ),
    )
    return run, started, canceled_record(run)


# --- plain text columns: NUL and lone surrogates refused -----------------------------------


@BAD
def test_session_id_with_bad_text_is_invalid_argument(store: Backend, bad: str) -> None:
    with pytest.raises(InvalidArgumentError):
        store.create_session(bad, at(0))
    for read in (store.load_session, store.load_session_status, store.list_session_runs):
        with pytest.raises(InvalidArgumentError):
            read(bad)


@BAD
@pytest.mark.parametrize("field", ["run_id", "agent_id", "predecessor_run_id"])
def test_run_start_field_with_bad_text_is_invalid_argument(
    store: Backend, bad: str, field: str
) -> None:
    session_id = new_session(store).id
    run = replace(run_start(session_id=session_id), **{field: bad})  # type: ignore[arg-type]
    _refused(
        store,
        lambda: store.start_root_run(*_started(run)),  # type: ignore[arg-type]
        session_id=session_id,
    )


@BAD
def test_parent_run_id_with_bad_text_is_invalid_argument(store: Backend, bad: str) -> None:
    session_id = new_session(store).id
    parent = start_root(store, session_id).run
    child = run_start(session_id=session_id, parent_run_id=parent.run_id, agent_id="child")
    link = link_record(parent, child)
    child = replace(child, parent_run_id=bad)
    _refused(
        store,
        lambda: store.start_child_run(child, link, started_record(child), canceled_record(child)),
        parent.run_id,
        session_id=session_id,
    )


@BAD
@pytest.mark.parametrize("field", ["event_key", "type", "turn_id"])
def test_record_field_with_bad_text_is_invalid_argument(
    store: Backend, bad: str, field: str
) -> None:
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    rec = replace(record(run), **{field: bad})  # type: ignore[arg-type]
    _refused(store, lambda: store.append_run_record(rec), run.run_id, session_id=session_id)


@BAD
def test_checkpoint_id_with_bad_text_is_invalid_argument(store: Backend, bad: str) -> None:
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    rec = replace(
        suspended_record(run),
        payload=_json_escaped(
            {"SuspensionID": bad, "Version": "v1", "PendingCount": 1, "RequiredTools": None}
        ),
    )
    _refused(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint(bad), rec),
        run.run_id,
        session_id=session_id,
    )


@BAD
def test_cancellation_reason_with_bad_text_is_invalid_argument(store: Backend, bad: str) -> None:
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    rec = replace(cancellation_record(run), payload=_json_escaped({"reason": bad}))
    _refused(
        store,
        lambda: store.record_run_cancellation(run.run_id, bad, rec),
        run.run_id,
        session_id=session_id,
    )


@BAD
def test_run_reads_with_bad_text_are_invalid_argument(store: Backend, bad: str) -> None:
    for read in (store.load_run, store.load_run_suspension, store.list_run_records):
        with pytest.raises(InvalidArgumentError):
            read(bad)


@BAD
@pytest.mark.parametrize("field", ["agent_id", "run_id"])
def test_memory_ids_with_bad_text_are_invalid_argument(
    store: Backend, bad: str, field: str
) -> None:
    ids = {"agent_id": "agent-1", "run_id": uid("run"), field: bad}
    event = MemoryEvent(type="user_message", timestamp=at(1), data={"text": "hi"})
    with pytest.raises(InvalidArgumentError):
        store.append_memory_events(ids["agent_id"], ids["run_id"], [event])
    with pytest.raises(InvalidArgumentError):
        store.load_memory(ids["agent_id"], ids["run_id"])


# --- JSON text: NUL kept, lone surrogates refused ------------------------------------------


def test_labels_keep_an_escaped_nul_and_return_it_unchanged(store: Backend) -> None:
    session_id = new_session(store).id
    labels = {"k\x00ey": "va\x00lue"}
    run = start_root(store, session_id, labels=labels).run
    assert store.load_run(run.run_id).labels == labels


@pytest.mark.parametrize("where", ["key", "value"])
def test_label_with_lone_surrogate_is_invalid_argument(store: Backend, where: str) -> None:
    session_id = new_session(store).id
    labels = {SURROGATE: "v"} if where == "key" else {"k": SURROGATE}
    run = run_start(session_id=session_id, labels=labels)
    _refused(
        store,
        lambda: store.start_root_run(*_started(run)),  # type: ignore[arg-type]
        session_id=session_id,
    )


def test_memory_data_and_labels_keep_an_escaped_nul(store: Backend) -> None:
    run_id = uid("run")
    event = MemoryEvent(
        type="planner_note",
        timestamp=at(1),
        data={"te\x00xt": ["n\x00l"]},
        labels={"l\x00": "v\x00"},
    )
    store.append_memory_events("agent-1", run_id, [event])
    assert store.load_memory("agent-1", run_id).events == [event]


@pytest.mark.parametrize("where", ["data", "labels"])
def test_memory_event_with_lone_surrogate_is_invalid_argument(store: Backend, where: str) -> None:
    run_id = uid("run")
    event = MemoryEvent(
        type="planner_note",
        timestamp=at(1),
        data={"text": SURROGATE} if where == "data" else {},
        labels={"k": SURROGATE} if where == "labels" else {},
    )
    with pytest.raises(InvalidArgumentError):
        store.append_memory_events("agent-1", run_id, [event])
    assert store.load_memory("agent-1", run_id).events == []


def test_terminal_after_refused_text_still_works(store: Backend) -> None:
    """A refused write leaves the run writable: the refusal wrote nothing, held nothing."""
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    with pytest.raises(InvalidArgumentError):
        store.append_run_record(replace(record(run), event_key=NUL))
    store.append_run_record(record(run, event_key="fine"))
    assert store.load_run(run.run_id).status is RunStatus.RUNNING
