"""Replay of a run's transcript from its records (CONTRACT.md 10.3), on every backend."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import (
    REPLAY_PAGE_SIZE,
    TRANSCRIPT_MESSAGES_APPENDED,
    TRANSCRIPT_MESSAGES_SEEDED,
    AsyncHttpStore,
    InvalidArgumentError,
    InvalidTranscriptError,
    Message,
    NoTranscriptError,
    Page,
    Record,
    RunLogPageError,
    RunNotFoundError,
    RunStart,
    TranscriptRule,
    UnavailableError,
    build_messages_from_run_log,
    build_messages_from_run_log_async,
    encode_messages,
    replay_run_log_events,
)
from runtime_store_client.protocols import Store
from tests.conftest import LiveServer, wipe
from tests.contract.builders import (
    T0,
    Backend,
    all_records,
    at,
    canceled_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
)
from tests.transcript.samples import assistant, result, system, text, think, use, user

SEED = [system(text("You are terse.")), user(text("Find the Q3 report."))]
ROUND = [assistant(think(), use("toolu_1")), user(result("toolu_1", {"hits": 1}))]
ANSWER = [assistant(text("Here it is."))]


def append(store: Store, run: RunStart, type: str, messages: list[Message], key: str) -> None:
    store.append_run_record(
        record(run, event_key=key, type=type, payload=encode_messages(messages))
    )


def note(store: Store, run: RunStart, key: str) -> None:
    store.append_run_record(record(run, event_key=key, type="planner_note"))


def started_run(store: Backend) -> RunStart:
    return start_root(store, new_session(store).id).run


# --------------------------------------------------------------------------- every backend


def test_transcript_records_are_replayed_in_order_and_others_skipped(store: Backend) -> None:
    run = started_run(store)
    note(store, run, "note-1")
    append(store, run, TRANSCRIPT_MESSAGES_SEEDED, SEED, "seed")
    store.append_run_record(record(run, event_key="prompt", type="prompt_rendered"))
    append(store, run, TRANSCRIPT_MESSAGES_APPENDED, ROUND[:1], "turn-1-assistant")
    note(store, run, "note-2")
    append(store, run, TRANSCRIPT_MESSAGES_APPENDED, ROUND[1:], "turn-1-results")
    append(store, run, TRANSCRIPT_MESSAGES_APPENDED, [], "nothing-new")
    append(store, run, TRANSCRIPT_MESSAGES_APPENDED, ANSWER, "turn-2")

    messages = build_messages_from_run_log(store, run.run_id)

    assert messages == SEED + ROUND + ANSWER
    assert replay_run_log_events(all_records(store, run.run_id)) == (messages, True)


def test_a_transcript_of_empty_arrays_is_found_and_empty(store: Backend) -> None:
    run = started_run(store)
    append(store, run, TRANSCRIPT_MESSAGES_SEEDED, [], "seed")
    assert build_messages_from_run_log(store, run.run_id) == []


def test_a_run_without_transcript_records_is_an_error(store: Backend) -> None:
    run = started_run(store)
    note(store, run, "note")
    with pytest.raises(NoTranscriptError) as info:
        build_messages_from_run_log(store, run.run_id)
    error = info.value
    assert isinstance(error, InvalidTranscriptError)
    assert (error.code, error.status, error.run_id) == ("invalid_transcript", 422, run.run_id)
    assert [v.rule for v in error.violations] == [TranscriptRule.NO_TRANSCRIPT_RECORDS]
    assert run.run_id in error.message
    assert replay_run_log_events(all_records(store, run.run_id)) == ([], False)


def test_a_malformed_message_array_names_the_event_key_and_run(store: Backend) -> None:
    run = started_run(store)
    append(store, run, TRANSCRIPT_MESSAGES_SEEDED, SEED, "seed")
    bad = (
        b'[{"role":"assistant","parts":[{"kind":"tool_use","id":"t","name":"n",'
        b'"input":[],"thought_signature":""}],"meta":null}]'
    )
    store.append_run_record(
        record(run, event_key="turn-7", type=TRANSCRIPT_MESSAGES_APPENDED, payload=bad)
    )
    with pytest.raises(InvalidTranscriptError) as info:
        build_messages_from_run_log(store, run.run_id)
    error = info.value
    assert (error.event_key, error.run_id) == ("turn-7", run.run_id)
    assert error.message.startswith(
        f"record 'turn-7' (type {TRANSCRIPT_MESSAGES_APPENDED}) of run {run.run_id!r}: "
    )
    assert error.message.endswith(
        "message[0] wrong_type: $[0].parts[0].input: must be a JSON object, got array"
    )
    assert [(v.index, v.rule) for v in error.violations] == [(0, TranscriptRule.WRONG_TYPE)]


def test_an_unknown_run_keeps_the_store_error(store: Backend) -> None:
    with pytest.raises(RunNotFoundError):
        build_messages_from_run_log(store, "no-such-run")


def test_a_sessionless_run_replays_too(store: Backend) -> None:
    run = run_start()
    store.start_one_shot_run(run, started_record(run))
    append(store, run, TRANSCRIPT_MESSAGES_APPENDED, ANSWER, "answer")
    assert build_messages_from_run_log(store, run.run_id) == ANSWER


def test_an_empty_run_id_is_an_invalid_argument(store: Backend) -> None:
    with pytest.raises(InvalidArgumentError):
        build_messages_from_run_log(store, "")


# --------------------------------------------------------------------------- paging


@dataclass
class Spy:
    """Records the paging calls made to a real store."""

    inner: Store
    calls: list[tuple[str, int]] = field(default_factory=list)

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        self.calls.append((cursor, limit))
        return self.inner.list_run_records(run_id, cursor=cursor, limit=limit)


def test_more_than_one_page_of_transcript_records(sqlite_engine: Engine) -> None:
    """600 transcript records plus others: pages of 512, every cursor followed.

    In-process SQLite only, to stay fast; the paging itself is the contract suite's.
    """
    wipe(sqlite_engine)
    store = SqlStore(sqlite_engine)
    run = started_run(store)
    expected: list[Message] = []
    for i in range(600):
        if i % 100 == 0:
            note(store, run, f"note-{i}")
        kind = TRANSCRIPT_MESSAGES_SEEDED if i < 2 else TRANSCRIPT_MESSAGES_APPENDED
        message = user(text(f"m{i}")) if i % 2 else assistant(text(f"m{i}"))
        append(store, run, kind, [message], f"t-{i}")
        expected.append(message)

    spy = Spy(store)
    assert build_messages_from_run_log(spy, run.run_id) == expected
    # 1 run_started + 6 notes + 600 transcript records = 607 records: two pages.
    assert spy.calls == [("", REPLAY_PAGE_SIZE), ("512", REPLAY_PAGE_SIZE)]


# --------------------------------------------------------------------------- async


def test_async_replay_over_http(live_server: LiveServer) -> None:
    async def scenario() -> None:
        async with AsyncHttpStore(live_server.base_url) as store:
            session = await store.create_session("s-transcript", T0)
            run = run_start(session_id=session.id)
            await store.start_root_run(run, started_record(run), canceled_record(run))
            for key, kind, messages in (
                ("seed", TRANSCRIPT_MESSAGES_SEEDED, SEED),
                ("round", TRANSCRIPT_MESSAGES_APPENDED, ROUND),
                ("answer", TRANSCRIPT_MESSAGES_APPENDED, ANSWER),
            ):
                payload = encode_messages(messages)
                await store.append_run_record(
                    record(run, event_key=key, type=kind, payload=payload, timestamp=at(50))
                )
            assert await build_messages_from_run_log_async(store, run.run_id) == (
                SEED + ROUND + ANSWER
            )
            with pytest.raises(RunNotFoundError):
                await build_messages_from_run_log_async(store, "no-such-run")

    asyncio.run(scenario())


# --------------------------------------------------------------------------- page checks

RUN = "run-1"


def rec(record_id: str, *, run_id: str = RUN, type: str = "planner_note", n: int = 0) -> Record:
    payload = encode_messages([user(text(f"m{n}"))]) if type != "planner_note" else b"{}"
    return Record(
        id=record_id,
        event_key=f"evt-{record_id}-{n}",
        run_id=run_id,
        agent_id="agent-1",
        type=type,
        payload=payload,
        timestamp=T0,
    )


@dataclass
class FakeStore:
    """Hands out prepared pages by cursor; checks the replay's paging, not a database."""

    pages: dict[str, Page]
    calls: list[tuple[str, str, int]] = field(default_factory=list)

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        self.calls.append((run_id, cursor, limit))
        return self.pages[cursor]


