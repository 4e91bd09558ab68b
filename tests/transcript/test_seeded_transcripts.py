"""The replay of a seeded run (CONTRACT.md 15.6) on the real store, both databases: the seed's
history first (literals, the source's history through the prefix, exclusions OR-ed down a
chain of turns), then the run's own transcript records through ``through``."""

from __future__ import annotations

import asyncio
import traceback
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import (
    InvalidArgumentError,
    InvalidTranscriptError,
    InvalidTranscriptPositionError,
    LiteralPart,
    Message,
    NoTranscriptError,
    Page,
    Role,
    RunMeta,
    RunNotFoundError,
    RunSeed,
    SeedKind,
    SeedPage,
    SessionPurgedError,
    TextPart,
    ToolUsePart,
    TranscriptRule,
    build_messages_from_run_log,
    build_messages_from_run_log_async,
    build_messages_from_run_log_prefix,
    build_messages_from_run_log_prefix_async,
    build_seed_history,
    build_seed_history_async,
    encode_messages,
)
from tests.contract.builders import T0, all_records, new_session
from tests.transcript.samples import assistant, result, system, text, think, use, user
from tests.transcript.seeding import (
    PREFIX,
    complete,
    new_id,
    next_turn,
    note,
    publish_seed,
    say,
    start_run,
    suspend,
)


@pytest.fixture
def store(engine: Engine) -> SqlStore:
    return SqlStore(engine)


def last_record(store: SqlStore, run_id: str) -> str:
    return all_records(store, run_id)[-1].id


def signed(tool_id: str, signature: str = "sig-1") -> ToolUsePart:
    return ToolUsePart(id=tool_id, name="search", input={"q": tool_id}, thought_signature=signature)


def unsigned(tool_id: str) -> ToolUsePart:
    return ToolUsePart(id=tool_id, name="search", input={"q": tool_id})


class Spy:
    """A real store whose reads are counted (and, with ``before``, interfered with)."""

    def __init__(
        self, inner: SqlStore, before: Callable[[str, tuple[Any, ...]], None] | None = None
    ) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []
        self.depths: list[int] = []
        self.before = before

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((name, args[0]))
        self.depths.append(len(traceback.extract_stack()))
        if self.before is not None:
            self.before(name, args)
        return getattr(self.inner, name)(*args, **kwargs)

    def load_run(self, run_id: str) -> RunMeta:
        return cast(RunMeta, self._call("load_run", run_id))

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        return cast(Page, self._call("list_run_records", run_id, cursor=cursor, limit=limit))

    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        return cast(
            Page,
            self._call(
                "list_run_transcript_records", run_id, through=through, after=after, limit=limit
            ),
        )

    def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        return cast(RunSeed, self._call("load_run_seed", run_id, seed_end_id=seed_end_id))

    def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        return cast(
            SeedPage,
            self._call(
                "list_run_seed_records", run_id, seed_end_id=seed_end_id, after=after, limit=limit
            ),
        )


class AsyncOver:
    """The async face of a sync store (each read in a thread), for the async twins."""

    def __init__(self, inner: SqlStore) -> None:
        self.inner = inner

    async def load_run(self, run_id: str) -> RunMeta:
        return await asyncio.to_thread(self.inner.load_run, run_id)

    async def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        return await asyncio.to_thread(self.inner.list_run_records, run_id, cursor, limit)

    async def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        return await asyncio.to_thread(
            self.inner.list_run_transcript_records, run_id, through, after, limit
        )

    async def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        return await asyncio.to_thread(self.inner.load_run_seed, run_id, seed_end_id)

    async def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        return await asyncio.to_thread(
            self.inner.list_run_seed_records, run_id, seed_end_id, after, limit
        )


def both(store: SqlStore, run_id: str, through: str) -> list[Message]:
    """The prefix replay, checked to be the same from the async twin."""
    messages = build_messages_from_run_log_prefix(store, run_id, through)
    twin = asyncio.run(build_messages_from_run_log_prefix_async(AsyncOver(store), run_id, through))
    assert twin == messages
    return messages


