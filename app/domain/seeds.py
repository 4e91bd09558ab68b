"""Run seeds and preparations (CONTRACT.md 15): the rules that need no stored state, the
canonical encoding the byte limits count, and the decisions over an attempt's state.

The storage operations (``app/storage/seeds/``) read an attempt under the run ID's lock,
call these in the contract's order and write what they allow.
"""

from __future__ import annotations

import base64
import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from app.domain.payloads import parse_json
from app.domain.text import check_plain_text
from app.domain.validation import require_id
from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    LiteralPart,
    PayloadTooLargeError,
    PreparationAbandonedError,
    PreparationOperation,
    PromptScope,
    RenderedPrompt,
    RunPreparation,
    RunSeed,
    SeedConflictError,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
)

#: The begin and append commands' bound on their canonical encoding, inclusive (15.1).
MAX_COMMAND_BYTES: Final = 1_000_000
#: A page of seed records: at most this many records and bytes, inclusive (15.1).
MAX_PAGE_RECORDS: Final = 512
MAX_PAGE_BYTES: Final = 1_048_576
DEFAULT_PAGE_LIMIT: Final = 100
#: Positions are record IDs; none reaches a signed 64-bit integer's end.
_MAX_POSITION: Final = 2**63 - 1


class AttemptState(enum.StrEnum):
    OPEN = "open"
    PUBLISHED = "published"
    ABANDONED = "abandoned"


class Variant(enum.StrEnum):
    MESSAGES = "messages"
    LITERAL_PART = "literal_part"
    PREFIX = "prefix"
    PREPARED = "prepared"

    @property
    def history(self) -> bool:
        return self is not Variant.PREPARED


def canonical(value: Any) -> bytes:
    """The canonical encoding of 15.1: compact JSON, keys in the order given, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# --- positions --------------------------------------------------------------------------


def position_text(position: int) -> str:
    return str(position)


def parse_position(text: str) -> int | None:
    """A canonical decimal position ("0", "1", "2", ...), or ``None`` for any other text."""
    if not text or not text.isascii() or not text.isdigit():
        return None
    if len(text) > 1 and text[0] == "0":
        return None
    value = int(text)
    return value if value <= _MAX_POSITION else None


# --- declarations -----------------------------------------------------------------------


def _check_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    check_plain_text(value, what)
    return value


def _check_bool(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{what} must be a boolean")
    return value


def _check_labels(labels: object, what: str) -> dict[str, str]:
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise InvalidArgumentError(f"{what} must be a map of strings")
    return {
        _check_text(key, f"{what} key"): _check_text(value, f"{what}[{key!r}]")
        for key, value in labels.items()
    }


def _check_prompts(prompts: object) -> list[RenderedPrompt]:
    if prompts is None:
        return []
    if isinstance(prompts, str | bytes) or not isinstance(prompts, Sequence):
        raise InvalidArgumentError("declaration.rendered_prompts must be a list")
    checked = []
    for index, prompt in enumerate(prompts):
        what = f"declaration.rendered_prompts[{index}]"
        if not isinstance(prompt, RenderedPrompt):
            raise InvalidArgumentError(f"{what} must be a RenderedPrompt")
        scope = prompt.scope if prompt.scope is not None else PromptScope()
        if not isinstance(scope, PromptScope):
            raise InvalidArgumentError(f"{what}.scope must be a PromptScope")
        checked.append(
            RenderedPrompt(
                prompt_id=_check_text(prompt.prompt_id, f"{what}.prompt_id"),
                version=_check_text(prompt.version, f"{what}.version"),
                scope=PromptScope(
                    session_id=_check_text(scope.session_id, f"{what}.scope.session_id"),
                    labels=_check_labels(scope.labels, f"{what}.scope.labels"),
                ),
            )
        )
    return checked


def check_declaration(declaration: object) -> SeedDeclaration:
    """The declaration rules of 15.1 (``invalid_argument``); the declaration normalised
    (``rendered_prompts`` a tuple, labels plain maps, ``kind`` a ``SeedKind``)."""
    if not isinstance(declaration, SeedDeclaration):
        raise InvalidArgumentError("declaration must be a SeedDeclaration")
    d = declaration
    for name in ("agent_id", "run_id", "command_id", "attempt_id"):
        require_id(getattr(d, name), f"declaration.{name}")
    for name in ("session_id", "source_run_id", "source_end_id"):
        _check_text(getattr(d, name), f"declaration.{name}")
    try:
        kind = SeedKind(d.kind)
    except ValueError:
        raise InvalidArgumentError(
            "declaration.kind must be literal, next_turn or continuation"
        ) from None
    exclude_reasoning = _check_bool(d.exclude_reasoning, "declaration.exclude_reasoning")
    _check_source_fields(d, kind, exclude_reasoning=exclude_reasoning)
    return SeedDeclaration(
        agent_id=d.agent_id,
        run_id=d.run_id,
        session_id=d.session_id,
        command_id=d.command_id,
        attempt_id=d.attempt_id,
        kind=kind,
        source_run_id=d.source_run_id,
        source_end_id=d.source_end_id,
        exclude_reasoning=exclude_reasoning,
        rendered_prompts=tuple(_check_prompts(d.rendered_prompts)),
    )


def _check_source_fields(d: SeedDeclaration, kind: SeedKind, *, exclude_reasoning: bool) -> None:
    """The rows of 15.1's declaration table that depend on the kind."""
    if kind is SeedKind.LITERAL:
        if d.source_run_id:
            raise InvalidArgumentError("declaration.source_run_id must be empty for a literal")
        if d.source_end_id:
            raise InvalidArgumentError("declaration.source_end_id must be empty for a literal")
    else:
        if not d.session_id:
            raise InvalidArgumentError(f"declaration.session_id is required for {kind}")
        if not d.source_run_id:
            raise InvalidArgumentError(f"declaration.source_run_id is required for {kind}")
        if d.source_run_id == d.run_id:
            raise InvalidArgumentError("declaration.source_run_id must differ from run_id")
    if kind is SeedKind.NEXT_TURN and d.source_end_id:
        raise InvalidArgumentError(
            "declaration.source_end_id must be empty for next_turn (the store chooses it)"
        )
    if kind is SeedKind.CONTINUATION and not d.source_end_id:
        raise InvalidArgumentError("declaration.source_end_id is required for continuation")
    if exclude_reasoning and kind is not SeedKind.NEXT_TURN:
        raise InvalidArgumentError("declaration.exclude_reasoning may be true only for next_turn")


