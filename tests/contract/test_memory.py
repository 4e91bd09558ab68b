"""The product memory store (CONTRACT.md section 9)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, cast

import pytest

from runtime_store_client import (
    MEMORY_EVENT_TYPES,
    InvalidArgumentError,
    MemoryEvent,
    Snapshot,
)
from tests.contract.builders import Backend, at, uid


def event(
    type_: str = "user_message", *, n: int = 0, timestamp: datetime | None = None
) -> MemoryEvent:
    return MemoryEvent(
        type=type_,
        timestamp=timestamp or at(n),
        data={"n": n, "text": f"event {n}"},
        labels={"seq": str(n)},
    )


def assert_memory_rejected(
    store: Backend, agent_id: str, run_id: str, events: list[MemoryEvent]
) -> None:
    """The append fails with ``invalid_argument`` and the snapshot is unchanged."""
    before = store.load_memory(agent_id, run_id)
    with pytest.raises(InvalidArgumentError) as info:
        store.append_memory_events(agent_id, run_id, events)
    assert type(info.value) is InvalidArgumentError
    assert info.value.code == "invalid_argument"
    assert store.load_memory(agent_id, run_id) == before


def test_unknown_run_has_empty_snapshot(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")

    snapshot = store.load_memory(agent_id, run_id)

    assert snapshot == Snapshot(agent_id=agent_id, run_id=run_id, events=[])


def test_events_come_back_in_append_order_across_appends(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    # Later appends carry earlier timestamps: order is append order, not time order.
    batches = [
        [event(n=5), event("assistant_message", n=4)],
        [event("tool_call", n=3)],
        [event("tool_result", n=2), event("thinking", n=1), event("planner_note", n=0)],
    ]

    for batch in batches:
        store.append_memory_events(agent_id, run_id, batch)

    snapshot = store.load_memory(agent_id, run_id)
    assert snapshot == Snapshot(
        agent_id=agent_id, run_id=run_id, events=[e for batch in batches for e in batch]
    )


@pytest.mark.parametrize("type_", sorted(MEMORY_EVENT_TYPES))
def test_each_memory_event_type_is_accepted(store: Backend, type_: str) -> None:
    agent_id, run_id = uid("agent"), uid("run")

    store.append_memory_events(agent_id, run_id, [event(type_)])

    assert [e.type for e in store.load_memory(agent_id, run_id).events] == [type_]


@pytest.mark.parametrize("type_", ["", "user", "User_Message", "tool_use", "unknown"])
def test_unknown_event_type_is_invalid_argument(store: Backend, type_: str) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    store.append_memory_events(agent_id, run_id, [event(n=1)])

    assert_memory_rejected(store, agent_id, run_id, [event(type_, n=2)])


def test_append_is_atomic(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    store.append_memory_events(agent_id, run_id, [event(n=1)])

    assert_memory_rejected(
        store, agent_id, run_id, [event(n=2), event("not_a_type", n=3), event(n=4)]
    )


def test_empty_append_is_a_no_op(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    store.append_memory_events(agent_id, run_id, [event(n=1)])
    before = store.load_memory(agent_id, run_id)

    store.append_memory_events(agent_id, run_id, [])

    assert store.load_memory(agent_id, run_id) == before


def test_empty_append_to_unknown_run_leaves_it_empty(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")

    store.append_memory_events(agent_id, run_id, [])

    assert store.load_memory(agent_id, run_id) == Snapshot(
        agent_id=agent_id, run_id=run_id, events=[]
    )


def test_memory_is_keyed_by_agent_and_run_together(store: Backend) -> None:
    agent_a, agent_b = uid("agent"), uid("agent")
    run_1, run_2 = uid("run"), uid("run")
    store.append_memory_events(agent_a, run_1, [event(n=1)])
    store.append_memory_events(agent_b, run_1, [event(n=2)])
    store.append_memory_events(agent_a, run_2, [event(n=3)])

    assert store.load_memory(agent_a, run_1).events == [event(n=1)]
    assert store.load_memory(agent_b, run_1).events == [event(n=2)]
    assert store.load_memory(agent_a, run_2).events == [event(n=3)]
    assert store.load_memory(agent_b, run_2).events == []


def test_data_and_labels_round_trip(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    sent = MemoryEvent(
        type="tool_result",
        timestamp=at(123),
        data={
            "text": "caf\u00e9 \u65e5\u672c \U0001f389 e\u0301",
            "int": 42,
            "float": 1.5,
            "negative": -7,
            "bool": True,
            "none": None,
            "list": [1, "two", {"three": [3]}],
            "nested": {"deep": {"deeper": {"key": "value"}}},
            "empty_object": {},
            "empty_list": [],
        },
        labels={"tool": "search", "unicode": "\u00fc\u00f1\u00ee"},
    )

    store.append_memory_events(agent_id, run_id, [sent])

    (received,) = store.load_memory(agent_id, run_id).events
    assert received.type == sent.type
    assert received.timestamp == sent.timestamp
    assert dict(received.data) == dict(sent.data)
    assert dict(received.labels) == dict(sent.labels)


def test_empty_data_and_labels_round_trip(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    sent = MemoryEvent(type="thinking", timestamp=at(1))

    store.append_memory_events(agent_id, run_id, [sent])

    assert store.load_memory(agent_id, run_id).events == [sent]


INVALID_EVENTS = [
    pytest.param({"data": cast(Any, ["not", "an", "object"])}, id="data_array"),
    pytest.param({"data": cast(Any, "text")}, id="data_string"),
    pytest.param({"data": {"value": float("nan")}}, id="data_nan"),
    pytest.param({"timestamp": datetime(2026, 11, 30, 1, 2, 3, 456000)}, id="naive_timestamp"),
    pytest.param({"timestamp": at(1) + timedelta(microseconds=1)}, id="sub_millisecond"),
]


@pytest.mark.parametrize("changes", INVALID_EVENTS)
def test_invalid_event_is_invalid_argument(store: Backend, changes: dict[str, Any]) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    store.append_memory_events(agent_id, run_id, [event(n=1)])

    assert_memory_rejected(store, agent_id, run_id, [dataclasses.replace(event(n=2), **changes)])


def test_read_only_mappings_are_accepted_as_data_and_labels(store: Backend) -> None:
    agent_id, run_id = uid("agent"), uid("run")
    sent = MemoryEvent(
        type="planner_note",
        timestamp=at(1),
        data=MappingProxyType({"plan": ["a", "b"]}),
        labels=MappingProxyType({"phase": "plan"}),
    )

    store.append_memory_events(agent_id, run_id, [sent])

    (received,) = store.load_memory(agent_id, run_id).events
    assert dict(received.data) == {"plan": ["a", "b"]}
    assert dict(received.labels) == {"phase": "plan"}