def whole(store: SqlStore, run_id: str) -> list[Message]:
    """The 10.3 replay, checked to be the same from the async twin."""
    messages = build_messages_from_run_log(store, run_id)
    assert asyncio.run(build_messages_from_run_log_async(AsyncOver(store), run_id)) == messages
    return messages


# --------------------------------------------------------------------------- literal seeds

SYSTEM = system(text("You are terse."))
ASK = user(text("Find the Q3 report."))
ROUND = [assistant(think(), use("toolu_1")), user(result("toolu_1", {"hits": 1}))]
ANSWER = assistant(text("Here it is."))


@pytest.mark.parametrize("sessionless", [True, False], ids=["one-shot", "session"])
def test_a_literal_seed_comes_before_the_runs_own_records(
    store: SqlStore, sessionless: bool
) -> None:
    session_id = "" if sessionless else new_session(store).id
    run_id = new_id("run")
    seeded = publish_seed(store, run_id, [[SYSTEM], [ASK]], session_id=session_id)
    assert seeded.seed_end_id == "2"
    run = start_run(store, session_id, run_id=run_id, seed_end_id=seeded.seed_end_id)
    first = say(store, run, *ROUND)
    note(store, run)
    last = say(store, run, ANSWER)

    assert both(store, run.run_id, "1") == [SYSTEM, ASK]  # run_started: the seed alone
    assert both(store, run.run_id, first) == [SYSTEM, ASK, *ROUND]
    assert both(store, run.run_id, last) == [SYSTEM, ASK, *ROUND, ANSWER]
    assert whole(store, run.run_id) == [SYSTEM, ASK, *ROUND, ANSWER]
    history = build_seed_history(store, run.run_id)
    assert history.messages == [SYSTEM, ASK]
    assert history.run == store.load_run(run.run_id)
    assert history.seed is not None
    assert history.seed.declaration.kind is SeedKind.LITERAL
    assert asyncio.run(build_seed_history_async(AsyncOver(store), run.run_id)) == history
    # The store's own lists are unchanged: positions are the run's, never the seed's.
    assert all_records(store, run.run_id)[0].type == "run_started"


def test_a_literal_split_across_parts_cuts_a_utf8_sequence(store: SqlStore) -> None:
    said = [user(text("日本語のレポート — ok")), assistant(text("élan"))]
    data = encode_messages(said)
    cut = data.index("本".encode()) + 1  # inside the three bytes of 本
    assert data[cut - 1 : cut + 2] == "本".encode()
    parts = [data[:5], data[5:cut], data[cut:-3], data[-3:]]
    run_id = new_id("run")
    seeded = publish_seed(
        store,
        run_id,
        [
            [SYSTEM],
            *(LiteralPart(data=part, final=n == len(parts) - 1) for n, part in enumerate(parts)),
            [ASK],
        ],
    )
    assert seeded.seed_end_id == "6"
    run = start_run(store, "", run_id=run_id, seed_end_id=seeded.seed_end_id)
    assert both(store, run.run_id, "1") == [SYSTEM, *said, ASK]
    assert whole(store, run.run_id) == [SYSTEM, *said, ASK]


def test_a_run_without_a_seed_reads_as_before(store: SqlStore) -> None:
    run = start_run(store, new_session(store).id)
    first = say(store, run, SYSTEM, ASK)
    say(store, run, ANSWER)
    assert both(store, run.run_id, first) == [SYSTEM, ASK]
    assert both(store, run.run_id, "1") == []
    assert whole(store, run.run_id) == [SYSTEM, ASK, ANSWER]
    history = build_seed_history(store, run.run_id)
    assert (history.seed, history.messages) == (None, [])
    spy = Spy(store)
    build_messages_from_run_log(spy, run.run_id)
    # One load_run to learn there is no seed, then exactly the pages of 10.3.
    assert [name for name, _ in spy.calls] == ["load_run", "list_run_records"]


def test_an_empty_seed_history_publishes_at_zero(store: SqlStore) -> None:
    run_id = new_id("run")
    seeded = publish_seed(store, run_id, [])
    assert seeded.seed_end_id == "0"
    run = start_run(store, "", run_id=run_id, seed_end_id="0")
    assert both(store, run.run_id, "1") == []
    with pytest.raises(NoTranscriptError):
        build_messages_from_run_log(store, run.run_id)
    say(store, run, ANSWER)
    assert whole(store, run.run_id) == [ANSWER]


