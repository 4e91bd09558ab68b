"""Record, transcript and seed pages are read by one fast layer that agrees with the generated
models.

The generated client stays the single description of the wire: the page request is the
generated endpoint's, and the fast reading of a 200 body (``record_page_json``) must give
exactly what ``record_page(RecordPageBody.from_dict(body))`` gives, or refuse the body so
that the generated models read it (with their errors) as before.
"""

from __future__ import annotations

import binascii
import json
from dataclasses import FrozenInstanceError, fields
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from runtime_store_client import HttpStore, Record
from runtime_store_client._generated.models import (
    RecordPageBody,
    SeedPageBody,
    TranscriptPageBody,
)
from runtime_store_client._records import FIELDS, trusted_record
from runtime_store_client.http import _convert as c
from runtime_store_client.http import _seeds
from runtime_store_client.transcript import (
    CacheCheckpointPart,
    DocumentFormat,
    DocumentPart,
    ImageFormat,
    ImagePart,
    Message,
    Role,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    encode_message,
)

ITEM: dict[str, Any] = {
    "id": "7",
    "event_key": "evt-7",
    "run_id": "run-1",
    "agent_id": "agent-1",
    "session_id": "sess-1",
    "turn_id": "turn-1",
    "type": "planner_note",
    "payload": '{"note":"caf\u00e9 \U0001f600","n":[1,2]}',
    "timestamp": "2026-11-30T01:02:03.456Z",
}

BODIES = {
    "full": {"records": [ITEM], "next_cursor": "7"},
    "empty": {"records": [], "next_cursor": ""},
    "optional_fields_absent": {
        "records": [{k: v for k, v in ITEM.items() if k not in ("id", "session_id", "turn_id")}],
        "next_cursor": "",
    },
    "optional_fields_null": {
        "records": [{**ITEM, "id": None, "session_id": None, "turn_id": None}],
        "next_cursor": "",
    },
    "offset_timestamp": {
        "records": [{**ITEM, "timestamp": "2026-11-30T03:02:03.456+02:00"}],
        "next_cursor": "x",
    },
    "many": {
        "records": [{**ITEM, "id": str(n), "event_key": f"e{n}"} for n in range(100)],
        "next_cursor": "99",
    },
}


def _generated(body: Any) -> Any:
    return c.record_page(RecordPageBody.from_dict(body))


def test_the_fast_record_builder_sets_exactly_the_record_fields() -> None:
    assert set(FIELDS) == {field.name for field in fields(Record)}
    values: dict[str, Any] = {
        "id": "1",
        "event_key": "e",
        "run_id": "r",
        "agent_id": "a",
        "session_id": "s",
        "turn_id": "t",
        "type": "planner_note",
        "payload": b"{}",
        "timestamp": datetime(2026, 11, 30, tzinfo=UTC),
    }
    built = trusted_record(*(values[name] for name in FIELDS))

    assert built == Record(**values)
    assert hash(built) == hash(Record(**values))
    with pytest.raises(FrozenInstanceError):
        built.id = "2"  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_fast_page_reading_equals_the_generated_models(name: str) -> None:
    body = json.loads(json.dumps(BODIES[name]))

    assert c.record_page_json(body) == _generated(body)


@pytest.mark.parametrize(
    "item",
    [
        pytest.param({**ITEM, "event_key": 5}, id="number_for_a_string"),
        pytest.param({**ITEM, "payload": None}, id="null_payload"),
        pytest.param({k: v for k, v in ITEM.items() if k != "timestamp"}, id="no_timestamp"),
        pytest.param({**ITEM, "timestamp": "yesterday"}, id="unreadable_timestamp"),
    ],
)
def test_the_fast_page_reading_refuses_what_it_cannot_read_exactly(item: Any) -> None:
    with pytest.raises((KeyError, TypeError, ValueError, AttributeError)):
        c.record_page_json({"records": [item], "next_cursor": ""})


def test_a_body_the_fast_reading_refuses_is_read_by_the_generated_models() -> None:
    # The generated models accept a number where the wire says string (they never check):
    # the client answers as it did before the fast layer existed.
    body = {"records": [{**ITEM, "event_key": 5}], "next_cursor": ""}

    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=body)

    transport = httpx.MockTransport(handler)
    with HttpStore("http://runtime-store.test", httpx_args={"transport": transport}) as store:
        page = store.list_run_records("run-1")

    assert page == _generated(body)
    assert page.records[0].event_key == 5  # type: ignore[comparison-overlap]


