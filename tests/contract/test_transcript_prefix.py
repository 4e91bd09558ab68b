"""Transcript prefix reads: ``list_run_transcript_records`` (CONTRACT.md 12.3).

Only the run's ``transcript_messages_seeded`` and ``transcript_messages_appended`` records,
in record order, after ``after`` and up to and including ``through``; at most 512 records
and 1 MiB of payloads a page; positions that are not the run's are
``invalid_transcript_position``; later appends never change a page.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    PayloadTooLargeError,
    Record,
    RecordPage,
    RunNotFoundError,
    RunStart,
    RunStatus,
    SessionPurgedError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    assert_rejected,
    at,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    terminal_record,
    uid,
)

SEEDED = "transcript_messages_seeded"
APPENDED = "transcript_messages_appended"
MiB = 1024 * 1024


def messages(text: str = "hello", role: str = "user") -> bytes:
    return json.dumps(
        [{"role": role, "parts": [{"kind": "text", "text": text}], "meta": None}],
        separators=(",", ":"),
    ).encode()


def messages_of_size(size: int) -> bytes:
    """A one-message array of exactly ``size`` payload bytes."""
    empty = len(messages(""))
    payload = messages("x" * (size - empty))
    assert len(payload) == size
    return payload


def transcript(run: RunStart, key: str, payload: bytes, type: str = APPENDED) -> Record:
    return record(run, event_key=key, type=type, payload=payload)


def append_all(store: Backend, run: RunStart, records: Sequence[Record]) -> None:
    for start in range(0, len(records), 500):
        store.append_run_records(run.run_id, records[start : start + 500])


def new_run(store: Backend) -> RunStart:
    return start_root(store, new_session(store).id).run


def ids(page: RecordPage) -> list[str]:
    return [r.id for r in page.records]


def read_all(store: Backend, run_id: str, through: str, limit: int = 100) -> list[RecordPage]:
    """Every page of a prefix, following ``next_cursor``."""
    pages = [store.list_run_transcript_records(run_id, through, limit=limit)]
    while pages[-1].next_cursor:
        assert len(pages) < 100
        pages.append(
            store.list_run_transcript_records(
                run_id, through, after=pages[-1].next_cursor, limit=limit
            )
        )
    return pages


def mixed_run(store: Backend) -> RunStart:
    """1 run_started, 2 seeded, 3 note, 4 appended, 5 tool call, 6 appended, 7 note."""
    run = new_run(store)
    append_all(
        store,
        run,
        [
            transcript(run, "seed", messages("before", "system"), SEEDED),
            record(run, event_key="note-1"),
            transcript(run, "turn-1", messages("weather?")),
            record(run, event_key="tool-1", type="tool_call_scheduled", payload=b'{"t":1}'),
            transcript(run, "turn-2", messages("sunny", "assistant")),
            record(run, event_key="note-2"),
        ],
    )
    return run


# --------------------------------------------------------------------------- what a page holds


def test_a_prefix_holds_only_the_transcript_records_in_record_order(store: Backend) -> None:
    run = mixed_run(store)
    stored = {r.id: r for r in all_records(store, run.run_id)}

    page = store.list_run_transcript_records(run.run_id, "7")

    assert ids(page) == ["2", "4", "6"]
    assert page.records == [stored["2"], stored["4"], stored["6"]]  # every field, bytes too
    assert page.next_cursor == ""


@pytest.mark.parametrize(
    ("through", "expected"),
    [("1", []), ("2", ["2"]), ("3", ["2"]), ("5", ["2", "4"]), ("6", ["2", "4", "6"])],
)
def test_through_may_name_a_record_of_any_type_and_is_included(
    store: Backend, through: str, expected: list[str]
) -> None:
    run = mixed_run(store)

    page = store.list_run_transcript_records(run.run_id, through)

    assert ids(page) == expected
    assert page.next_cursor == ""


def test_after_reads_on_after_that_transcript_record(store: Backend) -> None:
    run = mixed_run(store)

    assert ids(store.list_run_transcript_records(run.run_id, "7", after="2")) == ["4", "6"]
    assert ids(store.list_run_transcript_records(run.run_id, "7", after="4")) == ["6"]


def test_after_equal_to_through_is_an_empty_last_page(store: Backend) -> None:
    run = mixed_run(store)

    page = store.list_run_transcript_records(run.run_id, "6", after="6")

    assert page == RecordPage(records=[], next_cursor="")


def test_a_run_without_transcript_records_gives_an_empty_page(store: Backend) -> None:
    run = new_run(store)
    store.append_run_record(record(run, event_key="note"))

    assert store.list_run_transcript_records(run.run_id, "2") == RecordPage(records=[])


def test_next_cursor_is_the_last_id_only_while_transcript_records_follow_up_to_through(
    store: Backend,
) -> None:
    run = mixed_run(store)

    first = store.list_run_transcript_records(run.run_id, "7", limit=2)
    short = store.list_run_transcript_records(run.run_id, "5", limit=2)

    assert (ids(first), first.next_cursor) == (["2", "4"], "4")
    # Record 6 follows, but past ``through``: the prefix ends here.
    assert (ids(short), short.next_cursor) == (["2", "4"], "")


def test_following_next_cursor_reads_the_whole_prefix_once(store: Backend) -> None:
    run = new_run(store)
    append_all(store, run, [transcript(run, f"t{n}", messages(f"m{n}")) for n in range(7)])

    pages = read_all(store, run.run_id, "8", limit=3)

    assert [ids(page) for page in pages] == [["2", "3", "4"], ["5", "6", "7"], ["8"]]
    assert [page.next_cursor for page in pages] == ["4", "7", ""]


def test_payloads_come_back_byte_for_byte(store: Backend) -> None:
    run = new_run(store)
    # An escaped cut emoji and NUL, and a two-byte character: kept as they came (2.6, 2.8).
    odd = b'[{"role":"user","parts":[{"kind":"text","text":"cut \\ud83d \\u0000 \xc3\xa9"}],'
    odd += b'"meta":null}]'
    store.append_run_record(transcript(run, "odd", odd))

    (found,) = store.list_run_transcript_records(run.run_id, "2").records

    assert found.payload == odd


# --------------------------------------------------------------------------- bounds


def test_a_page_of_512_records_of_2_kb_is_one_page(store: Backend) -> None:
    run = new_run(store)
    append_all(store, run, [transcript(run, f"t{n}", messages_of_size(2048)) for n in range(512)])

    page = store.list_run_transcript_records(run.run_id, "513", limit=512)

    assert len(page.records) == 512  # 512 x 2 KiB = exactly 1 MiB: the bound is inclusive
    assert sum(len(r.payload) for r in page.records) == MiB
    assert page.next_cursor == ""


def test_payloads_of_1_mib_and_one_byte_are_two_pages(store: Backend) -> None:
    run = new_run(store)
    sizes = [2048] * 511 + [2049]
    append_all(
        store, run, [transcript(run, f"t{n}", messages_of_size(s)) for n, s in enumerate(sizes)]
    )

    pages = read_all(store, run.run_id, "513", limit=512)

    assert [len(page.records) for page in pages] == [511, 1]
    assert pages[0].next_cursor == "512"
    assert ids(pages[1]) == ["513"]


def test_a_limit_above_512_is_served_as_512(store: Backend) -> None:
    run = new_run(store)
    append_all(store, run, [transcript(run, f"t{n}", messages("m")) for n in range(513)])

    pages = read_all(store, run.run_id, "514", limit=10_000)

    assert [len(page.records) for page in pages] == [512, 1]
    assert pages[0].next_cursor == "513"


def test_a_transcript_record_of_exactly_1_mib_is_one_page(store: Backend) -> None:
    run = new_run(store)
    store.append_run_record(transcript(run, "big", messages_of_size(MiB)))

    assert ids(store.list_run_transcript_records(run.run_id, "2")) == ["2"]


def test_a_single_transcript_record_over_1_mib_is_payload_too_large(store: Backend) -> None:
    run = new_run(store)
    store.append_run_record(transcript(run, "small", messages("hi")))
    store.append_run_record(transcript(run, "big", messages_of_size(MiB + 1)))

    first = store.list_run_transcript_records(run.run_id, "3")

    # The page ends before the record no page can hold; reading on refuses it.
    assert (ids(first), first.next_cursor) == (["2"], "2")
    assert_rejected(
        store,
        lambda: store.list_run_transcript_records(run.run_id, "3", after="2"),
        PayloadTooLargeError,
        run.run_id,
    )


# --------------------------------------------------------------------------- stable pages


def test_a_later_append_never_changes_an_earlier_page(store: Backend) -> None:
    run = new_run(store)
    append_all(store, run, [transcript(run, f"t{n}", messages(f"m{n}")) for n in range(3)])
    last = "4"  # the run's last record when the pages were read
    before = [
        store.list_run_transcript_records(run.run_id, last, after=after, limit=limit)
        for after in ("", "2", "4")
        for limit in (1, 2, 100)
    ]

    append_all(store, run, [transcript(run, f"later{n}", messages("later")) for n in range(3)])
    store.append_run_record(record(run, event_key="note-later"))

    after_appends = [
        store.list_run_transcript_records(run.run_id, last, after=after, limit=limit)
        for after in ("", "2", "4")
        for limit in (1, 2, 100)
    ]
    assert after_appends == before
    assert before[2] == RecordPage(records=before[2].records, next_cursor="")  # "", limit 100
    assert ids(before[2]) == ["2", "3", "4"]


# --------------------------------------------------------------------------- positions


@pytest.mark.parametrize(
    ("through", "after", "limit"),
    [
        pytest.param("", "", 100, id="through-empty"),
        pytest.param("0", "", 100, id="through-zero"),
        pytest.param("8", "", 100, id="through-past-the-last-record"),
        pytest.param("9" * 40, "", 100, id="through-huge"),
        pytest.param("02", "", 100, id="through-leading-zero"),
        pytest.param("+2", "", 100, id="through-signed"),
        pytest.param("-1", "", 100, id="through-negative"),
        pytest.param(" 2", "", 100, id="through-space"),
        pytest.param("2.0", "", 100, id="through-not-an-integer"),
        pytest.param("abc", "", 100, id="through-text"),
        pytest.param("2\x00", "", 100, id="through-nul"),
        pytest.param("7", "3", 100, id="after-a-note"),
        pytest.param("7", "1", 100, id="after-run-started"),
        pytest.param("4", "6", 100, id="after-past-through"),
        pytest.param("7", "0", 100, id="after-zero"),
        pytest.param("7", "8", 100, id="after-past-the-last-record"),
        pytest.param("7", "04", 100, id="after-leading-zero"),
        pytest.param("7", "x", 100, id="after-text"),
        pytest.param("7", "", 0, id="limit-zero"),
        pytest.param("7", "", -1, id="limit-negative"),
    ],
)
def test_a_position_that_is_not_the_runs_is_invalid_transcript_position(
    store: Backend, through: str, after: str, limit: int
) -> None:
    run = mixed_run(store)

    assert_rejected(
        store,
        lambda: store.list_run_transcript_records(run.run_id, through, after=after, limit=limit),
        InvalidTranscriptPositionError,
        run.run_id,
    )


@pytest.mark.parametrize(
    ("through", "after"),
    [
        pytest.param(str(2**63), "", id="through-2-to-the-63"),
        pytest.param(str(2**63 - 1), "", id="through-the-largest-bigint"),
        pytest.param("9" * 19, "", id="through-19-digits"),
        pytest.param(str(2**63), str(2**63), id="after-2-to-the-63"),
        pytest.param("9" * 19, str(2**63 + 1), id="after-past-the-largest-bigint"),
    ],
)
def test_a_position_past_the_largest_record_id_is_invalid_transcript_position(
    store: Backend, through: str, after: str
) -> None:
    # A BIGINT holds no such ID: it must be refused before SQLite's driver overflows on it.
    run = mixed_run(store)

    assert_rejected(
        store,
        lambda: store.list_run_transcript_records(run.run_id, through, after=after),
        InvalidTranscriptPositionError,
        run.run_id,
    )


def test_positions_of_another_run_are_invalid_transcript_position(store: Backend) -> None:
    long_run, short_run = mixed_run(store), new_run(store)
    store.append_run_record(transcript(short_run, "t", messages()))
    store.append_run_record(record(short_run, event_key="note"))  # 3: a note here

    for through, after in (("7", ""), ("4", ""), ("3", "3")):
        assert_rejected(
            store,
            functools.partial(
                store.list_run_transcript_records, short_run.run_id, through, after=after
            ),
            InvalidTranscriptPositionError,
            short_run.run_id,
            long_run.run_id,
        )
    # Its own transcript record is a position, of course.
    assert ids(store.list_run_transcript_records(short_run.run_id, "3", after="")) == ["2"]


@pytest.mark.parametrize("where", ["through", "after"])
def test_a_lone_surrogate_in_a_position_is_invalid_argument(store: Backend, where: str) -> None:
    run = mixed_run(store)
    through, after = ("2\ud800", "") if where == "through" else ("7", "2\ud800")

    assert_rejected(
        store,
        lambda: store.list_run_transcript_records(run.run_id, through, after=after),
        InvalidArgumentError,
        run.run_id,
    )


# --------------------------------------------------------------------------- the run


def test_an_unknown_run_is_run_not_found(store: Backend) -> None:
    assert_rejected(
        store,
        lambda: store.list_run_transcript_records(uid("no-run"), "1"),
        RunNotFoundError,
    )


def test_a_purged_run_is_session_purged(store: Backend) -> None:
    run = mixed_run(store)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(run.session_id, at(50))
    store.purge_session(run.session_id)

    assert_rejected(
        store, lambda: store.list_run_transcript_records(run.run_id, "2"), SessionPurgedError
    )


def test_a_sessionless_run_reads_its_transcript_too(store: Backend) -> None:
    run = run_start()
    store.start_one_shot_run(run, started_record(run))
    store.append_run_record(transcript(run, "t", messages()))

    assert ids(store.list_run_transcript_records(run.run_id, "2")) == ["2"]


@pytest.mark.parametrize(
    ("through", "after", "limit"),
    [(2, "", 100), ("2", None, 100), ("2", "", True), ("2", "", 1.5), ("2", "", "10")],
    ids=["through-int", "after-none", "limit-bool", "limit-float", "limit-text"],
)
def test_a_position_of_another_type_is_invalid_transcript_position(
    store: Backend, through: object, after: object, limit: object
) -> None:
    """Refused alike in process and by the HTTP clients, before any request."""
    run = mixed_run(store)

    assert_rejected(
        store,
        lambda: store.list_run_transcript_records(
            run.run_id,
            through,  # type: ignore[arg-type]
            after=after,  # type: ignore[arg-type]
            limit=limit,  # type: ignore[arg-type]
        ),
        InvalidTranscriptPositionError,
        run.run_id,
    )
