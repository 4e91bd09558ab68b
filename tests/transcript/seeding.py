"""Helpers that give runs a published seed (CONTRACT.md 15.2) and a transcript, for the tests
of the seeded replay (15.6): the in-process ``SqlStore`` writes them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from app.storage import SqlStore
from runtime_store_client import (
    TRANSCRIPT_MESSAGES_APPENDED,
    HistoryPrefix,
    LiteralPart,
    Message,
    RunStart,
    RunStatus,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
    encode_messages,
)
from tests.contract.builders import (
    T0,
    canceled_record,
    checkpoint,
    record,
    started_record,
    suspended_record,
    terminal_record,
)

AGENT = "agent-1"
#: What every seed publishes as its compiled start.
PREPARED = b"compiled start request"


class Prefix:
    """A seed record holding the seed's source (its ``HistoryPrefix``, resolved by begin)."""


PREFIX = Prefix()

#: One seed history record: a message array (``messages``), a literal fragment, the prefix.
SeedItem = list[Message] | bytes | LiteralPart | Prefix


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class Seeded:
    """A published seed: its history end, and the source it resolved (if any)."""

    seed_end_id: str
    source: HistoryPrefix | None


def publish_seed(  # noqa: PLR0913 - every field of a declaration
    store: SqlStore,
    run_id: str,
    items: Sequence[SeedItem],
    *,
    session_id: str = "",
    kind: SeedKind = SeedKind.LITERAL,
    source_run_id: str = "",
    source_end_id: str = "",
    exclude_reasoning: bool = False,
    agent_id: str = AGENT,
) -> Seeded:
    """Begin, append ``items`` (then the compiled start) and publish one attempt."""
    declaration = SeedDeclaration(
        agent_id=agent_id,
        run_id=run_id,
        session_id=session_id,
        command_id=f"command-{run_id}",
        attempt_id="attempt-1",
        kind=kind,
        source_run_id=source_run_id,
        source_end_id=source_end_id,
        exclude_reasoning=exclude_reasoning,
    )
    seed = store.begin_run_seed(declaration)
    previous = "0"

    def append(record: SeedRecord) -> str:
        return store.append_run_seed(run_id, "attempt-1", record).id

    for n, item in enumerate(items):
        key = f"history-{n}"
        if isinstance(item, Prefix):
            assert seed.source is not None
            record = SeedRecord(key=key, previous_id=previous, prefix=seed.source)
        elif isinstance(item, LiteralPart):
            record = SeedRecord(key=key, previous_id=previous, literal_part=item)
        elif isinstance(item, bytes):
            record = SeedRecord(key=key, previous_id=previous, messages=item)
        else:
            record = SeedRecord(key=key, previous_id=previous, messages=encode_messages(item))
        previous = append(record)
    history_end = previous
    previous = append(SeedRecord(key="prepared", previous_id=previous, prepared=PREPARED))
    store.publish_run_seed(run_id, "attempt-1", history_end, previous, len(PREPARED))
    return Seeded(history_end, seed.source)


def start_run(
    store: SqlStore,
    session_id: str,
    *,
    run_id: str | None = None,
    seed_end_id: str = "",
    predecessor_run_id: str = "",
    agent_id: str = AGENT,
) -> RunStart:
    """A root run of ``session_id`` (a one-shot run when it is ""), with the seed named."""
    run = RunStart(
        run_id=run_id or new_id("run"),
        agent_id=agent_id,
        session_id=session_id,
        predecessor_run_id=predecessor_run_id,
        started_at=T0,
        seed_end_id=seed_end_id,
    )
    if session_id:
        store.start_root_run(run, started_record(run), canceled_record(run))
    else:
        store.start_one_shot_run(run, started_record(run))
    return run


def say(store: SqlStore, run: RunStart, *messages: Message, key: str | None = None) -> str:
    """Append one transcript record holding ``messages``; its record ID."""
    return store.append_run_record(
        record(
            run,
            event_key=key or new_id("said"),
            type=TRANSCRIPT_MESSAGES_APPENDED,
            payload=encode_messages(messages),
        )
    ).id


def note(store: SqlStore, run: RunStart) -> str:
    """Append a record that is not a transcript record; its ID."""
    return store.append_run_record(record(run, event_key=new_id("note"))).id


def complete(store: SqlStore, run: RunStart) -> str:
    """Complete ``run``; the ID of its ``run_completed`` record."""
    return store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    ).id


def suspend(store: SqlStore, run: RunStart) -> str:
    """Suspend ``run``; the ID of its ``run_suspended`` record."""
    return store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run)).id


def next_turn(
    store: SqlStore,
    session_id: str,
    source: RunStart,
    *before_and_after: list[Message],
    exclude_reasoning: bool = False,
) -> RunStart:
    """A ``next_turn`` run of ``source``: its seed holds the prefix between the messages of
    ``before_and_after`` (at most two lists: those before it, those after it)."""
    run_id = new_id("turn")
    before, after = [*before_and_after, [], []][:2]
    items: list[SeedItem] = [*([before] if before else []), PREFIX, *([after] if after else [])]
    seeded = publish_seed(
        store,
        run_id,
        items,
        session_id=session_id,
        kind=SeedKind.NEXT_TURN,
        source_run_id=source.run_id,
        exclude_reasoning=exclude_reasoning,
    )
    return start_run(store, session_id, run_id=run_id, seed_end_id=seeded.seed_end_id)
