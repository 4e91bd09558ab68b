"""Request and response bodies of run seeds and preparations (CONTRACT.md 15.8).

Requests are strict: unknown keys are refused, booleans and integers must be JSON booleans
and integers, byte values canonical padded base64 (``wire.SeedBytes``), ``messages`` a
string holding the exact JSON text. Answers are rendered straight from the contract values
(``*_json``): every key always present, a seed record with exactly its one variant key;
the response models describe them in the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, StrictBool, StrictInt, WithJsonSchema

from app.api.schemas.wire_model import Labels, WireModel
from app.api.wire import SeedBytes, format_base64, parse_payload
from app.domain.seeds import declaration_json, prefix_json
from runtime_store_client import (
    HistoryPrefix,
    LiteralPart,
    PreparationOperation,
    PromptScope,
    RenderedPrompt,
    RunPreparation,
    RunSeed,
    SeedAppendResult,
    SeedDeclaration,
    SeedKind,
    SeedPage,
    SeedRecord,
)

#: ``messages``: the exact JSON text of one message array, as a string (like a payload).
SeedMessages = Annotated[
    bytes,
    BeforeValidator(parse_payload),
    WithJsonSchema(
        {
            "type": "string",
            "description": "The exact JSON text of one complete array of messages (section "
            "10.1); stored and returned byte for byte (never re-serialised).",
            "examples": ['[{"role":"user","parts":[{"kind":"text","text":"Hi"}],"meta":null}]'],
        }
    ),
]

_ID = Field(description="A record ID: a decimal position of the attempt.", examples=["1"])


# --- declarations and sources -------------------------------------------------------------


class PromptScopeBody(WireModel):
    """Where a rendered prompt applies; labels compare as a map."""

    session_id: str = ""
    labels: Labels = None


class RenderedPromptBody(WireModel):
    """The identity of a prompt already rendered into a literal."""

    prompt_id: str = Field(examples=["summarize"])
    version: str = Field(examples=["3"])
    scope: PromptScopeBody | None = Field(
        default=None, description="Absent or null: no session, no labels."
    )

    def contract(self) -> RenderedPrompt:
        scope = self.scope or PromptScopeBody()
        return RenderedPrompt(
            prompt_id=self.prompt_id,
            version=self.version,
            scope=PromptScope(session_id=scope.session_id, labels=scope.labels or {}),
        )


class SeedDeclarationBody(WireModel):
    """What one attempt prepares (CONTRACT.md 15.1), fixed by its first begin and compared
    on every retry. Every key is present in answers."""

    agent_id: str = Field(examples=["summarizer"])
    run_id: str = Field(description="The run the seed prepares.", examples=["job-7"])
    session_id: str = Field(
        default="", description='Required for next_turn and continuation; "" when sessionless.'
    )
    command_id: str = Field(description="The original command.", examples=["cmd-7"])
    attempt_id: str = Field(description="Chosen by the caller.", examples=["attempt-1"])
    kind: SeedKind
    source_run_id: str = Field(
        default="", description='The inherited run (next_turn, continuation); "" for literal.'
    )
    source_end_id: str = Field(
        default="", description='A continuation\'s exact record of the source; else "".'
    )
    exclude_reasoning: StrictBool = Field(default=False, description="Only for next_turn.")
    rendered_prompts: list[RenderedPromptBody] | None = Field(
        default=None, description="In order; absent, null and [] are equal."
    )

    def contract(self) -> SeedDeclaration:
        return SeedDeclaration(
            agent_id=self.agent_id,
            run_id=self.run_id,
            session_id=self.session_id,
            command_id=self.command_id,
            attempt_id=self.attempt_id,
            kind=self.kind,
            source_run_id=self.source_run_id,
            source_end_id=self.source_end_id,
            exclude_reasoning=self.exclude_reasoning,
            rendered_prompts=tuple(p.contract() for p in self.rendered_prompts or ()),
        )


class HistoryPrefixBody(WireModel):
    """An earlier run's history through ``end_id``, with what to leave out of it."""

    run_id: str
    end_id: str = Field(description="A record ID of that run.")
    exclude_system: StrictBool
    exclude_reasoning: StrictBool

    def contract(self) -> HistoryPrefix:
        return HistoryPrefix(
            run_id=self.run_id,
            end_id=self.end_id,
            exclude_system=self.exclude_system,
            exclude_reasoning=self.exclude_reasoning,
        )


class RunSeedBody(WireModel):
    """A declared seed: its declaration, its resolved source, its history end."""

    declaration: SeedDeclarationBody
    source: HistoryPrefixBody | None = Field(description="Null for a literal seed.")
    end_id: str = Field(description='The history end ("0": no history record).')


class RunPreparationBody(WireModel):
    """A published seed with its compiled start: body end and ``prepared`` byte total."""

    seed: RunSeedBody
    end_id: str = Field(description="The body end: the attempt's last record.")
    prepared_bytes: int = Field(description="The total length of its prepared data.")


class PreparationAnswerBody(WireModel):
    """The accepted preparation of the operation, or none (``found`` false)."""

    found: bool
    preparation: RunPreparationBody | None


# --- records -----------------------------------------------------------------------------


