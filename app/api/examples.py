"""The request examples of the OpenAPI document: one story that a live server accepts.

Swagger UI's "Try it out" sends these as they are. Sent in this order to a fresh service,
each is accepted: a session, a root run ``run-42`` with a child, a literal seed of the
sessionless run ``job-7`` (begun, its messages and its compiled start appended, published),
the one-shot run ``job-7`` attaching it, with a one-shot child (with a request digest),
a synchronous run, notes and a transcript
record, memory, a cancellation request and the terminal record of ``run-42``. The suspension
examples name ``run-42`` too: they fit a running run (a terminal one answers
``run_terminal_conflict``).
tests/docs/test_openapi_examples.py sends them all.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

from .wire import EXAMPLE_DIGEST

SESSION: Final = "chat-session-123"
RUN: Final = "run-42"
AGENT: Final = "planner"
CHILD_RUN: Final = "run-43"
CHILD_AGENT: Final = "researcher"
ONE_SHOT_RUN: Final = "job-7"
ONE_SHOT_AGENT: Final = "summarizer"
ONE_SHOT_CHILD_RUN: Final = "job-8"
ONE_SHOT_CHILD_AGENT: Final = "translator"
LABELS: Final = {"site": "one"}
CHECKPOINT_ID: Final = "cp-1"
#: The request digest of an engine start (12.1): the SHA-256 of the worker's request.
REQUEST_DIGEST: Final = EXAMPLE_DIGEST


def _at(seconds: int) -> str:
    return f"2026-11-30T01:02:{seconds:02d}.456Z"


def _payload(value: dict[str, Any] | list[Any]) -> str:
    return json.dumps(value, separators=(",", ":"))


def _record(
    run: str,
    agent: str,
    session: str,
    key: str,
    type: str,
    payload: dict[str, Any] | list[Any],
    at: str,
) -> dict[str, Any]:
    return {
        "event_key": key,
        "run_id": run,
        "agent_id": agent,
        "session_id": session,
        "type": type,
        "payload": _payload(payload),
        "timestamp": at,
    }


def _started(run: str, agent: str, session: str, at: str, parent: str = "") -> dict[str, Any]:
    labels = LABELS if run == RUN else None
    payload = {"ParentRunID": parent, "PredecessorRunID": "", "Labels": labels}
    return _record(run, agent, session, f"{run}:start", "run_started", payload, at)


def _canceled_at_start(run: str, agent: str, at: str) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "status": "canceled",
        "phase": "canceled",
        "cancellation": {"reason": "session_ended"},
    }
    if run == RUN:
        payload["labels"] = LABELS
    return _record(run, agent, SESSION, f"{run}:start-canceled", "run_completed", payload, at)


def _linked(parent: str, agent: str, session: str, child: str, child_agent: str, at: str) -> Any:
    payload = {
        "ToolName": "delegate",
        "ToolCallID": "toolu_01",
        "ChildRunID": child,
        "ChildAgentID": child_agent,
    }
    key = f"{parent}:link-{child}"
    return _record(parent, agent, session, key, "child_run_linked", payload, at)


def _note(key: str, note: str, seconds: int) -> dict[str, Any]:
    return _record(RUN, AGENT, SESSION, key, "planner_note", {"note": note}, _at(seconds))


CREATE_SESSION: Final = {"session_id": SESSION, "created_at": _at(3)}
END_SESSION: Final = {"ended_at": _at(59)}

ROOT_START: Final = {
    "run": {
        "run_id": RUN,
        "agent_id": AGENT,
        "session_id": SESSION,
        "started_at": _at(4),
        "labels": LABELS,
    },
    "started": _started(RUN, AGENT, SESSION, _at(4)),
    "canceled": _canceled_at_start(RUN, AGENT, _at(4)),
}
CHILD_START: Final = {
    "run": {
        "run_id": CHILD_RUN,
        "agent_id": CHILD_AGENT,
        "session_id": SESSION,
        "parent_run_id": RUN,
        "started_at": _at(5),
    },
    "parent_linked": _linked(RUN, AGENT, SESSION, CHILD_RUN, CHILD_AGENT, _at(5)),
    "started": _started(CHILD_RUN, CHILD_AGENT, SESSION, _at(5), parent=RUN),
    "canceled": _canceled_at_start(CHILD_RUN, CHILD_AGENT, _at(5)),
}
# --- the seed of job-7 (CONTRACT.md 15): a literal, sessionless, published before its start

SEED_RUN_EXAMPLE: Final = ONE_SHOT_RUN
SEED_AGENT_EXAMPLE: Final = ONE_SHOT_AGENT
SEED_COMMAND_EXAMPLE: Final = "cmd-7"
SEED_ATTEMPT_EXAMPLE: Final = "attempt-1"
#: The seed's history end (its one messages record) and body end (the compiled start).
SEED_HISTORY_END_EXAMPLE: Final = "1"
SEED_END_EXAMPLE: Final = "2"
_COMPILED_START: Final = b'{"workflow":"summarize","input":{"document":"q3-report"}}'
BEGIN_RUN_SEED: Final = {
    "declaration": {
        "agent_id": ONE_SHOT_AGENT,
        "run_id": ONE_SHOT_RUN,
        "session_id": "",
        "command_id": SEED_COMMAND_EXAMPLE,
        "attempt_id": SEED_ATTEMPT_EXAMPLE,
        "kind": "literal",
        "source_run_id": "",
        "source_end_id": "",
        "exclude_reasoning": False,
        "rendered_prompts": [
            {"prompt_id": "summarize", "version": "3", "scope": {"session_id": "", "labels": {}}}
        ],
    }
}
APPEND_RUN_SEED: Final = {
    "record": {
        "key": f"{ONE_SHOT_RUN}:history-1",
        "previous_id": "0",
        "messages": _payload(
            [
                {
                    "role": "user",
                    "parts": [{"kind": "text", "text": "Summarize the Q3 report."}],
                    "meta": None,
                }
            ]
        ),
    }
}
#: The second record of the story's attempt: its compiled start (the append operation's
#: example is the first; tests/docs/test_openapi_examples.py sends this one after it).
APPEND_RUN_SEED_PREPARED: Final = {
    "record": {
        "key": f"{ONE_SHOT_RUN}:start-1",
        "previous_id": SEED_HISTORY_END_EXAMPLE,
        "prepared": base64.b64encode(_COMPILED_START).decode("ascii"),
    }
}
PUBLISH_RUN_SEED: Final = {
    "seed_end_id": SEED_HISTORY_END_EXAMPLE,
    "end_id": SEED_END_EXAMPLE,
    "prepared_bytes": len(_COMPILED_START),
}
SETTLE_RUN_PREPARATION: Final = {
    "operation": {
        "agent_id": ONE_SHOT_AGENT,
        "run_id": ONE_SHOT_RUN,
        "session_id": "",
        "command_id": SEED_COMMAND_EXAMPLE,
    }
}

ONE_SHOT_START: Final = {
    "run": {
        "run_id": ONE_SHOT_RUN,
        "agent_id": ONE_SHOT_AGENT,
        "started_at": _at(6),
        "seed_end_id": SEED_HISTORY_END_EXAMPLE,
    },
    "started": _started(ONE_SHOT_RUN, ONE_SHOT_AGENT, "", _at(6)),
    "request_digest": REQUEST_DIGEST,
}
#: A synchronous run (12.2): sessionless, parentless, no request digest.
SYNCHRONOUS_RUN: Final = "callback-9"
SYNCHRONOUS_START: Final = {
    "run": {"run_id": SYNCHRONOUS_RUN, "agent_id": ONE_SHOT_AGENT, "started_at": _at(6)},
    "started": _started(SYNCHRONOUS_RUN, ONE_SHOT_AGENT, "", _at(6)),
}
ONE_SHOT_CHILD_START: Final = {
    "run": {
        "run_id": ONE_SHOT_CHILD_RUN,
        "agent_id": ONE_SHOT_CHILD_AGENT,
        "parent_run_id": ONE_SHOT_RUN,
        "started_at": _at(7),
    },
    "parent_linked": _linked(
        ONE_SHOT_RUN, ONE_SHOT_AGENT, "", ONE_SHOT_CHILD_RUN, ONE_SHOT_CHILD_AGENT, _at(7)
    ),
    "started": _started(ONE_SHOT_CHILD_RUN, ONE_SHOT_CHILD_AGENT, "", _at(7), parent=ONE_SHOT_RUN),
}
APPEND_RECORD: Final = {"record": _note(f"{RUN}:note-1", "looking up the weather", 8)}
_MESSAGES: Final = [
    {"role": "user", "parts": [{"kind": "text", "text": "What is the weather?"}], "meta": None},
    {
        "role": "assistant",
        "parts": [{"kind": "text", "text": "Sunny and 18 degrees."}],
        "meta": None,
    },
]
APPEND_RECORDS: Final = {
    "records": [
        _note(f"{RUN}:note-2", "calling the weather tool", 9),
        _note(f"{RUN}:note-3", "answering", 10),
        _record(
            RUN,
            AGENT,
            SESSION,
            f"{RUN}:messages-1",
            "transcript_messages_appended",
            _MESSAGES,
            _at(10),
        ),
    ]
}
#: The record ID of that transcript record (run-42: run_started, the child's link, three
#: notes, then it): a transcript read up to it, and its key for a read by key.
TRANSCRIPT_THROUGH_EXAMPLE: Final = "6"
RECORD_KEY_EXAMPLE: Final = f"{RUN}:messages-1"
APPEND_MEMORY: Final = {
    "events": [
        {
            "type": "user_message",
            "timestamp": _at(11),
            "data": {"text": "What is the weather?"},
            "labels": LABELS,
        }
    ]
}
CANCELLATION: Final = {
    "reason": "user_requested",
    "record": _record(
        RUN,
        AGENT,
        SESSION,
        f"{RUN}:cancel",
        "runtime.cancellation_intent",
        {"reason": "user_requested"},
        _at(12),
    ),
}
SUSPENSION: Final = {
    "checkpoint": {"id": CHECKPOINT_ID, "data": "AAFvcGFxdWX/"},
    "record": _record(
        RUN,
        AGENT,
        SESSION,
        f"{RUN}:suspend",
        "run_suspended",
        {"SuspensionID": CHECKPOINT_ID, "Version": "1", "PendingCount": 1, "RequiredTools": None},
        _at(13),
    ),
}
TERMINAL: Final = {
    "status": "completed",
    "record": _record(
        RUN,
        AGENT,
        SESSION,
        f"{RUN}:done",
        "run_completed",
        {"status": "success", "phase": "completed", "labels": LABELS},
        _at(14),
    ),
}

#: A subscription (CONTRACT.md 13.1); the story runs with ``hooks.example.com`` on
#: ``RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS``, so no name is resolved when it subscribes.
WEBHOOK_HOST: Final = "hooks.example.com"
CREATE_WEBHOOK: Final = {
    "url": f"https://{WEBHOOK_HOST}/runtime-store",
    "events": ["run.finished", "session.ended"],
}
#: The IDs the webhook routes' path examples name (the store makes the real ones).
WEBHOOK_ID_EXAMPLE: Final = "wh_5f0c2a9e41b37d6c8e1f0a2b"
EVENT_ID_EXAMPLE: Final = "evt_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"

#: The example body of each request model, by its name in the document's schemas.
BY_SCHEMA: Final[dict[str, dict[str, Any]]] = {
    "CreateSessionRequest": CREATE_SESSION,
    "EndSessionRequest": END_SESSION,
    "RootRunStartRequest": ROOT_START,
    "ChildRunStartRequest": CHILD_START,
    "OneShotRunStartRequest": ONE_SHOT_START,
    "OneShotChildRunStartRequest": ONE_SHOT_CHILD_START,
    "SynchronousRunStartRequest": SYNCHRONOUS_START,
    "AppendRecordRequest": APPEND_RECORD,
    "AppendRecordsRequest": APPEND_RECORDS,
    "AppendMemoryRequest": APPEND_MEMORY,
    "CancellationRequest": CANCELLATION,
    "SuspensionRequest": SUSPENSION,
    "TerminalRequest": TERMINAL,
    "CreateWebhookRequest": CREATE_WEBHOOK,
    "BeginRunSeedRequest": BEGIN_RUN_SEED,
    "AppendRunSeedRequest": APPEND_RUN_SEED,
    "PublishRunSeedRequest": PUBLISH_RUN_SEED,
    "SettleRunPreparationRequest": SETTLE_RUN_PREPARATION,
}


def add_request_examples(openapi: dict[str, Any]) -> dict[str, Any]:
    """Give every JSON request body of a model in ``BY_SCHEMA`` its whole-body example.

    Without one, Swagger UI assembles a body from the fields' examples and defaults, which
    the service refuses (an empty ``session_id``, mismatched records).
    """
    for item in openapi.get("paths", {}).values():
        for operation in item.values():
            content = operation.get("requestBody", {}).get("content", {})
            media = content.get("application/json")
            if media is None:
                continue
            name = str(media.get("schema", {}).get("$ref", "")).rpartition("/")[2]
            if name in BY_SCHEMA:
                media["example"] = BY_SCHEMA[name]
    return openapi