class AsyncFakeStore:
    def __init__(self, pages: dict[str, Page]) -> None:
        self.sync = FakeStore(pages)

    async def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        return self.sync.list_run_records(run_id, cursor=cursor, limit=limit)


SEEDED, APPENDED = TRANSCRIPT_MESSAGES_SEEDED, TRANSCRIPT_MESSAGES_APPENDED


def test_valid_fake_pages_are_followed_in_order() -> None:
    fake = FakeStore(
        {
            "": Page(records=[rec("1", type=SEEDED, n=1), rec("2")], next_cursor="2"),
            "2": Page(records=[rec("3", type=APPENDED, n=3)], next_cursor="3"),
            "3": Page(records=[rec("4", type=APPENDED, n=4)]),
        }
    )
    messages = build_messages_from_run_log(fake, RUN)
    assert messages == [user(text("m1")), user(text("m3")), user(text("m4"))]
    assert fake.calls == [(RUN, "", 512), (RUN, "2", 512), (RUN, "3", 512)]


def test_a_cursor_at_the_end_may_return_an_empty_page() -> None:
    fake = FakeStore(
        {
            "": Page(records=[rec("1", type=SEEDED, n=1)], next_cursor="1"),
            "1": Page(records=[]),
        }
    )
    assert build_messages_from_run_log(fake, RUN) == [user(text("m1"))]


