"""Builders for the contract tests of run seeds and preparations (CONTRACT.md section 15).

Declarations, records and operations that are *valid* for the contract (tests derive invalid
variants with ``dataclasses.replace``), the canonical encoding of 15.1 (so a test can build a
command or a page of an exact byte size), runs in the states a seed source needs, and
``prepare``: begin, append and publish in one call.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from runtime_store_client import (
    HistoryPrefix,
    LiteralPart,
    PreparationOperation,
    RenderedPrompt,
    RunPreparation,
    RunSeed,
    RunStart,
    RunStatus,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    checkpoint,
    dumps,
    expect_rejected,
    record,
    start_root,
    suspended_record,
    terminal_record,
    uid,
)

#: 15.1: the command limit and the page bound, both inclusive.
COMMAND_LIMIT = 1_000_000
PAGE_BYTES = 1_048_576
PAGE_RECORDS = 512

AGENT = "agent-1"
TRANSCRIPT = "transcript_messages_appended"


# --- canonical encoding (15.1) --------------------------------------------------------------------


def canonical(value: Any) -> bytes:
    """The canonical encoding of 15.1 (compact JSON, UTF-8, minimal escapes)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def prefix_json(prefix: HistoryPrefix) -> dict[str, Any]:
    return {
        "run_id": prefix.run_id,
        "end_id": prefix.end_id,
        "exclude_system": prefix.exclude_system,
        "exclude_reasoning": prefix.exclude_reasoning,
    }


def declaration_json(declaration: SeedDeclaration) -> dict[str, Any]:
    return {
        "agent_id": declaration.agent_id,
        "run_id": declaration.run_id,
        "session_id": declaration.session_id,
        "command_id": declaration.command_id,
        "attempt_id": declaration.attempt_id,
        "kind": str(declaration.kind),
        "source_run_id": declaration.source_run_id,
        "source_end_id": declaration.source_end_id,
        "exclude_reasoning": declaration.exclude_reasoning,
        "rendered_prompts": [
            {
                "prompt_id": prompt.prompt_id,
                "version": prompt.version,
                "scope": {
                    "session_id": prompt.scope.session_id,
                    "labels": dict(prompt.scope.labels),
                },
            }
            for prompt in declaration.rendered_prompts or ()
        ],
    }


def variant_json(rec: SeedRecord) -> dict[str, Any]:
    """The one variant a record holds, as the canonical encoding spells it."""
    if rec.messages is not None:
        return {"messages": rec.messages.decode("utf-8")}
    if rec.literal_part is not None:
        return {
            "literal_part": {"data": b64(rec.literal_part.data), "final": rec.literal_part.final}
        }
    if rec.prefix is not None:
        return {"prefix": prefix_json(rec.prefix)}
    assert rec.prepared is not None
    return {"prepared": b64(rec.prepared)}


def record_json(rec: SeedRecord, *, with_id: bool = False) -> dict[str, Any]:
    head = {"id": rec.id} if with_id else {}
    return {**head, "key": rec.key, "previous_id": rec.previous_id, **variant_json(rec)}


def begin_command_size(declaration: SeedDeclaration) -> int:
    """Bytes of the canonical begin command ``{"declaration": {…}}``."""
    return len(canonical({"declaration": declaration_json(declaration)}))


def append_command_size(run_id: str, attempt_id: str, rec: SeedRecord) -> int:
    """Bytes of the canonical append command ``{"run_id", "attempt_id", "record"}``."""
    return len(canonical({"run_id": run_id, "attempt_id": attempt_id, "record": record_json(rec)}))


def page_size(records: Sequence[SeedRecord]) -> int:
    """Bytes of a page of ``records``, measured with ``next_cursor`` = its last record's ID."""
    return len(
        canonical(
            {
                "records": [record_json(r, with_id=True) for r in records],
                "next_cursor": records[-1].id if records else "",
            }
        )
    )


# --- messages and records -------------------------------------------------------------------------


def msgs(text: str = "hello", role: str = "user") -> bytes:
    """The exact JSON text of a one-message array."""
    return dumps([{"role": role, "parts": [{"kind": "text", "text": text}], "meta": None}])


T = TypeVar("T")


