"""The file has one spelling (CONTRACT.md 11.4): the record line and the times written
directly, for speed, are exactly what the generic encoder and the API write."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.storage.transfer.format import encode_line, record_line, time_text
from runtime_store_client.times import format_rfc3339_general, from_epoch_millis, to_epoch_millis

EDGES = [
    to_epoch_millis(datetime(1, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)),
    to_epoch_millis(datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)),
    -1,
    0,
    999,
    to_epoch_millis(datetime(2024, 2, 29, 12, 0, 0, 7000, tzinfo=UTC)),
    to_epoch_millis(datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)),
]


@pytest.mark.parametrize("ms", EDGES)
def test_a_time_is_written_as_the_api_writes_it(ms: int) -> None:
    assert time_text(ms) == format_rfc3339_general(from_epoch_millis(ms))
    assert time_text(None) is None


def test_a_record_line_is_what_the_encoder_writes() -> None:
    payload = '{"text":"é \u2028 \\u0000 \\"q\\"","n":[1.50, 2]}'
    row = (
        12,
        'key "é"\\',
        "run\u2029",
        "agent",
        "sess",
        "turn\t1",
        "planner_note",
        payload.encode(),
        0,
    )
    expected = {
        "record": {
            "id": "12",
            "event_key": row[1],
            "run_id": row[2],
            "agent_id": "agent",
            "session_id": "sess",
            "turn_id": row[5],
            "type": "planner_note",
            "payload": payload,
            "timestamp": "1970-01-01T00:00:00.000Z",
        }
    }

    assert record_line(row) == encode_line(expected)
    assert record_line(row).count(b"\n") == 1