def test_the_seed_alone_is_a_transcript(store: SqlStore) -> None:
    """10.3's error applies only when neither the seed nor the run gave a message."""
    run_id = new_id("run")
    seeded = publish_seed(store, run_id, [[ASK]])
    run = start_run(store, "", run_id=run_id, seed_end_id=seeded.seed_end_id)
    note(store, run)
    assert whole(store, run.run_id) == [ASK]


# --------------------------------------------------------------------------- next_turn chains

R1 = [
    SYSTEM,
    user(text("turn 1")),
    Message(
        role=Role.ASSISTANT,
        parts=[think("plan 1"), text("searching"), signed("toolu_1")],
        meta={"usage": {"output_tokens": 9}},
    ),
    user(result("toolu_1")),
    assistant(think("only reasoning")),  # nothing left without reasoning: dropped
    Message(role=Role.ASSISTANT, parts=[think("kept for its meta")], meta={"k": 1}),
    Message(role=Role.ASSISTANT, parts=[think("empty meta")], meta={}),
    assistant(text("answer 1")),
]
R1_WITHOUT_SYSTEM_OR_REASONING = [
    user(text("turn 1")),
    Message(
        role=Role.ASSISTANT,
        parts=[text("searching"), unsigned("toolu_1")],
        meta={"usage": {"output_tokens": 9}},
    ),
    user(result("toolu_1")),
    Message(role=Role.ASSISTANT, parts=[], meta={"k": 1}),
    assistant(text("answer 1")),
]
R2_SEED_BEFORE = [system(text("turn 2 system"))]
R2_SEED_AFTER = [user(text("turn 2"))]
R2_OWN = [assistant(think("plan 2"), signed("toolu_2", "sig-2")), user(result("toolu_2"))]
R2_OWN_WITHOUT_REASONING = [assistant(unsigned("toolu_2")), user(result("toolu_2"))]
R2_LAST = [assistant(text("answer 2"))]
R3_SEED = [user(text("turn 3"))]
R3_OWN = [assistant(think("plan 3"), text("answer 3"))]
R4_SEED = [user(text("turn 4"))]


def test_a_chain_of_turns_ors_the_exclusions_of_every_level(store: SqlStore) -> None:
    session_id = new_session(store).id
    r1 = start_run(store, session_id)
    say(store, r1, *R1[:4])
    say(store, r1, *R1[4:])
    complete(store, r1)
    # Turn 2 leaves out reasoning (and, as every next_turn, system messages) of turn 1.
    r2 = next_turn(store, session_id, r1, R2_SEED_BEFORE, R2_SEED_AFTER, exclude_reasoning=True)
    r2_first = say(store, r2, *R2_OWN)
    say(store, r2, *R2_LAST)
    complete(store, r2)
    # Turn 3 keeps reasoning, but cannot bring back what turn 2 left out.
    r3 = next_turn(store, session_id, r2, [], R3_SEED)
    say(store, r3, *R3_OWN)
    complete(store, r3)
    # Turn 4 leaves out reasoning again, now of every turn.
    r4 = next_turn(store, session_id, r3, R4_SEED, exclude_reasoning=True)

    r2_history = [*R2_SEED_BEFORE, *R1_WITHOUT_SYSTEM_OR_REASONING, *R2_SEED_AFTER]
    assert both(store, r2.run_id, r2_first) == [*r2_history, *R2_OWN]
    assert whole(store, r2.run_id) == [*r2_history, *R2_OWN, *R2_LAST]

    # Seen from turn 3, turn 2's own system messages go too (R2_SEED_BEFORE is one).
    r3_history = [*R1_WITHOUT_SYSTEM_OR_REASONING, *R2_SEED_AFTER, *R2_OWN, *R2_LAST, *R3_SEED]
    assert both(store, r3.run_id, "1") == r3_history
    assert whole(store, r3.run_id) == [*r3_history, *R3_OWN]

    r4_history = [
        *R4_SEED,
        *R1_WITHOUT_SYSTEM_OR_REASONING,
        *R2_SEED_AFTER,
        *R2_OWN_WITHOUT_REASONING,
        *R2_LAST,
        *R3_SEED,
        assistant(text("answer 3")),
    ]
    assert both(store, r4.run_id, "1") == r4_history
    assert build_seed_history(store, r4.run_id).messages == r4_history
    # meta is kept as stored (15.9 item 13), messages are never changed in place.
    assert whole(store, r1.run_id) == R1