def sized(build: Callable[[int], T], measure: Callable[[T], int], size: int) -> T:
    """``build(n)`` for the ``n`` that makes ``measure`` exactly ``size`` (``measure`` grows
    by exactly one byte per unit of ``n``)."""
    base = measure(build(0))
    value = build(size - base)
    assert measure(value) == size, (measure(value), size)
    return value


def messages_record(key: str, previous_id: str, text: bytes | None = None) -> SeedRecord:
    return SeedRecord(key=key, previous_id=previous_id, messages=msgs() if text is None else text)


def part_record(key: str, previous_id: str, data: bytes, *, final: bool) -> SeedRecord:
    return SeedRecord(
        key=key, previous_id=previous_id, literal_part=LiteralPart(data=data, final=final)
    )


def prefix_record(key: str, previous_id: str, prefix: HistoryPrefix) -> SeedRecord:
    return SeedRecord(key=key, previous_id=previous_id, prefix=prefix)


def prepared_record(key: str, previous_id: str, data: bytes = b"compiled-start") -> SeedRecord:
    return SeedRecord(key=key, previous_id=previous_id, prepared=data)


def stored(rec: SeedRecord, record_id: str) -> SeedRecord:
    """``rec`` as a read returns it: with its ID."""
    return replace(rec, id=record_id)


# --- declarations and operations ------------------------------------------------------------------


def literal(
    *,
    run_id: str | None = None,
    session_id: str = "",
    agent_id: str = AGENT,
    command_id: str | None = None,
    attempt_id: str | None = None,
    rendered_prompts: Sequence[RenderedPrompt] = (),
) -> SeedDeclaration:
    """A valid ``literal`` declaration (sessionless unless ``session_id`` is given)."""
    return SeedDeclaration(
        agent_id=agent_id,
        run_id=run_id or uid("run"),
        session_id=session_id,
        command_id=command_id or uid("cmd"),
        attempt_id=attempt_id or uid("att"),
        kind=SeedKind.LITERAL,
        rendered_prompts=tuple(rendered_prompts),
    )


def next_turn(
    source: RunStart,
    *,
    run_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    command_id: str | None = None,
    attempt_id: str | None = None,
    exclude_reasoning: bool = False,
) -> SeedDeclaration:
    """A valid ``next_turn`` declaration inheriting ``source`` (same agent and session)."""
    return SeedDeclaration(
        agent_id=source.agent_id if agent_id is None else agent_id,
        run_id=run_id or uid("run"),
        session_id=source.session_id if session_id is None else session_id,
        command_id=command_id or uid("cmd"),
        attempt_id=attempt_id or uid("att"),
        kind=SeedKind.NEXT_TURN,
        source_run_id=source.run_id,
        exclude_reasoning=exclude_reasoning,
    )


def continuation(
    source: RunStart,
    source_end_id: str = "2",
    *,
    run_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    command_id: str | None = None,
    attempt_id: str | None = None,
) -> SeedDeclaration:
    """A valid ``continuation`` declaration resuming ``source`` through ``source_end_id``."""
    return SeedDeclaration(
        agent_id=source.agent_id if agent_id is None else agent_id,
        run_id=run_id or uid("run"),
        session_id=source.session_id if session_id is None else session_id,
        command_id=command_id or uid("cmd"),
        attempt_id=attempt_id or uid("att"),
        kind=SeedKind.CONTINUATION,
        source_run_id=source.run_id,
        source_end_id=source_end_id,
    )


def attempt_of(declaration: SeedDeclaration, attempt_id: str | None = None) -> SeedDeclaration:
    """Another attempt of the same operation."""
    return replace(declaration, attempt_id=attempt_id or uid("att"))


def operation_of(declaration: SeedDeclaration) -> PreparationOperation:
    return PreparationOperation(
        agent_id=declaration.agent_id,
        run_id=declaration.run_id,
        session_id=declaration.session_id,
        command_id=declaration.command_id,
    )