def declaration_json(d: SeedDeclaration) -> dict[str, Any]:
    """The declaration's wire and canonical form (every key present, 15.8)."""
    return {
        "agent_id": d.agent_id,
        "run_id": d.run_id,
        "session_id": d.session_id,
        "command_id": d.command_id,
        "attempt_id": d.attempt_id,
        "kind": str(d.kind),
        "source_run_id": d.source_run_id,
        "source_end_id": d.source_end_id,
        "exclude_reasoning": d.exclude_reasoning,
        "rendered_prompts": [
            {
                "prompt_id": p.prompt_id,
                "version": p.version,
                "scope": {"session_id": p.scope.session_id, "labels": dict(p.scope.labels)},
            }
            for p in d.rendered_prompts
        ],
    }


def declaration_from_json(value: Mapping[str, Any]) -> SeedDeclaration:
    """A declaration as ``declaration_json`` wrote it (stored, or an import's line)."""
    return SeedDeclaration(
        agent_id=value["agent_id"],
        run_id=value["run_id"],
        session_id=value["session_id"],
        command_id=value["command_id"],
        attempt_id=value["attempt_id"],
        kind=SeedKind(value["kind"]),
        source_run_id=value["source_run_id"],
        source_end_id=value["source_end_id"],
        exclude_reasoning=value["exclude_reasoning"],
        rendered_prompts=tuple(
            RenderedPrompt(
                prompt_id=p["prompt_id"],
                version=p["version"],
                scope=PromptScope(
                    session_id=p["scope"]["session_id"], labels=dict(p["scope"]["labels"])
                ),
            )
            for p in value["rendered_prompts"]
        ),
    )


def same_declaration(a: SeedDeclaration, b: SeedDeclaration) -> bool:
    """Equal in every field; labels compare as maps, prompts in order (15.1)."""
    return declaration_json(a) == declaration_json(b)


def check_begin_size(declaration: SeedDeclaration) -> None:
    size = len(canonical({"declaration": declaration_json(declaration)}))
    if size > MAX_COMMAND_BYTES:
        raise PayloadTooLargeError(
            f"the begin command is {size} bytes; at most {MAX_COMMAND_BYTES} are allowed",
            run_id=declaration.run_id,
        )


