"""The run page's shape without a server: the waterfall's times, gaps and pairs, the
checkpoint preview, and the run page's state in its URL (issue 48)."""

from __future__ import annotations

from datetime import timedelta

from app.console.checkpoints import PREVIEW_BYTES, preview, summary
from app.console.run_state import RunState
from app.console.waterfall import elapsed, record_link, waterfall
from runtime_store_client import Checkpoint, Record
from tests.contract.builders import T0, dumps, run_start, uid

RUN = run_start(run_id="run-w", agent_id="a", session_id="s")


def rec(number: int, type: str, ms: int, payload: object = None, turn: str = "") -> Record:
    return Record(
        id=str(number),
        event_key=uid("k"),
        run_id=RUN.run_id,
        agent_id=RUN.agent_id,
        session_id=RUN.session_id,
        turn_id=turn,
        type=type,
        payload=dumps(payload if payload is not None else {"n": number}),
        timestamp=T0 + timedelta(milliseconds=ms),
    )


def test_elapsed_reads_short_and_long_times() -> None:
    assert [elapsed(ms) for ms in (0, 850, 1250, 12_500, 61_000, 3_723_000)] == [
        "0 ms",
        "850 ms",
        "1.25 s",
        "12.5 s",
        "1 min 1 s",
        "1 h 2 min",
    ]


def test_tool_calls_pair_by_the_runtime_call_id_and_long_gaps_are_marked() -> None:
    records = [
        rec(1, "run_started", 0),
        rec(2, "tool_call_scheduled", 100, {"ToolCallID": "a", "ToolName": "search"}),
        rec(3, "tool_call_scheduled", 200, {"tool_call_id": "b", "tool_name": "fetch"}),
        rec(4, "tool_result_received", 1_300, {"ToolCallID": "a"}),
        rec(5, "tool_result_received", 30_200, {"tool_call_id": "b"}, turn="t"),
        rec(6, "tool_result_received", 30_300, {"ToolCallID": "elsewhere"}, turn="t"),
        rec(7, "tool_result_received", 30_400, "not an object"),
        rec(8, "run_completed", 31_000),
    ]
    shown = waterfall(T0, records, None)
    by_id = {row.id: row for row in shown.rows}
    assert by_id["1"].gap_ms is None
    assert by_id["2"].pair is not None
    assert (by_id["2"].pair.name, by_id["2"].pair.duration_ms) == ("search", 1_200)
    assert by_id["4"].pair is not None
    assert by_id["4"].pair.other_id == "2"
    assert by_id["3"].pair is not None
    assert (by_id["3"].pair.other_id, by_id["3"].pair.duration) == ("5", "30.0 s")
    assert by_id["6"].pair is not None
    assert by_id["6"].pair.duration_ms is None  # its call is not among the records
    assert by_id["7"].pair is None
    assert by_id["8"].pair is not None
    assert by_id["8"].pair.duration_ms == 31_000
    assert [row.id for row in shown.rows if row.long_gap] == ["5"]  # 28.9 s of 31 s
    assert shown.long_gaps == 1
    assert (by_id["8"].x, by_id["3"].width) == ("100.00", "96.77")
    assert [(turn.turn_id, turn.records, turn.duration) for turn in shown.turns] == [
        ("t", 2, "100 ms")
    ]


def test_a_page_after_the_first_measures_its_first_gap_from_the_record_before() -> None:
    shown = waterfall(T0, [rec(101, "usage", 5_000)], T0 + timedelta(milliseconds=4_000))
    assert (shown.rows[0].at_ms, shown.rows[0].gap_ms) == (5_000, 1_000)


def test_a_checkpoint_preview_is_bounded_text_or_hexadecimal() -> None:
    text = preview(('{"a":"' + "é" * 300 + '"}').encode())
    assert text.kind == "text"
    assert text.shown <= PREVIEW_BYTES
    assert text.cut
    assert text.text.startswith('{"a":"éé')
    hostile = preview(b"<script>alert(1)</script>")
    assert (hostile.kind, hostile.text, hostile.cut) == ("text", "<script>alert(1)</script>", False)
    binary = preview(bytes(range(256)))
    assert binary.kind == "hex"
    assert binary.text.startswith("00 01 02")
    assert binary.shown == PREVIEW_BYTES // 3


def test_the_checkpoint_summary_names_the_record_that_suspended_the_run() -> None:
    records = [rec(1, "run_started", 0), rec(2, "run_suspended", 900, {"SuspensionID": "cp"})]
    found = summary(Checkpoint(id="cp", data=b"state"), records)
    assert (found.id, found.size, found.record_id) == ("cp", 5, "2")
    assert summary(Checkpoint(id="cp", data=b"state"), records[:1]).record_id == ""


def test_the_run_pages_links_keep_every_sections_position() -> None:
    state = RunState(
        run_id="a/b", records_type=("usage",), children_cursor="c1", timeline_cursor="100"
    )
    assert state.page("children", children_cursor="c2") == (
        "/console/run?run_id=a%2Fb&records_type=usage&children_cursor=c2&timeline_cursor=100"
        "#children"
    )
    assert record_link(state, "8") == (
        "/console/run?run_id=a%2Fb&records_cursor=7&children_cursor=c1&timeline_cursor=100#record-8"
    )
    assert state.fragment("timeline").startswith("/console/fragments/run/timeline?run_id=a%2Fb")
