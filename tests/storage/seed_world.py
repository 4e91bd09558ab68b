"""A session holding every kind of seed (CONTRACT.md 15), built through ``SqlStore``.

Run and attempt IDs are chosen so that their UTF-8 byte order differs from a linguistic
collation (``Z`` < ``a`` < ``é``, ``z`` < ``é``): the export orders by bytes on both
databases.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.storage import SqlStore
from runtime_store_client import (
    HistoryPrefix,
    LiteralPart,
    PreparationOperation,
    PromptScope,
    RenderedPrompt,
    RunStart,
    RunStatus,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
)
from tests.contract.builders import (
    at,
    canceled_record,
    checkpoint,
    new_session,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
)

AGENT = "agent-1"
MESSAGES = b'[ {"role": "user", "parts": [{"kind": "text", "text": "h\\u00e9 \xc3\xa9"}]} ]'
ASSISTANT = b'[{"role":"assistant","parts":[{"kind":"text","text":"ok"}]}]'
PROMPTS = (
    RenderedPrompt(
        prompt_id="greeting",
        version="v2",
        scope=PromptScope(session_id="", labels={"tier": "gold", "lang": "fr"}),
    ),
    RenderedPrompt(prompt_id="rules", version="1"),
)


@dataclass(frozen=True)
class SeedWorld:
    session_id: str
    #: A literal seed (an abandoned attempt, a tombstone, the published one), its run
    #: completed.
    literal: str
    #: A next_turn seed of ``literal``, its run suspended.
    next_turn: str
    #: A continuation seed of ``next_turn`` (its second record), its run completed.
    continuation: str
    #: A literal seed still open (an open literal part), never started.
    open: str
    #: Only settled: the operation and one tombstone.
    settled: str

    @property
    def run_ids(self) -> tuple[str, ...]:
        return (self.literal, self.next_turn, self.continuation)

    @property
    def seeded(self) -> tuple[str, ...]:
        return (*self.run_ids, self.open, self.settled)


def declaration(run_id: str, attempt_id: str, session_id: str, **fields: Any) -> SeedDeclaration:
    """A declaration of ``AGENT`` (a literal unless ``fields`` say otherwise)."""
    values: dict[str, Any] = {
        "agent_id": AGENT,
        "command_id": f"cmd-{run_id}",
        "kind": SeedKind.LITERAL,
        **fields,
    }
    return SeedDeclaration(run_id=run_id, attempt_id=attempt_id, session_id=session_id, **values)


def operation(run_id: str, session_id: str, agent_id: str = AGENT) -> PreparationOperation:
    return PreparationOperation(
        agent_id=agent_id, run_id=run_id, session_id=session_id, command_id=f"cmd-{run_id}"
    )


def append(store: SqlStore, run_id: str, attempt_id: str, *records: SeedRecord) -> str:
    """Append each record after the previous one; the last ID."""
    last = "0"
    for item in records:
        last = store.append_run_seed(run_id, attempt_id, replace(item, previous_id=last)).id
    return last


def messages(key: str, data: bytes = MESSAGES) -> SeedRecord:
    return SeedRecord(key=key, previous_id="", messages=data)


def part(key: str, data: bytes, *, final: bool) -> SeedRecord:
    return SeedRecord(key=key, previous_id="", literal_part=LiteralPart(data=data, final=final))


def prepared(key: str, data: bytes) -> SeedRecord:
    return SeedRecord(key=key, previous_id="", prepared=data)


def prefix(key: str, source: HistoryPrefix) -> SeedRecord:
    return SeedRecord(key=key, previous_id="", prefix=source)


def seeded_start(
    run_id: str, session_id: str, seed_end_id: str, *, predecessor_run_id: str = ""
) -> RunStart:
    return replace(
        run_start(
            run_id=run_id,
            agent_id=AGENT,
            session_id=session_id,
            predecessor_run_id=predecessor_run_id,
        ),
        seed_end_id=seed_end_id,
    )


def publish_literal(
    store: SqlStore, run_id: str, session_id: str, attempt_id: str = "att-a"
) -> str:
    """A literal seed of three history records and two prepared ones, published; its
    history end."""
    store.begin_run_seed(declaration(run_id, attempt_id, session_id, rendered_prompts=PROMPTS))
    append(
        store,
        run_id,
        attempt_id,
        messages("m1"),
        part("p1", b'[{"role":"user","pa', final=False),
        part("p2", b'rts":[{"kind":"text","text":"\xc3\xa9"}]}]', final=True),
        prepared("c1", b"\x00compiled-\xff"),
        prepared("c2", b"start"),
    )
    store.publish_run_seed(run_id, attempt_id, "3", "5", len(b"\x00compiled-\xffstart"))
    return "3"


def build_seed_world(store: SqlStore, session_id: str | None = None, tag: str = "") -> SeedWorld:
    """The world; ``tag`` ends each of its run IDs (for a second world in one store)."""
    sid = new_session(store, session_id).id
    world = SeedWorld(
        session_id=sid,
        literal=f"seed-z-literal{tag}",
        next_turn=f"seed-\u00e9-next{tag}",
        continuation=f"seed-m-continuation{tag}",
        open=f"seed-a-open{tag}",
        settled=f"seed-b-settled{tag}",
    )
    # The literal: an abandoned attempt with a record, a tombstone, then the published one.
    lit = world.literal
    store.begin_run_seed(declaration(lit, "att-Z", sid))
    append(store, lit, "att-Z", messages("old"))
    assert store.settle_run_preparation(operation(lit, sid), "att-Z") is None
    assert store.settle_run_preparation(operation(lit, sid), "att-\u00e9") is None
    end = publish_literal(store, lit, sid)
    start = seeded_start(lit, sid, end)
    store.start_root_run(start, started_record(start), canceled_record(start))
    store.append_run_record(record(start, event_key="note-1"))
    store.record_run_terminal(lit, RunStatus.COMPLETED, terminal_record(start, RunStatus.COMPLETED))

    # A next turn of it, started and suspended.
    nxt = world.next_turn
    seed = store.begin_run_seed(
        declaration(
            nxt,
            "att-1",
            sid,
            kind=SeedKind.NEXT_TURN,
            source_run_id=lit,
            exclude_reasoning=True,
        )
    )
    assert seed.source is not None
    last = append(store, nxt, "att-1", prefix("pre", seed.source), messages("turn", ASSISTANT))
    append_after = store.append_run_seed(
        nxt, "att-1", replace(prepared("c", b"next"), previous_id=last)
    )
    store.publish_run_seed(nxt, "att-1", last, append_after.id, 4)
    start = seeded_start(nxt, sid, last)
    store.start_root_run(start, started_record(start), canceled_record(start))
    store.append_run_record(record(start, event_key="note-1"))
    store.record_run_suspension(nxt, checkpoint(), suspended_record(start))

    # A continuation of the suspended run through its second record.
    cont = world.continuation
    seed = store.begin_run_seed(
        declaration(
            cont,
            "att-1",
            sid,
            kind=SeedKind.CONTINUATION,
            source_run_id=nxt,
            source_end_id="2",
        )
    )
    assert seed.source is not None
    last = append(store, cont, "att-1", prefix("pre", seed.source))
    store.append_run_seed(cont, "att-1", replace(prepared("c", b"resume"), previous_id=last))
    store.publish_run_seed(cont, "att-1", last, "2", 6)
    start = seeded_start(cont, sid, last, predecessor_run_id=nxt)
    store.start_root_run(start, started_record(start), canceled_record(start))
    store.record_run_terminal(
        cont, RunStatus.COMPLETED, terminal_record(start, RunStatus.COMPLETED)
    )

    # An open attempt (its literal still open), and a settlement alone.
    store.begin_run_seed(declaration(world.open, "att-1", sid))
    append(store, world.open, "att-1", messages("m"), part("p", b"[", final=False))
    assert store.settle_run_preparation(operation(world.settled, sid), "lost") is None
    return world


def end(store: SqlStore, session_id: str) -> None:
    store.end_session(session_id, at(1000))