# --- sources ----------------------------------------------------------------------------


def prefix_json(prefix: HistoryPrefix) -> dict[str, Any]:
    return {
        "run_id": prefix.run_id,
        "end_id": prefix.end_id,
        "exclude_system": prefix.exclude_system,
        "exclude_reasoning": prefix.exclude_reasoning,
    }


def prefix_from_json(value: Mapping[str, Any]) -> HistoryPrefix:
    return HistoryPrefix(
        run_id=value["run_id"],
        end_id=value["end_id"],
        exclude_system=value["exclude_system"],
        exclude_reasoning=value["exclude_reasoning"],
    )


def source_of(declaration: SeedDeclaration, end_id: str) -> HistoryPrefix | None:
    """The source a begin resolves (15.1): ``end_id`` is the next_turn source's terminal
    record ID or the continuation's ``source_end_id``; ``None`` for a literal."""
    if declaration.kind is SeedKind.LITERAL:
        return None
    next_turn = declaration.kind is SeedKind.NEXT_TURN
    return HistoryPrefix(
        run_id=declaration.source_run_id,
        end_id=end_id,
        exclude_system=next_turn,
        exclude_reasoning=next_turn and declaration.exclude_reasoning,
    )


# --- records ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewSeedRecord:
    """A validated seed record in storage form: ``data`` is the exact bytes of the
    variant (a prefix's canonical JSON), ``final`` a literal part's flag."""

    key: str
    previous: int
    variant: Variant
    data: bytes
    final: bool | None
    prefix: HistoryPrefix | None

    def wire_size(self, position: int) -> int:
        """The bytes of the record's canonical wire encoding at ``position`` (15.1)."""
        return len(canonical(record_wire(self, position)))


def record_wire(record: NewSeedRecord, position: int) -> dict[str, Any]:
    """A stored record in its wire shape: ``{"id", "key", "previous_id", V}``."""
    wire: dict[str, Any] = {
        "id": position_text(position),
        "key": record.key,
        "previous_id": position_text(position - 1),
    }
    wire.update(_variant_wire(record))
    return wire


def _variant_wire(record: NewSeedRecord) -> dict[str, Any]:
    if record.variant is Variant.MESSAGES:
        return {"messages": record.data.decode("utf-8")}
    if record.variant is Variant.LITERAL_PART:
        return {"literal_part": {"data": _b64(record.data), "final": record.final}}
    if record.variant is Variant.PREFIX:
        assert record.prefix is not None
        return {"prefix": prefix_json(record.prefix)}
    return {"prepared": _b64(record.data)}


def _check_bytes(value: object, what: str) -> bytes:
    if not isinstance(value, bytes | bytearray):
        raise InvalidArgumentError(f"{what} must be bytes")
    if not value:
        raise InvalidArgumentError(f"{what} must not be empty")
    return bytes(value)


def _check_prefix(prefix: object) -> HistoryPrefix:
    if not isinstance(prefix, HistoryPrefix):
        raise InvalidArgumentError("record.prefix must be a HistoryPrefix")
    return HistoryPrefix(
        run_id=_check_text(prefix.run_id, "record.prefix.run_id"),
        end_id=_check_text(prefix.end_id, "record.prefix.end_id"),
        exclude_system=_check_bool(prefix.exclude_system, "record.prefix.exclude_system"),
        exclude_reasoning=_check_bool(prefix.exclude_reasoning, "record.prefix.exclude_reasoning"),
    )