BROKEN_PAGES: list[tuple[str, dict[str, Page], str]] = [
    ("record_without_id", {"": Page(records=[rec("1"), rec("")])}, "has no ID"),
    (
        "record_of_another_run",
        {"": Page(records=[rec("1"), rec("2", run_id="run-2")])},
        "belongs to run 'run-2'",
    ),
    ("repeated_id_in_a_page", {"": Page(records=[rec("1"), rec("1", n=1)])}, "record ID 1 repeats"),
    (
        "repeated_id_across_pages",
        {
            "": Page(records=[rec("1"), rec("2")], next_cursor="2"),
            "2": Page(records=[rec("2", n=1)]),
        },
        "record ID 2 repeats",
    ),
    (
        "next_cursor_with_an_empty_page",
        {"": Page(records=[], next_cursor="7")},
        "empty page with next_cursor '7'",
    ),
    (
        "next_cursor_repeats_the_cursor",
        {
            "": Page(records=[rec("1"), rec("2")], next_cursor="2"),
            "2": Page(records=[rec("3")], next_cursor="2"),
        },
        "next_cursor repeats the cursor",
    ),
    (
        "next_cursor_is_not_the_last_record_id",
        {"": Page(records=[rec("1"), rec("2")], next_cursor="1")},
        "next_cursor '1' is not the last record's ID '2'",
    ),
    (
        "the_same_page_forever",
        {
            "": Page(records=[rec("1")], next_cursor="1"),
            "1": Page(records=[rec("1")], next_cursor="1"),
        },
        "record ID 1 repeats",
    ),
]


@pytest.mark.parametrize(
    ("pages", "why"), [pytest.param(p, w, id=name) for name, p, w in BROKEN_PAGES]
)
def test_broken_pages_are_refused(pages: dict[str, Page], why: str) -> None:
    with pytest.raises(RunLogPageError) as info:
        build_messages_from_run_log(FakeStore(pages), RUN)
    error = info.value
    assert not isinstance(error, InvalidTranscriptError)
    assert (error.code, error.status, error.run_id) == ("internal", 500, RUN)
    assert why in error.message
    assert f"run {RUN!r}" in error.message


@pytest.mark.parametrize(
    ("pages", "why"), [pytest.param(p, w, id=name) for name, p, w in BROKEN_PAGES]
)
def test_broken_pages_are_refused_by_the_async_twin(pages: dict[str, Page], why: str) -> None:
    with pytest.raises(RunLogPageError, match=why):
        asyncio.run(build_messages_from_run_log_async(AsyncFakeStore(pages), RUN))


def test_a_bad_page_is_refused_before_its_transcript_is_decoded() -> None:
    bad = Record(
        id="2",
        event_key="bad",
        run_id="run-2",
        agent_id="a",
        type=APPENDED,
        payload=b"[1]",
        timestamp=T0,
    )
    with pytest.raises(RunLogPageError):
        build_messages_from_run_log(FakeStore({"": Page(records=[rec("1"), bad])}), RUN)


def test_store_errors_propagate_unchanged() -> None:
    class Failing:
        def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
            del run_id, cursor, limit  # the protocol's keyword names, unused
            raise UnavailableError("database unreachable")

    with pytest.raises(UnavailableError):
        build_messages_from_run_log(Failing(), RUN)


def test_replay_of_loaded_records() -> None:
    records = [
        rec("1"),
        rec("2", type=SEEDED, n=2),
        rec("3", type="transcript_messages_Appended", n=3),  # types are exact
        rec("4", type=APPENDED, n=4),
    ]
    assert replay_run_log_events(records) == ([user(text("m2")), user(text("m4"))], True)
    assert replay_run_log_events(iter(records)) == ([user(text("m2")), user(text("m4"))], True)
    assert replay_run_log_events([rec("1")]) == ([], False)
    assert replay_run_log_events([]) == ([], False)


def test_replay_of_loaded_records_names_the_bad_record() -> None:
    bad = Record(
        id="9", event_key="k-9", run_id=RUN, agent_id="a", type=SEEDED, payload=b"{}", timestamp=T0
    )
    with pytest.raises(InvalidTranscriptError) as info:
        replay_run_log_events([rec("1", type=SEEDED), bad])
    assert (info.value.event_key, info.value.run_id) == ("k-9", RUN)
    assert "record 'k-9'" in info.value.message
    assert f"run {RUN!r}" in info.value.message