def source_of(declaration: SeedDeclaration, end_id: str) -> HistoryPrefix | None:
    """The source 15.1 resolves for ``declaration`` (``end_id``: the next_turn source's
    terminal record)."""
    if declaration.kind == SeedKind.NEXT_TURN:
        return HistoryPrefix(
            run_id=declaration.source_run_id,
            end_id=end_id,
            exclude_system=True,
            exclude_reasoning=declaration.exclude_reasoning,
        )
    if declaration.kind == SeedKind.CONTINUATION:
        return HistoryPrefix(run_id=declaration.source_run_id, end_id=declaration.source_end_id)
    return None


# --- sources --------------------------------------------------------------------------------------


def transcript_root(store: Backend, session_id: str, *, agent_id: str = AGENT) -> RunStart:
    """A running root run: 1 ``run_started``, 2 a transcript record."""
    run = start_root(store, session_id, agent_id=agent_id).run
    store.append_run_record(record(run, event_key="turn", type=TRANSCRIPT, payload=msgs("earlier")))
    return run


def completed_source(store: Backend, session_id: str, *, agent_id: str = AGENT) -> RunStart:
    """A completed root run: 1 ``run_started``, 2 transcript, 3 ``run_completed`` (its
    terminal record: a next_turn source's ``end_id`` is ``"3"``)."""
    run = transcript_root(store, session_id, agent_id=agent_id)
    finish(store, run, RunStatus.COMPLETED)
    return run


NEXT_TURN_END = "3"


def finish(store: Backend, run: RunStart, status: RunStatus) -> None:
    reason = "user_requested" if status is RunStatus.CANCELED else ""
    if reason:
        from tests.contract.builders import cancellation_record

        store.record_run_cancellation(run.run_id, reason, cancellation_record(run, reason))
    store.record_run_terminal(run.run_id, status, terminal_record(run, status, reason=reason))


def suspended_source(store: Backend, session_id: str, *, agent_id: str = AGENT) -> RunStart:
    """A suspended root run: 1 ``run_started``, 2 transcript, 3 ``run_suspended``."""
    run = transcript_root(store, session_id, agent_id=agent_id)
    store.record_run_suspension(run.run_id, checkpoint(), suspended_record(run))
    return run


# --- a whole preparation --------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A published attempt: what was declared, every record as stored, what publish said."""

    declaration: SeedDeclaration
    records: list[SeedRecord]
    preparation: RunPreparation

    @property
    def run_id(self) -> str:
        return self.declaration.run_id

    @property
    def seed_end_id(self) -> str:
        return self.preparation.seed.end_id

    @property
    def end_id(self) -> str:
        return self.preparation.end_id

    @property
    def history(self) -> list[SeedRecord]:
        return [r for r in self.records if r.prepared is None]

    @property
    def compiled(self) -> list[SeedRecord]:
        return [r for r in self.records if r.prepared is not None]


Variant = Mapping[str, Any]


def append_chain(
    store: Backend,
    declaration: SeedDeclaration,
    variants: Sequence[Variant],
    *,
    after: str = "0",
    key_prefix: str = "k",
) -> list[SeedRecord]:
    """Append one record per variant (``{"messages": b"…"}``, ``{"prepared": b"…"}``, …),
    each after the previous; returns them as stored (with their IDs)."""
    out: list[SeedRecord] = []
    previous = after
    for index, variant in enumerate(variants, start=int(after) + 1):
        rec = SeedRecord(key=f"{key_prefix}{index}", previous_id=previous, **variant)
        result = store.append_run_seed(declaration.run_id, declaration.attempt_id, rec)
        assert result.inserted, result
        previous = result.id
        out.append(stored(rec, result.id))
    return out


def default_history(declaration: SeedDeclaration, source: HistoryPrefix | None) -> list[Variant]:
    """One messages record, and the source's prefix where the declaration has one."""
    history: list[Variant] = [{"messages": msgs("hello")}]
    if source is not None:
        history.insert(0, {"prefix": source})
    return history


def begin_and_append(
    store: Backend,
    declaration: SeedDeclaration,
    history: Sequence[Variant] | None = None,
    prepared: Sequence[bytes] = (b"compiled-start",),
) -> tuple[RunSeed, list[SeedRecord]]:
    """Begin ``declaration`` and append its history and prepared records (not published)."""
    seed = store.begin_run_seed(declaration)
    if history is None:
        history = default_history(declaration, seed.source)
    variants = [*history, *({"prepared": data} for data in prepared)]
    return seed, append_chain(store, declaration, variants)


