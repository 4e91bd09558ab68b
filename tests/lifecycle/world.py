"""A session that holds every kind of fact an export must carry (CONTRACT.md 11.4).

Runs of every status and start outcome, a child with its link and an explicit
cancellation, a suspension with opaque checkpoint bytes and its one continuation, a
suspended child continued under its parent's continuation (12.4), a request digest (12.1), labels
with non-ASCII text and an escaped NUL, payloads whose text must come back byte for byte
(non-ASCII, U+2028, escapes, odd spacing), memory of two agents with idempotency keys,
and a run that is still running. ``starts`` keeps every start call with its result, so a
test can retry each on another store and expect the same answer.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.storage import SqlStore
from runtime_store_client import MemoryEvent, RunStart, RunStatus, StoreError
from tests.contract.builders import (
    T0,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)

LABELS = {"team": "söhne", "nul": "a\x00b"}
#: The request digest of the running run's start (12.1).
DIGEST = bytes(range(100, 132))


@dataclass
class World:
    session_id: str
    running: RunStart
    suspended: RunStart
    finished: RunStart
    #: (start method, its arguments, its result, its keyword arguments) of every start.
    starts: list[tuple[str, tuple[Any, ...], Any, dict[str, Any]]] = field(default_factory=list)
    #: (agent, run, idempotency key, events) of every memory append.
    memory: list[tuple[str, str, str, list[MemoryEvent]]] = field(default_factory=list)


def _start(store: Any, world: World, method: str, *args: Any, **kwargs: Any) -> Any:
    result = getattr(store, method)(*args, **kwargs)
    world.starts.append((method, args, result, kwargs))
    return result


def build_world(store: SqlStore, session_id: str | None = None, *, notes: int = 3) -> World:
    """The session (ended at the end), written through ``store``'s public operations."""
    session_id = session_id or uid("sess")
    store.create_session(session_id, T0)
    root = run_start(session_id=session_id, labels=LABELS)
    world = World(session_id, running=root, suspended=root, finished=root)
    _start(store, world, "start_root_run", root, started_record(root), canceled_record(root))
    payloads = [
        '{"text":"héllo \u2028 wörld","n":1.50}',
        '{ "spaced" : [1, 2,\n3] }',
        '"just a string with \\u0000 escaped"',
    ]
    for index in range(notes):
        text = payloads[index % len(payloads)].encode()
        store.append_run_record(
            record(root, type="planner_note", payload=text, turn_id=f"turn-{index}")
        )
    child = run_start(session_id=session_id, parent_run_id=root.run_id, agent_id="agent-2")
    _start(
        store,
        world,
        "start_child_run",
        child,
        link_record(root, child),
        started_record(child),
        canceled_record(child),
    )
    store.record_run_cancellation(child.run_id, "user_requested", cancellation_record(child))
    store.record_run_terminal(
        child.run_id,
        RunStatus.CANCELED,
        terminal_record(child, RunStatus.CANCELED, reason="user_requested"),
    )
    waiting = run_start(session_id=session_id, parent_run_id=root.run_id, agent_id="agent-4")
    _start(
        store,
        world,
        "start_child_run",
        waiting,
        link_record(root, waiting),
        started_record(waiting),
        canceled_record(waiting),
    )
    store.record_run_suspension(
        waiting.run_id, checkpoint("cp-w"), suspended_record(waiting, "cp-w")
    )
    data = bytes(range(256))
    store.record_run_suspension(root.run_id, checkpoint("cp-1", data), suspended_record(root))
    successor = run_start(session_id=session_id, predecessor_run_id=root.run_id, labels=LABELS)
    _start(
        store,
        world,
        "start_root_run",
        successor,
        started_record(successor),
        canceled_record(successor),
    )
    # 12.4: the waiting child continues under the resumed parent.
    resumed = run_start(
        session_id=session_id,
        parent_run_id=successor.run_id,
        agent_id="agent-4",
        predecessor_run_id=waiting.run_id,
    )
    _start(
        store,
        world,
        "start_child_run",
        resumed,
        link_record(successor, resumed),
        started_record(resumed),
        canceled_record(resumed),
    )
    store.record_run_terminal(
        resumed.run_id, RunStatus.COMPLETED, terminal_record(resumed, RunStatus.COMPLETED)
    )
    store.record_run_terminal(
        successor.run_id, RunStatus.FAILED, terminal_record(successor, RunStatus.FAILED)
    )
    running = run_start(session_id=session_id, started_at=at(1))
    _start(
        store,
        world,
        "start_root_run",
        running,
        started_record(running),
        canceled_record(running),
        request_digest=DIGEST,
    )
    for agent, run in (("agent-1", root), ("agent-3", running)):
        key = uid("mem")
        events = [
            MemoryEvent(type="user_message", timestamp=T0, data={"b": [1, 2.5], "a": "é"}),
            MemoryEvent(type="tool_call", timestamp=at(2), data={}, labels={"z": "1", "a": "2"}),
        ]
        store.append_memory_events(agent, run.run_id, events, idempotency_key=key)
        world.memory.append((agent, run.run_id, key, events))
    store.end_session(session_id, at(500))
    stopped = run_start(session_id=session_id, started_at=at(600))
    _start(
        store, world, "start_root_run", stopped, started_record(stopped), canceled_record(stopped)
    )
    world.running, world.suspended, world.finished = running, root, successor
    return world


def exported(store: Any, session_id: str) -> bytes:
    """The session's export, whole."""
    buffer = io.BytesIO()
    store.export_session(session_id, buffer)
    return buffer.getvalue()


def retry_starts(store: Any, world: World) -> list[Any]:
    """Every start of the world again, exactly: each answers as it did the first time."""
    return [getattr(store, method)(*args, **kwargs) for method, args, _, kwargs in world.starts]


def outcome(call: Callable[[], Any]) -> Any:
    """The result of ``call``, or its error code."""
    try:
        return call()
    except StoreError as exc:
        return exc.code
