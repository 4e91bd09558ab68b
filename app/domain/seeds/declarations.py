"""Seed declarations and their sources (15.2): checked, stored as JSON, compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.domain.text import check_plain_text
from app.domain.validation import require_id
from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    PayloadTooLargeError,
    PromptScope,
    RenderedPrompt,
    SeedDeclaration,
    SeedKind,
)

from .encoding import MAX_COMMAND_BYTES, canonical

# --- declarations -----------------------------------------------------------------------


def check_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    check_plain_text(value, what)
    return value


def check_bool(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{what} must be a boolean")
    return value


def _check_labels(labels: object, what: str) -> dict[str, str]:
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise InvalidArgumentError(f"{what} must be a map of strings")
    return {
        check_text(key, f"{what} key"): check_text(value, f"{what}[{key!r}]")
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
                prompt_id=check_text(prompt.prompt_id, f"{what}.prompt_id"),
                version=check_text(prompt.version, f"{what}.version"),
                scope=PromptScope(
                    session_id=check_text(scope.session_id, f"{what}.scope.session_id"),
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
        check_text(getattr(d, name), f"declaration.{name}")
    try:
        kind = SeedKind(d.kind)
    except ValueError:
        raise InvalidArgumentError(
            "declaration.kind must be literal, next_turn or continuation"
        ) from None
    exclude_reasoning = check_bool(d.exclude_reasoning, "declaration.exclude_reasoning")
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