def check_seed_record(run_id: str, attempt_id: str, record: object) -> NewSeedRecord:
    """The append rules of 15.2 that need no state, then the command limit."""
    require_id(run_id, "run_id")
    require_id(attempt_id, "attempt_id")
    if not isinstance(record, SeedRecord):
        raise InvalidArgumentError("record must be a SeedRecord")
    key = require_id(record.key, "record.key")
    previous_text = require_id(record.previous_id, "record.previous_id")
    if record.id:
        raise InvalidArgumentError("record.id is assigned by the store; leave it empty")
    set_variants = [variant for variant in Variant if getattr(record, variant.value) is not None]
    if len(set_variants) != 1:
        raise InvalidArgumentError(
            "record must hold exactly one of messages, literal_part, prefix, prepared"
        )
    variant = set_variants[0]
    final: bool | None = None
    prefix: HistoryPrefix | None = None
    if variant is Variant.MESSAGES:
        data = _check_bytes(record.messages, "record.messages")
        if not isinstance(parse_json(data, what="record.messages"), list):
            raise InvalidArgumentError("record.messages must be a JSON array")
    elif variant is Variant.LITERAL_PART:
        part = record.literal_part
        if not isinstance(part, LiteralPart):
            raise InvalidArgumentError("record.literal_part must be a LiteralPart")
        data = _check_bytes(part.data, "record.literal_part.data")
        final = _check_bool(part.final, "record.literal_part.final")
    elif variant is Variant.PREFIX:
        prefix = _check_prefix(record.prefix)
        data = canonical(prefix_json(prefix))
    else:
        data = _check_bytes(record.prepared, "record.prepared")
    # A previous_id that is no position can match no body end: 5 of the append's steps.
    previous = parse_position(previous_text)
    checked = NewSeedRecord(
        key=key,
        previous=-1 if previous is None else previous,
        variant=variant,
        data=data,
        final=final,
        prefix=prefix,
    )
    command = {
        "run_id": run_id,
        "attempt_id": attempt_id,
        "record": {"key": key, "previous_id": previous_text, **_variant_wire(checked)},
    }
    size = len(canonical(command))
    if size > MAX_COMMAND_BYTES:
        raise PayloadTooLargeError(
            f"the append command is {size} bytes; at most {MAX_COMMAND_BYTES} are allowed",
            run_id=run_id,
        )
    return checked


def same_record(stored: NewSeedRecord, new: NewSeedRecord) -> bool:
    """An exact retry of the append under the same key (15.2 step 3)."""
    return (
        stored.previous == new.previous
        and stored.variant is new.variant
        and stored.data == new.data
        and stored.final == new.final
    )


# --- attempts ---------------------------------------------------------------------------


@dataclass(slots=True)
class Attempt:
    """An attempt's row as the decisions read it."""

    run_id: str
    attempt_id: str
    state: AttemptState
    declaration: SeedDeclaration | None
    source: HistoryPrefix | None
    history_end: int
    body_end: int
    prepared_bytes: int
    prefix_id: int | None
    literal_open: bool

    @property
    def tombstone(self) -> bool:
        return self.declaration is None

    def seed(self) -> RunSeed:
        assert self.declaration is not None
        return RunSeed(
            declaration=self.declaration,
            source=self.source,
            end_id=position_text(self.history_end),
        )

    def preparation(self) -> RunPreparation:
        return RunPreparation(
            seed=self.seed(),
            end_id=position_text(self.body_end),
            prepared_bytes=self.prepared_bytes,
        )


def abandoned_error(attempt: Attempt) -> PreparationAbandonedError:
    return PreparationAbandonedError(
        f"attempt {attempt.attempt_id!r} of run {attempt.run_id!r} was settled without "
        "publication and can never publish",
        run_id=attempt.run_id,
    )


def conflict(run_id: str, message: str) -> SeedConflictError:
    return SeedConflictError(message, run_id=run_id)


def check_append_order(attempt: Attempt, record: NewSeedRecord) -> None:
    """Steps 4-8 of an append (15.2): where a new record may go; ``seed_conflict``."""
    run_id = attempt.run_id
    if attempt.state is AttemptState.PUBLISHED:
        raise conflict(run_id, "the attempt is published; nothing may be appended to it")
    if record.previous != attempt.body_end:
        raise conflict(
            run_id,
            f"previous_id must be the attempt's body end {position_text(attempt.body_end)!r}",
        )
    if attempt.literal_open and record.variant is not Variant.LITERAL_PART:
        raise conflict(run_id, "a literal is open: only its next literal_part may follow")
    if attempt.body_end > attempt.history_end and record.variant is not Variant.PREPARED:
        raise conflict(run_id, "the compiled start comes last: only prepared records follow")
    if record.variant is Variant.PREFIX:
        if attempt.prefix_id is not None:
            raise conflict(run_id, "the attempt already holds its prefix")
        if attempt.source is None or record.prefix != attempt.source:
            raise conflict(run_id, "the prefix must be exactly the attempt's source")


def apply_append(attempt: Attempt, record: NewSeedRecord) -> int:
    """The counters a stored record moves (step 9); the position it is stored at."""
    position = attempt.body_end + 1
    attempt.body_end = position
    if record.variant.history:
        attempt.history_end = position
    else:
        attempt.prepared_bytes += len(record.data)
    if record.variant is Variant.PREFIX:
        attempt.prefix_id = position
    attempt.literal_open = record.variant is Variant.LITERAL_PART and not record.final
    return position