class LiteralPartBody(WireModel):
    """The next fragment of one literal message array spanning several records."""

    data: SeedBytes
    final: StrictBool = Field(description="True on the fragment that completes the literal.")

    def contract(self) -> LiteralPart:
        return LiteralPart(data=self.data, final=self.final)


class NewSeedRecordBody(WireModel):
    """A seed record to append: exactly one of `messages`, `literal_part`, `prefix`
    and `prepared` (the others absent or null)."""

    id: str = Field(default="", description='Assigned by the store: absent or "" on input.')
    key: str = Field(description="Unique within the attempt: a lost append is retryable.")
    previous_id: str = Field(description='The record this one follows ("0": the first).')
    messages: SeedMessages | None = None
    literal_part: LiteralPartBody | None = None
    prefix: HistoryPrefixBody | None = None
    prepared: SeedBytes | None = Field(
        default=None, description="The next fragment of the compiled start request."
    )

    def contract(self) -> SeedRecord:
        return SeedRecord(
            id=self.id,
            key=self.key,
            previous_id=self.previous_id,
            messages=self.messages,
            literal_part=None if self.literal_part is None else self.literal_part.contract(),
            prefix=None if self.prefix is None else self.prefix.contract(),
            prepared=self.prepared,
        )


class MessagesSeedRecordBody(WireModel):
    """A stored record of literal messages."""

    id: str = _ID
    key: str
    previous_id: str
    messages: str = Field(description="The exact JSON text of a message array.")


class LiteralPartSeedRecordBody(WireModel):
    """A stored fragment of a literal spanning several records."""

    id: str = _ID
    key: str
    previous_id: str
    literal_part: LiteralPartBody


class PrefixSeedRecordBody(WireModel):
    """The stored place of the source's history."""

    id: str = _ID
    key: str
    previous_id: str
    prefix: HistoryPrefixBody


class PreparedSeedRecordBody(WireModel):
    """A stored fragment of the compiled start request."""

    id: str = _ID
    key: str
    previous_id: str
    prepared: SeedBytes


SeedRecordBody = (
    MessagesSeedRecordBody
    | LiteralPartSeedRecordBody
    | PrefixSeedRecordBody
    | PreparedSeedRecordBody
)


class SeedPageBody(WireModel):
    """A page of a published seed's records, in position order."""

    records: list[SeedRecordBody] = Field(description="Each with exactly one variant key.")
    next_cursor: str = Field(description='The page\'s last record ID when more follow, else "".')


class SeedAppendResultBody(WireModel):
    id: str = Field(description="The record's position (the original one on an exact retry).")
    inserted: bool = Field(description="False for an exact retry.")


# --- requests ----------------------------------------------------------------------------


class BeginRunSeedRequest(WireModel):
    declaration: SeedDeclarationBody = Field(description="Its run_id is the path's.")


class AppendRunSeedRequest(WireModel):
    record: NewSeedRecordBody


class PublishRunSeedRequest(WireModel):
    seed_end_id: str = Field(description="The attempt's history end.", examples=["1"])
    end_id: str = Field(description="The attempt's body end.", examples=["2"])
    prepared_bytes: StrictInt = Field(description="The total length of its prepared data.")


class PreparationOperationBody(WireModel):
    """The original command that prepares one destination run."""

    agent_id: str
    run_id: str = Field(description="The path's run ID.")
    session_id: str = ""
    command_id: str

    def contract(self) -> PreparationOperation:
        return PreparationOperation(
            agent_id=self.agent_id,
            run_id=self.run_id,
            session_id=self.session_id,
            command_id=self.command_id,
        )


class SettleRunPreparationRequest(WireModel):
    operation: PreparationOperationBody


# --- answers, rendered -----------------------------------------------------------------------


def run_seed_json(seed: RunSeed) -> dict[str, Any]:
    return {
        "declaration": declaration_json(seed.declaration),
        "source": None if seed.source is None else prefix_json(seed.source),
        "end_id": seed.end_id,
    }


def preparation_json(preparation: RunPreparation) -> dict[str, Any]:
    return {
        "seed": run_seed_json(preparation.seed),
        "end_id": preparation.end_id,
        "prepared_bytes": preparation.prepared_bytes,
    }


def preparation_answer_json(preparation: RunPreparation | None) -> dict[str, Any]:
    return {
        "found": preparation is not None,
        "preparation": None if preparation is None else preparation_json(preparation),
    }


def append_result_json(result: SeedAppendResult) -> dict[str, Any]:
    return {"id": result.id, "inserted": result.inserted}


def seed_record_json(record: SeedRecord) -> dict[str, Any]:
    """``{"id", "key", "previous_id", V}`` with the one variant the record holds."""
    wire: dict[str, Any] = {"id": record.id, "key": record.key, "previous_id": record.previous_id}
    if record.messages is not None:
        wire["messages"] = record.messages.decode("utf-8")
    elif record.literal_part is not None:
        part = record.literal_part
        wire["literal_part"] = {"data": format_base64(part.data), "final": part.final}
    elif record.prefix is not None:
        wire["prefix"] = prefix_json(record.prefix)
    else:
        assert record.prepared is not None
        wire["prepared"] = format_base64(record.prepared)
    return wire


def seed_page_json(page: SeedPage) -> dict[str, Any]:
    return {
        "records": [seed_record_json(record) for record in page.records],
        "next_cursor": page.next_cursor,
    }
