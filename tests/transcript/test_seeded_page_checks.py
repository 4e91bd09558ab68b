"""The checks of the seeded replay (CONTRACT.md 15.6) on pages a real store never gives: an
in-memory fake of the four reads hands out broken seeds and pages, and every break is a
``RunLogPageError`` (the store is at fault), never a transcript error."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from runtime_store_client import (
    TRANSCRIPT_MESSAGES_APPENDED,
    HistoryPrefix,
    InvalidTranscriptError,
    LiteralPart,
    Page,
    Record,
    RunLogPageError,
    RunMeta,
    RunSeed,
    RunStartOutcome,
    RunStatus,
    SeedDeclaration,
    SeedKind,
    SeedPage,
    SeedRecord,
    build_messages_from_run_log,
    build_messages_from_run_log_prefix,
    build_messages_from_run_log_prefix_async,
    build_seed_history,
    encode_messages,
)
from tests.contract.builders import T0
from tests.transcript.samples import text, user

RUN, SOURCE, SESSION, AGENT = "run-1", "run-0", "session-1", "agent-1"


def meta(run_id: str = RUN, seed_end_id: str = "", **fields: str) -> RunMeta:
    values = {"agent_id": AGENT, "session_id": SESSION, **fields}
    return RunMeta(
        run_id=run_id,
        agent_id=values["agent_id"],
        session_id=values["session_id"],
        parent_run_id="",
        status=RunStatus.COMPLETED,
        start_outcome=RunStartOutcome.PROCEED,
        started_at=T0,
        updated_at=T0,
        seed_end_id=seed_end_id,
    )


def seed(
    run_id: str = RUN, end_id: str = "1", source: HistoryPrefix | None = None, **fields: str
) -> RunSeed:
    values = {"agent_id": AGENT, "session_id": SESSION, **fields}
    return RunSeed(
        declaration=SeedDeclaration(
            agent_id=values["agent_id"],
            run_id=run_id,
            session_id=values["session_id"],
            command_id="command-1",
            attempt_id="attempt-1",
            kind=SeedKind.LITERAL if source is None else SeedKind.NEXT_TURN,
            source_run_id="" if source is None else source.run_id,
        ),
        source=source,
        end_id=end_id,
    )


def said(n: int) -> bytes:
    return encode_messages([user(text(f"m{n}"))])


def rec(record_id: str, previous_id: str | None = None, **variant: Any) -> SeedRecord:
    """A seed record: ``messages`` holding ``m<id>`` unless another variant is given."""
    previous = str(int(record_id) - 1) if previous_id is None else previous_id
    if not variant:
        variant = {"messages": said(int(record_id))}
    return SeedRecord(id=record_id, key=f"k{record_id}", previous_id=previous, **variant)


def part(record_id: str, data: bytes, final: bool) -> SeedRecord:
    return rec(record_id, literal_part=LiteralPart(data=data, final=final))


PREFIX = HistoryPrefix(run_id=SOURCE, end_id="1", exclude_system=True)


def transcript(run_id: str, record_id: str, n: int) -> Record:
    return Record(
        id=record_id,
        event_key=f"evt-{run_id}-{record_id}",
        run_id=run_id,
        agent_id=AGENT,
        session_id=SESSION,
        type=TRANSCRIPT_MESSAGES_APPENDED,
        payload=said(n),
        timestamp=T0,
    )


@dataclass
class Fake:
    """The reads of a seeded replay, from prepared answers."""

    metas: dict[str, RunMeta]
    seeds: dict[str, RunSeed] = field(default_factory=dict)
    #: (run ID, after) → page; a run without pages has no transcript records.
    seed_pages: dict[tuple[str, str], SeedPage] = field(default_factory=dict)
    transcript_pages: dict[tuple[str, str], Page] = field(default_factory=dict)

    def load_run(self, run_id: str) -> RunMeta:
        return self.metas[run_id]

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        assert limit == 512
        return self.transcript_pages.get((run_id, cursor), Page(records=[]))

    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        assert (limit, through) == (512, "1")  # every run of the fakes is read through "1"
        return self.transcript_pages.get((run_id, after), Page(records=[]))

    def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        assert seed_end_id == self.metas[run_id].seed_end_id
        return self.seeds[run_id]

    def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        assert (limit, seed_end_id) == (512, self.seeds[run_id].end_id)
        return self.seed_pages[(run_id, after)]


class AsyncFake:
    def __init__(self, fake: Fake) -> None:
        self.fake = fake

    async def load_run(self, run_id: str) -> RunMeta:
        return self.fake.load_run(run_id)

    async def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        return self.fake.list_run_records(run_id, cursor, limit)

    async def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        return self.fake.list_run_transcript_records(run_id, through, after, limit)

    async def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed:
        return self.fake.load_run_seed(run_id, seed_end_id)

    async def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage:
        return self.fake.list_run_seed_records(run_id, seed_end_id, after, limit)


def literal_run(end_id: str, *pages: tuple[str, list[SeedRecord], str]) -> Fake:
    """Run ``RUN`` with a literal seed ending at ``end_id`` and these seed pages
    (after, records, next_cursor)."""
    return Fake(
        metas={RUN: meta(seed_end_id=end_id)},
        seeds={RUN: seed(end_id=end_id)},
        seed_pages={
            (RUN, after): SeedPage(records=records, next_cursor=cursor)
            for after, records, cursor in pages
        },
    )


def seeded_from(source_meta: RunMeta, *, root: RunMeta | None = None) -> Fake:
    """Run ``RUN`` whose seed is the prefix of ``SOURCE``, then one message."""
    return Fake(
        metas={RUN: root or meta(seed_end_id="2"), SOURCE: source_meta},
        seeds={RUN: seed(end_id="2", source=PREFIX, **_owner(root))},
        seed_pages={
            (RUN, ""): SeedPage(records=[rec("1", prefix=PREFIX), rec("2")], next_cursor="")
        },
        transcript_pages={(SOURCE, ""): Page(records=[transcript(SOURCE, "1", 0)])},
    )


def _owner(root: RunMeta | None) -> dict[str, str]:
    return {} if root is None else {"session_id": root.session_id, "agent_id": root.agent_id}


def cycle() -> Fake:
    """``RUN`` inherits ``SOURCE``, which inherits ``RUN``."""
    back = HistoryPrefix(run_id=RUN, end_id="1")
    fake = seeded_from(meta(SOURCE, seed_end_id="1"))
    fake.seeds[SOURCE] = seed(SOURCE, end_id="1", source=back)
    fake.seed_pages[(SOURCE, "")] = SeedPage(records=[rec("1", prefix=back)], next_cursor="")
    return fake


def prefix_fake(records: list[SeedRecord], source: HistoryPrefix | None = PREFIX) -> Fake:
    end = records[-1].id if records else "0"
    fake = seeded_from(meta(SOURCE))
    fake.metas[RUN] = meta(seed_end_id=end)
    fake.seeds[RUN] = seed(end_id=end, source=source)
    fake.seed_pages[(RUN, "")] = SeedPage(records=records, next_cursor="")
    return fake


def _broken_transcript() -> Fake:
    fake = literal_run("1", ("", [rec("1")], ""))
    fake.transcript_pages[(RUN, "")] = Page(records=[transcript("run-9", "2", 2)])
    return fake


BROKEN: list[tuple[str, Fake, str]] = [
    # --- the seed names its run
    (
        "seed_of_another_agent",
        replace(literal_run("1", ("", [rec("1")], "")), seeds={RUN: seed(agent_id="agent-2")}),
        "load_run_seed answered the seed of run 'run-1' (agent 'agent-2'",
    ),
    (
        "seed_with_another_end",
        replace(literal_run("1", ("", [rec("1")], "")), seeds={RUN: seed(end_id="2")}),
        "ending at '2', not the run's",
    ),
    (
        "load_run_of_another_run",
        replace(literal_run("1"), metas={RUN: meta("run-2", seed_end_id="1")}),
        "load_run('run-1') answered run 'run-2'",
    ),
    # --- contiguous pages
    (
        "first_record_not_after_zero",
        literal_run("1", ("", [rec("1", "1")], "")),
        "record 1 follows '1', not '0'",
    ),
    ("a_gap", literal_run("3", ("", [rec("1"), rec("3")], "")), "record 3 follows '2', not '1'"),
    (
        "record_without_id",
        literal_run("1", ("", [rec("1", "0"), replace(rec("2"), id="")], "")),
        "has no ID",
    ),
    (
        "repeated_id_across_pages",
        literal_run("2", ("", [rec("1"), rec("2")], "2"), ("2", [rec("2", "2")], "")),
        "after '2'): record ID 2 repeats",
    ),
    (
        "empty_page_with_next_cursor",
        literal_run("1", ("", [], "1")),
        "empty page with next_cursor '1'",
    ),
    (
        "next_cursor_repeats_after",
        literal_run("2", ("", [rec("1")], "1"), ("1", [rec("2")], "1")),
        "next_cursor repeats the cursor",
    ),
    (
        "next_cursor_not_the_last_id",
        literal_run("2", ("", [rec("1"), rec("2")], "1")),
        "next_cursor '1' is not the last record's ID '2'",
    ),
    (
        "ends_before_the_history_end",
        literal_run("3", ("", [rec("1"), rec("2")], "")),
        "the records end at '2', not at the seed's history end '3'",
    ),
    (
        "goes_past_the_history_end",
        literal_run("1", ("", [rec("1"), rec("2")], "")),
        "the records end at '2', not at the seed's history end '1'",
    ),
    # --- one history variant per record
    ("no_variant", literal_run("1", ("", [rec("1", messages=None)], "")), "holds no variant"),
    (
        "two_variants",
        literal_run("1", ("", [rec("1", messages=said(1), prefix=PREFIX)], "")),
        "holds messages, prefix, not exactly one",
    ),
    (
        "a_prepared_record",
        literal_run("1", ("", [rec("1", prepared=b"compiled")], "")),
        "holds prepared, not exactly one",
    ),
    # --- literals
    (
        "messages_inside_a_literal",
        literal_run("2", ("", [part("1", b"[", False), rec("2")], "")),
        "record 2 (messages) comes inside the literal that began at record 1",
    ),
    (
        "history_ends_inside_a_literal",
        literal_run("1", ("", [part("1", b"[", False)], "")),
        "the history ends inside the literal that began at record 1",
    ),
    # --- the prefix
    (
        "prefix_without_a_source",
        prefix_fake([rec("1", prefix=PREFIX)], source=None),
        "record 1 is a prefix, but the seed has no source",
    ),
    (
        "prefix_other_than_the_source",
        prefix_fake([rec("1", prefix=replace(PREFIX, exclude_system=False))]),
        "not the seed's source",
    ),
    (
        "second_prefix",
        prefix_fake([rec("1", prefix=PREFIX), rec("2", prefix=PREFIX)]),
        "record 2 is a second prefix",
    ),
    ("source_without_prefix", prefix_fake([rec("1")]), "the seed has a source but no prefix"),
    # --- the source
    (
        "source_of_another_session",
        seeded_from(meta(SOURCE, session_id="session-2")),
        "refers to run 'run-0' of agent 'agent-1' and session 'session-2'",
    ),
    (
        "source_of_another_agent",
        seeded_from(meta(SOURCE, agent_id="agent-2")),
        "refers to run 'run-0' of agent 'agent-2'",
    ),
    (
        "sessionless_run_with_a_source",
        seeded_from(meta(SOURCE, session_id=""), root=meta(seed_end_id="2", session_id="")),
        "a source must be a run of the same session and agent",
    ),
    ("a_cycle", cycle(), "meets run 'run-1' twice on one path"),
    # --- the run's own transcript pages (10.3's checks)
    ("transcript_of_another_run", _broken_transcript(), "record 2 belongs to run 'run-9'"),
]


@pytest.mark.parametrize(("fake", "why"), [pytest.param(f, w, id=n) for n, f, w in BROKEN])
def test_a_broken_seed_or_page_is_a_run_log_page_error(fake: Fake, why: str) -> None:
    with pytest.raises(RunLogPageError) as info:
        build_messages_from_run_log_prefix(fake, RUN, "1")
    error = info.value
    assert not isinstance(error, InvalidTranscriptError)
    assert (error.code, error.status, error.run_id) == ("internal", 500, RUN)
    assert why in error.message


@pytest.mark.parametrize(("fake", "why"), [pytest.param(f, w, id=n) for n, f, w in BROKEN])
def test_the_async_twin_refuses_the_same(fake: Fake, why: str) -> None:
    with pytest.raises(RunLogPageError, match=why.replace("(", r"\(").replace(")", r"\)")):
        asyncio.run(build_messages_from_run_log_prefix_async(AsyncFake(fake), RUN, "1"))


def test_the_whole_run_and_the_seed_history_check_the_seed_too() -> None:
    fake = literal_run("3", ("", [rec("1"), rec("3")], ""))
    with pytest.raises(RunLogPageError, match="record 3 follows '2'"):
        build_messages_from_run_log(fake, RUN)
    with pytest.raises(RunLogPageError, match="record 3 follows '2'"):
        build_seed_history(fake, RUN)


def test_valid_fake_pages_are_followed() -> None:
    fake = seeded_from(meta(SOURCE))
    fake.transcript_pages[(RUN, "")] = Page(records=[transcript(RUN, "1", 7)])
    assert build_messages_from_run_log_prefix(fake, RUN, "1") == [
        user(text("m0")),
        user(text("m2")),
        user(text("m7")),
    ]
    paged = literal_run("3", ("", [rec("1"), rec("2")], "2"), ("2", [rec("3")], ""))
    assert build_messages_from_run_log_prefix(paged, RUN, "1") == [
        user(text(f"m{n}")) for n in (1, 2, 3)
    ]
