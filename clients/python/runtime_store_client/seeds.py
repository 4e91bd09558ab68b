"""Run seeds and preparations (CONTRACT.md section 15): the types a worker uses to upload a
run's initial history and compiled start request, publish them, and settle a lost answer.

Every dataclass is frozen and keyword-only like the rest of the contract types; byte values
(``messages``, literal parts, ``prepared``) are ``bytes`` stored and returned exactly.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


class SeedKind(enum.StrEnum):
    """What a seed's history is made of (15.1)."""

    #: Exactly the messages the caller uploads.
    LITERAL = "literal"
    #: The whole history of a completed earlier run of the session (a new user turn).
    NEXT_TURN = "next_turn"
    #: The history of a suspended run up to an exact record (the run it resumes).
    CONTINUATION = "continuation"


@dataclass(frozen=True, kw_only=True)
class PromptScope:
    """Where a rendered prompt applies; labels compare as a map."""

    session_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class RenderedPrompt:
    """The identity of a prompt already rendered into a literal."""

    prompt_id: str
    version: str
    scope: PromptScope = field(default_factory=PromptScope)


@dataclass(frozen=True, kw_only=True)
class SeedDeclaration:
    """What one attempt prepares, fixed by its first begin and compared on every retry."""

    agent_id: str
    run_id: str
    session_id: str = ""
    command_id: str
    attempt_id: str
    kind: SeedKind
    source_run_id: str = ""
    source_end_id: str = ""
    exclude_reasoning: bool = False
    rendered_prompts: Sequence[RenderedPrompt] = ()


@dataclass(frozen=True, kw_only=True)
class HistoryPrefix:
    """An earlier run's history through ``end_id``, with what to leave out of it."""

    run_id: str
    end_id: str
    exclude_system: bool = False
    exclude_reasoning: bool = False


@dataclass(frozen=True, kw_only=True)
class LiteralPart:
    """The next fragment of one literal message array spanning several records."""

    data: bytes
    final: bool


@dataclass(frozen=True, kw_only=True)
class SeedRecord:
    """One record of an attempt: exactly one of the four variants is set."""

    id: str = ""
    key: str
    previous_id: str
    messages: bytes | None = None
    literal_part: LiteralPart | None = None
    prefix: HistoryPrefix | None = None
    prepared: bytes | None = None


@dataclass(frozen=True, kw_only=True)
class RunSeed:
    """A declared seed: its declaration, its resolved source, its history end."""

    declaration: SeedDeclaration
    source: HistoryPrefix | None
    end_id: str


@dataclass(frozen=True, kw_only=True)
class SeedAppendResult:
    """The position an append stored its record at; ``inserted`` false for a retry."""

    id: str
    inserted: bool


@dataclass(frozen=True, kw_only=True)
class SeedPage:
    """A page of seed records; ``next_cursor`` is "" after the last."""

    records: list[SeedRecord]
    next_cursor: str


@dataclass(frozen=True, kw_only=True)
class PreparationOperation:
    """The original command that prepares one destination run."""

    agent_id: str
    run_id: str
    session_id: str = ""
    command_id: str


@dataclass(frozen=True, kw_only=True)
class RunPreparation:
    """A published seed with its compiled start: body end and ``prepared`` byte total."""

    seed: RunSeed
    end_id: str
    prepared_bytes: int