def test_each_run_of_a_chain_is_read_once(store: SqlStore) -> None:
    session_id = new_session(store).id
    turns = [start_run(store, session_id)]
    say(store, turns[0], user(text("turn 0")))
    complete(store, turns[0])
    for n in range(1, 5):
        turn = next_turn(store, session_id, turns[-1], [], [user(text(f"turn {n}"))])
        say(store, turn, assistant(text(f"answer {n}")))
        complete(store, turn)
        turns.append(turn)
    spy = Spy(store)
    last = turns[-1]
    messages = build_messages_from_run_log_prefix(spy, last.run_id, last_record(store, last.run_id))
    assert [m.parts[0] for m in messages] == [
        TextPart(text="turn 0"),
        *(
            p
            for n in range(1, 5)
            for p in (TextPart(text=f"turn {n}"), TextPart(text=f"answer {n}"))
        ),
    ]
    counts = Counter(spy.calls)
    for turn in turns:
        seeded = turn is not turns[0]
        assert counts[("load_run", turn.run_id)] == (2 if turn is last else 1)
        assert counts[("list_run_transcript_records", turn.run_id)] == 1
        assert counts[("load_run_seed", turn.run_id)] == int(seeded)
        assert counts[("list_run_seed_records", turn.run_id)] == int(seeded)
    assert sum(counts.values()) == 5 + 1 + 5 + 4 + 4


def test_a_long_chain_needs_no_deep_recursion(store: SqlStore) -> None:
    """The expansion is a loop over an explicit stack: the reads of a chain of 40 turns
    are made from the same depth of the Python stack as those of the first."""
    session_id = new_session(store).id
    turn = start_run(store, session_id)
    complete(store, turn)
    for _ in range(40):
        turn = next_turn(store, session_id, turn, [user(text("again"))])
        complete(store, turn)
    spy = Spy(store)
    assert build_messages_from_run_log_prefix(spy, turn.run_id, "1") == [user(text("again"))] * 40
    assert max(spy.depths) - min(spy.depths) <= 2


# --------------------------------------------------------------------------- continuations


def test_a_continuation_inherits_its_source_through_the_exact_record(store: SqlStore) -> None:
    session_id = new_session(store).id
    source = start_run(store, session_id)
    kept = say(store, source, SYSTEM, user(text("kept")), assistant(think(), signed("toolu_9")))
    note(store, source)
    say(store, source, user(text("after the continuation point")))
    suspend(store, source)
    run_id = new_id("continued")
    seeded = publish_seed(
        store,
        run_id,
        [PREFIX, [user(result("toolu_9"))]],
        session_id=session_id,
        kind=SeedKind.CONTINUATION,
        source_run_id=source.run_id,
        source_end_id=kept,
    )
    assert seeded.source is not None
    assert (seeded.source.end_id, seeded.source.exclude_system) == (kept, False)
    run = start_run(
        store,
        session_id,
        run_id=run_id,
        seed_end_id=seeded.seed_end_id,
        predecessor_run_id=source.run_id,
    )
    own = say(store, run, ANSWER)
    inherited = [SYSTEM, user(text("kept")), assistant(think(), signed("toolu_9"))]
    # A continuation keeps system messages and reasoning: nothing is excluded.
    assert both(store, run.run_id, "1") == [*inherited, user(result("toolu_9"))]
    assert both(store, run.run_id, own) == [*inherited, user(result("toolu_9")), ANSWER]


# --------------------------------------------------------------------------- errors


