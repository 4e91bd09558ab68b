"""What the console's templates get: pairs, sizes and text shaped from the API's answers."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from app.console.views import (
    Finding,
    RecordView,
    base64_size,
    conversation,
    findings_by_message,
    run_facts,
    thinking_used,
)
from runtime_store_client import Record, TranscriptViolation


def _record(type_: str, payload: str, record_id: str = "") -> Record:
    return Record(
        id=record_id,
        event_key=f"key-{type_}",
        run_id="run-1",
        agent_id="planner",
        type=type_,
        payload=payload.encode(),
        timestamp=datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=UTC),
    )


def _b64(size: int) -> str:
    return base64.b64encode(bytes(size)).decode()


def test_base64_sizes_are_counted_without_decoding() -> None:
    for size in (0, 1, 2, 3, 4, 1000, 2048):
        assert base64_size(_b64(size)) == size
    assert base64_size(None) == 0


def test_a_tool_call_is_paired_with_its_result_by_the_models_id_only() -> None:
    messages = [
        {
            "role": "assistant",
            "parts": [{"kind": "tool_use", "id": "toolu_1", "name": "search", "input": {}}],
        },
        {
            "role": "user",
            "parts": [
                {
                    "kind": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "ok",
                    "is_error": False,
                },
                {"kind": "tool_result", "tool_use_id": "call-1", "content": 1, "is_error": True},
            ],
        },
    ]
    views = conversation(messages, 10, {})
    (call,) = views[0].parts
    assert [result["message"] for result in call["results"]] == [11]
    paired, unpaired = views[1].parts
    assert paired["call_message"] == 10
    assert "call_message" not in unpaired  # a runtime ID pairs with nothing
    assert unpaired["content_text"] == "1"


def test_images_and_documents_become_placeholders_without_their_bytes() -> None:
    messages = [
        {
            "role": "user",
            "parts": [
                {"kind": "image", "format": "png", "bytes": _b64(2048)},
                {"kind": "document", "name": "a.pdf", "format": "pdf", "bytes": _b64(10)},
                {
                    "kind": "document",
                    "name": "b.md",
                    "format": "md",
                    "bytes": None,
                    "uri": "s3://b",
                },
            ],
        }
    ]
    image, document, linked = conversation(messages, 0, {})[0].parts
    assert image["size"] == "2.0 KiB"
    assert "bytes" not in image
    assert document["source"] == "10 B of bytes"
    assert "bytes" not in document
    assert linked["source"] == "at s3://b"


def test_findings_land_on_the_messages_they_name() -> None:
    checks = {
        "planner": [TranscriptViolation(index=1, rule="tool_result_count", message="m")],
        "bedrock": [TranscriptViolation(index=-1, rule="payload", message="w")],
    }
    found = findings_by_message(checks)
    assert found[1] == [Finding("planner", "tool_result_count", "m")]
    assert found[-1] == [Finding("bedrock", "payload", "w")]
    views = conversation([{"role": "user", "parts": []}] * 3, 0, found)
    assert [len(view.findings) for view in views] == [0, 1, 0]


def test_run_facts_come_from_lifecycle_records_and_ignore_other_payloads() -> None:
    records = [
        _record("run_started", '{"PredecessorRunID": "run-0"}'),
        _record("planner_note", "not json"),
        _record(
            "run_completed",
            '{"status": "failed", "failure": {"kind": "timeout", "message": "m"}}',
        ),
    ]
    facts = run_facts(records)
    assert facts["predecessor_run_id"] == "run-0"
    assert facts["outcome"]["failure"]["kind"] == "timeout"
    assert run_facts([])["outcome"] is None


def test_payloads_are_pretty_printed_when_json_and_kept_as_is_otherwise() -> None:
    shown = RecordView.of(_record("t", '{"a":[1,2]}', "1"))
    assert shown.payload == '{\n  "a": [\n    1,\n    2\n  ]\n}'
    assert shown.size == 11
    assert shown.timestamp == "2026-11-30T01:02:03.456Z"  # as the API writes times
    assert RecordView.of(_record("t", "<b>not json")).payload == "<b>not json"


def test_thinking_counts_as_used_when_any_message_has_it() -> None:
    assert thinking_used([{"parts": [{"kind": "thinking"}]}])
    assert not thinking_used([{"parts": None}, {"parts": [{"kind": "text"}]}])
