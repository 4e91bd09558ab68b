"""Memory appends carry no event keys: an idempotency key makes their retries safe."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import EventConflictError, MemoryEvent
from tests.contract.builders import at


def _event(text: str) -> MemoryEvent:
    return MemoryEvent(type="user_message", timestamp=at(1), data={"text": text})


def test_an_append_retried_with_its_idempotency_key_is_stored_once(engine: Engine) -> None:
    store = SqlStore(engine)
    events = [_event("a"), _event("b")]
    store.append_memory_events("agent", "run", events, idempotency_key="k-1")
    store.append_memory_events("agent", "run", events, idempotency_key="k-1")
    assert store.load_memory("agent", "run").events == events


def test_the_same_key_for_another_run_or_agent_is_another_append(engine: Engine) -> None:
    store = SqlStore(engine)
    store.append_memory_events("agent", "run", [_event("a")], idempotency_key="k")
    store.append_memory_events("agent", "other-run", [_event("b")], idempotency_key="k")
    store.append_memory_events("other-agent", "run", [_event("c")], idempotency_key="k")
    assert [e.data["text"] for e in store.load_memory("agent", "run").events] == ["a"]
    assert [e.data["text"] for e in store.load_memory("agent", "other-run").events] == ["b"]
    assert [e.data["text"] for e in store.load_memory("other-agent", "run").events] == ["c"]


def test_appends_without_a_key_are_each_stored(engine: Engine) -> None:
    store = SqlStore(engine)
    store.append_memory_events("agent", "run", [_event("a")])
    store.append_memory_events("agent", "run", [_event("a")])
    assert len(store.load_memory("agent", "run").events) == 2


def test_a_key_repeated_with_other_events_is_event_conflict_and_stores_nothing(
    engine: Engine,
) -> None:
    """2.7: idempotency keys are exact, never a silent drop of the second write."""
    store = SqlStore(engine)
    store.append_memory_events("agent", "run", [_event("a")], idempotency_key="k-1")
    with pytest.raises(EventConflictError) as info:
        store.append_memory_events("agent", "run", [_event("b")], idempotency_key="k-1")
    assert (info.value.run_id, info.value.event_key, info.value.status) == ("run", "k-1", 409)
    with pytest.raises(EventConflictError):
        store.append_memory_events(
            "agent", "run", [_event("a"), _event("a")], idempotency_key="k-1"
        )
    assert store.load_memory("agent", "run").events == [_event("a")]


def test_a_key_repeated_with_the_same_events_in_another_key_order_is_a_retry(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    first = MemoryEvent(
        type="tool_call", timestamp=at(1), data={"a": 1, "b": [2]}, labels={"x": "1", "y": "2"}
    )
    same = MemoryEvent(
        type="tool_call", timestamp=at(1), data={"b": [2], "a": 1}, labels={"y": "2", "x": "1"}
    )
    store.append_memory_events("agent", "run", [first], idempotency_key="k")
    store.append_memory_events("agent", "run", [same], idempotency_key="k")
    assert store.load_memory("agent", "run").events == [first]