def test_the_stores_answers_propagate(store: SqlStore) -> None:
    run_id = new_id("run")
    seeded = publish_seed(store, run_id, [[ASK]])
    run = start_run(store, "", run_id=run_id, seed_end_id=seeded.seed_end_id)
    with pytest.raises(InvalidTranscriptPositionError):
        build_messages_from_run_log_prefix(store, run.run_id, "9")
    with pytest.raises(InvalidTranscriptPositionError):
        build_messages_from_run_log_prefix(store, run.run_id, "")
    with pytest.raises(RunNotFoundError):
        build_messages_from_run_log_prefix(store, "no-such-run", "1")
    with pytest.raises(RunNotFoundError):
        build_seed_history(store, "no-such-run")
    with pytest.raises(InvalidArgumentError):
        build_messages_from_run_log_prefix(store, "", "1")


def test_a_purge_while_reading_is_its_error(store: SqlStore) -> None:
    session_id = new_session(store).id
    r1 = start_run(store, session_id)
    say(store, r1, ASK)
    complete(store, r1)
    r2 = next_turn(store, session_id, r1, [user(text("turn 2"))])
    complete(store, r2)
    store.end_session(session_id, T0)
    loads: list[str] = []

    def purge_before_the_last_load(name: str, args: tuple[Any, ...]) -> None:
        if name == "load_run" and args[0] == r2.run_id:
            loads.append(args[0])
            if len(loads) == 2:
                store.purge_session(session_id)

    with pytest.raises(SessionPurgedError):
        build_messages_from_run_log_prefix(Spy(store, purge_before_the_last_load), r2.run_id, "1")
    assert len(loads) == 2


def _undecodable(store: SqlStore, *items: Any) -> InvalidTranscriptError:
    run_id = new_id("run")
    seeded = publish_seed(store, run_id, list(items))
    run = start_run(store, "", run_id=run_id, seed_end_id=seeded.seed_end_id)
    with pytest.raises(InvalidTranscriptError) as info:
        build_messages_from_run_log_prefix(store, run.run_id, "1")
    assert not isinstance(info.value, NoTranscriptError)
    assert (info.value.code, info.value.status, info.value.run_id) == (
        "invalid_transcript",
        422,
        run.run_id,
    )
    assert f"of the seed of run {run.run_id!r}" in info.value.message
    return info.value


def test_seed_content_that_does_not_decode_is_invalid_transcript(store: SqlStore) -> None:
    robot = b'[{"role":"robot","parts":[],"meta":null}]'
    error = _undecodable(store, [ASK], robot)
    assert error.message.startswith("messages record 2 ('history-1')")
    assert [(v.index, v.rule) for v in error.violations] == [(0, TranscriptRule.UNKNOWN_ROLE)]

    not_utf8 = _undecodable(
        store, LiteralPart(data=b'["\xff', final=False), LiteralPart(data=b'"]', final=True)
    )
    assert not_utf8.message.startswith("literal of records 1-2")
    assert [v.rule for v in not_utf8.violations] == [TranscriptRule.INVALID_JSON]

    empty = _undecodable(
        store, LiteralPart(data=b"[", final=False), LiteralPart(data=b"]", final=True)
    )
    assert [v.rule for v in empty.violations] == [TranscriptRule.EMPTY_LITERAL]

    not_an_array = _undecodable(store, LiteralPart(data=b"{}", final=True))
    assert [v.rule for v in not_an_array.violations] == [TranscriptRule.WRONG_TYPE]


def test_a_source_without_transcript_and_a_run_without_one_is_no_transcript(
    store: SqlStore,
) -> None:
    session_id = new_session(store).id
    r1 = start_run(store, session_id)
    complete(store, r1)
    r2 = next_turn(store, session_id, r1)
    assert both(store, r2.run_id, "1") == []
    with pytest.raises(NoTranscriptError) as info:
        build_messages_from_run_log(store, r2.run_id)
    assert info.value.run_id == r2.run_id


def test_the_seed_history_names_the_seed(store: SqlStore) -> None:
    session_id = new_session(store).id
    r1 = start_run(store, session_id)
    complete(store, r1)
    r2 = next_turn(store, session_id, r1, [ASK])
    history = build_seed_history(store, r2.run_id)
    seed = history.seed
    assert isinstance(seed, RunSeed)
    assert seed.declaration.kind is SeedKind.NEXT_TURN
    assert seed.source is not None
    assert seed.source.run_id == r1.run_id
    assert history.messages == [ASK]