def check_publication(attempt: Attempt, seed_end_id: str, end_id: str, prepared_bytes: int) -> None:
    """Step 2 of a publication (15.2): the values must match the chain; ``seed_conflict``."""
    run_id = attempt.run_id
    if seed_end_id != position_text(attempt.history_end):
        raise conflict(
            run_id, f"seed_end_id must be the history end {position_text(attempt.history_end)!r}"
        )
    if end_id != position_text(attempt.body_end):
        raise conflict(run_id, f"end_id must be the body end {position_text(attempt.body_end)!r}")
    if attempt.prepared_bytes <= 0:
        raise conflict(run_id, "no publication without a compiled start (prepared records)")
    if prepared_bytes != attempt.prepared_bytes:
        raise conflict(
            run_id, f"prepared_bytes must be the attempt's total {attempt.prepared_bytes}"
        )
    if attempt.source is not None and attempt.prefix_id is None:
        raise conflict(run_id, "the attempt has a source but holds no prefix record")
    if attempt.literal_open:
        raise conflict(run_id, "a literal is still open")


def check_publication_args(
    run_id: object, attempt_id: object, seed_end_id: object, end_id: object, prepared: object
) -> None:
    require_id(run_id, "run_id")  # type: ignore[arg-type]
    require_id(attempt_id, "attempt_id")  # type: ignore[arg-type]
    require_id(seed_end_id, "seed_end_id")  # type: ignore[arg-type]
    require_id(end_id, "end_id")  # type: ignore[arg-type]
    if not isinstance(prepared, int) or isinstance(prepared, bool):
        raise InvalidArgumentError("prepared_bytes must be an integer")


# --- operations -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Owner:
    """A seed operation's identity; ``session_id`` "" when sessionless."""

    agent_id: str
    session_id: str
    command_id: str


def check_operation(operation: object) -> PreparationOperation:
    if not isinstance(operation, PreparationOperation):
        raise InvalidArgumentError("operation must be a PreparationOperation")
    require_id(operation.agent_id, "operation.agent_id")
    require_id(operation.run_id, "operation.run_id")
    require_id(operation.command_id, "operation.command_id")
    _check_text(operation.session_id, "operation.session_id")
    return operation


def owner_of(value: SeedDeclaration | PreparationOperation) -> Owner:
    return Owner(agent_id=value.agent_id, session_id=value.session_id, command_id=value.command_id)


def check_bound_to(run_id: str, bound: Owner | None, owner: Owner) -> None:
    """Every begin, find and settlement must name the run ID's operation (15.1)."""
    if bound is not None and bound != owner:
        raise conflict(
            run_id,
            f"run {run_id!r} is prepared by another operation (agent, session or command differ)",
        )


# --- pages ------------------------------------------------------------------------------


def check_limit(limit: object) -> int:
    """A page's ``limit`` (15.4): an integer >= 1, served as at most 512."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidTranscriptPositionError("limit must be an integer of at least 1")
    return min(limit, MAX_PAGE_RECORDS)


def page_after(after: object, first: int, last: int, run_id: str) -> int:
    """The position a page starts after: "" is the range's start (``first - 1``), else an
    exact record ID of the range ``first``..``last``."""
    if not isinstance(after, str):
        raise InvalidArgumentError("after must be a string")
    if after == "":
        return first - 1
    position = parse_position(after)
    if position is None or not first <= position <= last:
        raise InvalidTranscriptPositionError(
            f"after {after!r} is not a record of the listed range", run_id=run_id
        )
    return position


_PAGE_FRAME: Final = len(b'{"records":[],"next_cursor":""}')


def page_length(sizes: Sequence[int], positions: Sequence[int], limit: int) -> int:
    """How many records of ``sizes`` (their wire sizes, in order, at ``positions``) the
    page holds: the longest run that keeps the bound of 15.1, measured with
    ``next_cursor`` set to the last record's ID; at least one."""
    total = _PAGE_FRAME
    count = 0
    for size, position in zip(sizes[:limit], positions, strict=False):
        grown = total + size + (1 if count else 0)
        if count and grown + len(position_text(position)) > MAX_PAGE_BYTES:
            break
        total = grown
        count += 1
    return count