def publish_all(
    store: Backend, declaration: SeedDeclaration, records: Sequence[SeedRecord]
) -> RunPreparation:
    """Publish an attempt whose records are ``records`` (the whole chain, in order)."""
    history_end = "0"
    for rec in records:
        if rec.prepared is None:
            history_end = rec.id
    return store.publish_run_seed(
        declaration.run_id,
        declaration.attempt_id,
        history_end,
        records[-1].id if records else "0",
        sum(len(r.prepared) for r in records if r.prepared is not None),
    )


def prepare(
    store: Backend,
    declaration: SeedDeclaration | None = None,
    history: Sequence[Variant] | None = None,
    prepared: Sequence[bytes] = (b"compiled-start",),
) -> Prepared:
    """Begin, append and publish one attempt (a sessionless literal seed by default; the
    history defaults to the source's prefix, if any, and one messages record)."""
    declaration = declaration or literal()
    _, records = begin_and_append(store, declaration, history, prepared)
    preparation = publish_all(store, declaration, records)
    return Prepared(declaration=declaration, records=records, preparation=preparation)


def seeded(run: RunStart, prepared: Prepared | str) -> RunStart:
    """``run`` attaching a published seed (or naming ``seed_end_id`` as given)."""
    seed_end_id = prepared if isinstance(prepared, str) else prepared.seed_end_id
    return replace(run, seed_end_id=seed_end_id)


# --- refusals -------------------------------------------------------------------------------------

#: What a refusal test watches besides runs: a published seed (its load and both lists in
#: full) or the declaration of an attempt that was begun (its exact retry: the attempt's
#: current history end, nothing written).
Watched = Prepared | SeedDeclaration


def read_all_seed_records(store: Backend, run_id: str, seed_end_id: str) -> list[SeedRecord]:
    out: list[SeedRecord] = []
    after = ""
    for _ in range(10_000):
        page = store.list_run_seed_records(run_id, seed_end_id, after=after, limit=512)
        out.extend(page.records)
        if not page.next_cursor:
            return out
        after = page.next_cursor
    raise AssertionError("the seed record list never ends")


def read_all_preparation_records(store: Backend, run_id: str, end_id: str) -> list[SeedRecord]:
    out: list[SeedRecord] = []
    after = ""
    for _ in range(10_000):
        page = store.list_run_preparation_records(run_id, end_id, after=after, limit=512)
        out.extend(page.records)
        if not page.next_cursor:
            return out
        after = page.next_cursor
    raise AssertionError("the preparation record list never ends")


def seed_snapshot(store: Backend, run_ids: Sequence[str], watch: Sequence[Watched]) -> list[object]:
    """The seed facts a reader can see (errors as their codes): for each run ID the answer
    of ``load_run_seed(run_id, "0")`` (not found, not published, purged, a conflict once
    something else is published); for each watched value what 15.4 or a begin retry shows."""
    seen: list[object] = []
    for run_id in run_ids:
        try:
            seen.append(store.load_run_seed(run_id, "0"))
        except StoreError as exc:
            seen.append(exc.code)
    for item in watch:
        try:
            if isinstance(item, Prepared):
                seen.append(
                    (
                        store.load_run_seed(item.run_id, item.seed_end_id),
                        read_all_seed_records(store, item.run_id, item.seed_end_id),
                        read_all_preparation_records(store, item.run_id, item.end_id),
                    )
                )
            else:
                seen.append(store.begin_run_seed(item))
        except StoreError as exc:
            seen.append(exc.code)
    return seen


def expect_seed_rejected(
    store: Backend,
    call: Callable[[], object],
    error: type[StoreError],
    code: str,
    *run_ids: str,
    session_id: str = "",
    watch: Sequence[Watched] = (),
) -> StoreError:
    """``call`` fails with ``error`` carrying ``code`` and nothing stored changed: the runs
    and the session (``observe``), and the seed facts of the run IDs and watched values."""
    before = seed_snapshot(store, run_ids, watch)
    exc = expect_rejected(store, call, error, code, *run_ids, session_id=session_id)
    assert seed_snapshot(store, run_ids, watch) == before
    return exc