# --- transcript pages ------------------------------------------------------------------

#: One message of every part kind, as the service writes a transcript page.
MESSAGES: list[Message] = [
    Message(role=Role.SYSTEM, parts=[TextPart(text="You plan searches.")]),
    Message(
        role=Role.ASSISTANT,
        parts=[
            ThinkingPart(text="The report.", signature="sig"),
            ThinkingPart(text="", redacted=b"\x00\x01"),
            ToolUsePart(id="toolu_1", name="search", input={"q": "caf\u00e9", "n": [1, 2.5]}),
        ],
    ),
    Message(
        role=Role.USER,
        parts=[
            ToolResultPart(tool_use_id="toolu_1", content={"hits": 2}, is_error=False),
            ToolResultPart(tool_use_id="toolu_2", content="text result", is_error=True),
            ImagePart(format=ImageFormat("png"), bytes=b"\x89PNG"),
            DocumentPart(name="a.pdf", format=DocumentFormat("pdf"), bytes=bytes(8)),
            CacheCheckpointPart(),
        ],
    ),
]


def _transcript_body(messages: list[Message], next_cursor: str = "") -> Any:
    return json.loads(
        json.dumps({"messages": [encode_message(m) for m in messages], "next_cursor": next_cursor})
    )


def test_the_fast_transcript_reading_equals_the_generated_models() -> None:
    for body in (_transcript_body(MESSAGES, "9"), _transcript_body([])):
        fast = c.transcript_page_json(body)
        assert fast == c.transcript_page(TranscriptPageBody.from_dict(body))
        assert fast[0] == (MESSAGES if body["messages"] else [])


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"messages": [{"role": "user"}], "next_cursor": ""}, id="no_parts"),
        pytest.param({"messages": "nope", "next_cursor": ""}, id="not_a_list"),
        pytest.param({"messages": [], "next_cursor": 5}, id="number_for_a_cursor"),
        pytest.param({"next_cursor": ""}, id="no_messages"),
    ],
)
def test_the_fast_transcript_reading_refuses_what_it_cannot_read(body: Any) -> None:
    with pytest.raises((KeyError, TypeError, ValueError, AttributeError)):
        c.transcript_page_json(body)


# --- seed pages (CONTRACT.md 15.4) ----------------------------------------------------------

SEED_ITEMS: list[dict[str, Any]] = [
    {
        "id": "1",
        "key": "a",
        "previous_id": "0",
        "prefix": {
            "run_id": "run-0",
            "end_id": "3",
            "exclude_system": True,
            "exclude_reasoning": False,
        },
    },
    {"id": "2", "key": "b", "previous_id": "1", "messages": ' [ {"t":"caf\u00e9 \U0001f600"} ] '},
    {"id": "3", "key": "c", "previous_id": "2", "literal_part": {"data": "WyJh", "final": False}},
    {"id": "4", "key": "d", "previous_id": "3", "literal_part": {"data": "Il0=", "final": True}},
    {"id": "5", "key": "e", "previous_id": "4", "prepared": "AP8="},
]


def test_the_fast_seed_page_reading_equals_the_generated_models() -> None:
    for sent in ({"records": SEED_ITEMS, "next_cursor": "5"}, {"records": [], "next_cursor": ""}):
        body = json.loads(json.dumps(sent))
        fast = _seeds._seed_page_json(body)
        assert fast == _seeds._seed_page(SeedPageBody.from_dict(body))
    page = _seeds._seed_page_json({"records": SEED_ITEMS, "next_cursor": "5"})
    assert page.records[1].messages == SEED_ITEMS[1]["messages"].encode()
    assert page.records[4].prepared == b"\x00\xff"


@pytest.mark.parametrize(
    "item",
    [
        pytest.param({**SEED_ITEMS[1], "prepared": "AP8="}, id="two_variants"),
        pytest.param({k: v for k, v in SEED_ITEMS[1].items() if k != "messages"}, id="none"),
        pytest.param({**SEED_ITEMS[4], "prepared": "AP8"}, id="unpadded"),
        pytest.param({**SEED_ITEMS[2], "literal_part": {"data": "WyJh", "final": 1}}, id="int"),
    ],
)
def test_the_fast_seed_page_reading_refuses_what_it_cannot_read_exactly(item: Any) -> None:
    with pytest.raises((KeyError, TypeError, ValueError, AttributeError, binascii.Error)):
        _seeds._seed_page_json({"records": [item], "next_cursor": ""})
