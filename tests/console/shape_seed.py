"""A run with a shape, written through the real client: the run page's tree, waterfall and
checkpoint summary are tested on it (test_console_shape_browser.py) and photographed
from it (screenshots.py).

In one session: a root run ``triage`` (running); its child ``research-1``, suspended
with a checkpoint and continued by ``research-2`` (a child continuation under the same
parent, CONTRACT.md 3.13); ``research-2`` has two children of its own, two tool calls
(1.8 s and 37.5 s, with a 36.5 s gap before the second one's result), a turn, and ends
suspended in its turn with a JSON checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from runtime_store_client import HttpStore, Record, RunStart, RunStatus
from tests.contract.builders import (
    canceled_record,
    checkpoint,
    dumps,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
)

#: The checkpoint of ``research-2``: JSON an operator can read in the preview.
CHECKPOINT = dumps(
    {"pending": ["approve_purchase"], "step": 7, "cursor": "batch-3", "notes": "x" * 400}
)


@dataclass(frozen=True)
class Shape:
    session_id: str
    root: RunStart
    first: RunStart
    current: RunStart
    children: tuple[RunStart, ...]


def _at(base: datetime, seconds: float) -> datetime:
    return base + timedelta(milliseconds=round(seconds * 1000))


def _note(run: RunStart, key: str, kind: str, payload: dict[str, Any], when: datetime) -> Record:
    return record(
        run, event_key=key, type=kind, payload=dumps(payload), timestamp=when, turn_id="turn-1"
    )


def seed_shape(store: HttpStore, prefix: str, base: datetime) -> Shape:
    """The shaped runs, IDs starting with ``prefix``, times from ``base``."""
    session_id = f"{prefix}chat"
    store.create_session(session_id, base)
    root = run_start(
        run_id=f"{prefix}triage",
        agent_id="triage",
        session_id=session_id,
        started_at=base,
        labels={"team": "support"},
    )
    store.start_root_run(root, started_record(root), canceled_record(root))

    def child(run_id: str, parent: RunStart, seconds: float, **fields: Any) -> RunStart:
        run = run_start(
            run_id=run_id,
            agent_id=fields.pop("agent_id", "researcher"),
            session_id=session_id,
            parent_run_id=parent.run_id,
            started_at=_at(base, seconds),
            **fields,
        )
        link = link_record(
            parent,
            run,
            event_key=f"link-{run_id}",
            tool_name=fields.get("tool_name", "research"),
            tool_call_id="call-research" if parent is root else f"call-{run_id}",
            timestamp=run.started_at,
        )
        store.start_child_run(run, link, started_record(run), canceled_record(run))
        return run

    first = child(f"{prefix}research-1", root, 1)
    store.record_run_suspension(
        first.run_id,
        checkpoint("cp-research-1", b"\x00\x01 binary state \xff"),
        record(
            first,
            event_key="suspend",
            type="run_suspended",
            payload=suspended_record(first, "cp-research-1").payload,
            timestamp=_at(base, 20),
        ),
    )
    current = child(f"{prefix}research-2", root, 30, predecessor_run_id=first.run_id)
    start = 30.0
    store.append_run_records(
        current.run_id,
        [
            _note(current, "prompt", "prompt_rendered", {"template": "research"}, _at(base, 30.2)),
            _note(
                current,
                "call-1",
                "tool_call_scheduled",
                {"ToolCallID": "tc-search", "ToolName": "search", "Payload": {"q": "refund"}},
                _at(base, start + 0.5),
            ),
            _note(
                current,
                "result-1",
                "tool_result_received",
                {"ToolCallID": "tc-search", "ToolName": "search", "Result": {"hits": 3}},
                _at(base, start + 2.3),
            ),
            _note(
                current,
                "call-2",
                "tool_call_scheduled",
                {"ToolCallID": "tc-fetch", "ToolName": "fetch_order", "Payload": {"id": 42}},
                _at(base, start + 3.0),
            ),
        ],
    )
    kids = (
        child(f"{prefix}lookup", current, start + 3.1, agent_id="lookup"),
        child(f"{prefix}summarise", current, start + 3.2, agent_id="writer"),
    )
    store.record_run_terminal(
        kids[0].run_id, RunStatus.COMPLETED, terminal_record(kids[0], RunStatus.COMPLETED)
    )
    store.append_run_records(
        current.run_id,
        [
            _note(
                current,
                "result-2",
                "tool_result_received",
                {"ToolCallID": "tc-fetch", "ToolName": "fetch_order", "Result": {"ok": True}},
                _at(base, start + 40.5),
            ),
            _note(current, "usage", "usage", {"input_tokens": 1200}, _at(base, start + 40.9)),
        ],
    )
    store.record_run_suspension(
        current.run_id,
        checkpoint("cp-research-2", CHECKPOINT),
        record(
            current,
            event_key="suspend",
            type="run_suspended",
            payload=suspended_record(current, "cp-research-2").payload,
            timestamp=_at(base, start + 41.0),
            turn_id="turn-1",
        ),
    )
    return Shape(session_id, root, first, current, kids)
