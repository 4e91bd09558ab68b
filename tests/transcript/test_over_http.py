"""GET /v1/runs/{run_id}/transcript and HttpStore.load_transcript, on live servers."""

from __future__ import annotations

import json

import httpx
import pytest

from runtime_store_client import HttpStore, InvalidTranscriptError, RunNotFoundError, RunStart
from runtime_store_client.transcript import Message, TranscriptRule, encode_messages
from tests.conftest import LiveServer
from tests.contract.builders import new_session, record, start_root
from tests.transcript.samples import assistant, conversation_json, result, text, think, use, user


def _append(store: HttpStore, run: RunStart, key: str, messages: list[Message]) -> None:
    store.append_run_record(
        record(
            run,
            event_key=key,
            type="transcript_messages_appended",
            payload=encode_messages(messages),
        )
    )


def _run(store: HttpStore) -> RunStart:
    return start_root(store, new_session(store).id).run


def test_the_transcript_endpoint_returns_the_replayed_messages_in_order(
    live_server: LiveServer,
) -> None:
    with HttpStore(live_server.base_url) as store:
        run = _run(store)
        payload = json.dumps(conversation_json()).encode()
        store.append_run_record(
            record(run, event_key="seed", type="transcript_messages_seeded", payload=payload)
        )
        store.append_run_record(record(run, event_key="note", payload=b'{"n":1}'))
        _append(store, run, "t1", [user(text("more"))])
        body = httpx.get(f"{live_server.base_url}/v1/runs/{run.run_id}/transcript").json()
        assert body == {
            "messages": [*conversation_json(), _json(user(text("more")))],
            "next_cursor": "",
        }
        assert store.load_transcript(run.run_id) == [
            *_decoded(payload),
            user(text("more")),
        ]


def test_long_transcripts_are_paged_by_record_cursor(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        run = _run(store)
        for n in range(7):
            _append(store, run, f"t{n}", [user(text(f"m{n}"))])
        first = httpx.get(
            f"{live_server.base_url}/v1/runs/{run.run_id}/transcript", params={"limit": 3}
        ).json()
        # Records 1..3: run_started, then the first two transcript records.
        assert [m["parts"][0]["text"] for m in first["messages"]] == ["m0", "m1"]
        assert first["next_cursor"] == "3"
        assert store.load_transcript(run.run_id) == [user(text(f"m{n}")) for n in range(7)]


def test_validate_planner_answers_invalid_transcript_listing_every_violation(
    live_server: LiveServer,
) -> None:
    with HttpStore(live_server.base_url) as store:
        run = _run(store)
        _append(store, run, "t1", [assistant(use("call-1"), use("call-2"))])
        _append(store, run, "t2", [user(result("call-1"))])
        response = httpx.get(
            f"{live_server.base_url}/v1/runs/{run.run_id}/transcript",
            params={"validate": "planner"},
        )
        assert response.status_code == 422
        problem = response.json()
        assert problem["code"] == "invalid_transcript"
        assert problem["run_id"] == run.run_id
        assert {v["rule"] for v in problem["violations"]} >= {TranscriptRule.TOOL_RESULT_COUNT}
        assert all(v["index"] in (0, 1) for v in problem["violations"])
        with pytest.raises(InvalidTranscriptError) as info:
            store.load_transcript(run.run_id, validate="planner")
        assert [str(v.rule) for v in info.value.violations] == [
            v["rule"] for v in problem["violations"]
        ]
        # Without validation the same transcript is simply returned.
        assert len(store.load_transcript(run.run_id)) == 2


def test_validate_bedrock_with_thinking_requires_thinking_first(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        run = _run(store)
        _append(store, run, "t1", [assistant(use("call-1")), user(result("call-1"))])
        assert len(store.load_transcript(run.run_id, validate="bedrock")) == 2
        with pytest.raises(InvalidTranscriptError) as info:
            store.load_transcript(run.run_id, validate="bedrock", thinking=True)
        assert [(v.index, v.rule) for v in info.value.violations] == [
            (0, TranscriptRule.BEDROCK_THINKING_FIRST)
        ]
        other = _run(store)
        _append(store, other, "t1", [assistant(think(), use("c")), user(result("c"))])
        assert len(store.load_transcript(other.run_id, validate="bedrock", thinking=True)) == 2


def test_a_malformed_transcript_record_is_invalid_transcript(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        run = _run(store)
        store.append_run_record(
            record(
                run,
                event_key="bad",
                type="transcript_messages_appended",
                payload=b'[{"role":"user","parts":[{"kind":"text"}],"meta":null}]',
            )
        )
        with pytest.raises(InvalidTranscriptError) as info:
            store.load_transcript(run.run_id)
        assert "bad" in info.value.message
        with pytest.raises(RunNotFoundError):
            store.load_transcript("no-such-run")


def _json(message: Message) -> object:
    return json.loads(encode_messages([message]))[0]


def _decoded(payload: bytes) -> list[Message]:
    from runtime_store_client.transcript import decode_messages

    return decode_messages(payload)
