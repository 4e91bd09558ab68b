"""The values of a session file's seed lines (CONTRACT.md 15.7, 15.8), read strictly in the
one spelling the export writes: a declaration, a source or prefix, a seed record's object
and its one variant, positions, base64 bytes. Their rules are the seed writes' own
(``app/domain/seeds``), checked by ``seed_lines``."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from app.domain import seeds
from app.domain.seeds import Variant
from app.storage.transfer.format import SEED_RECORD_KEYS
from app.storage.transfer.reading import _enum, _object
from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    LiteralPart,
    PromptScope,
    RenderedPrompt,
    SeedDeclaration,
    SeedKind,
)

_DECLARATION_KEYS: Final = (
    "agent_id",
    "run_id",
    "session_id",
    "command_id",
    "attempt_id",
    "kind",
    "source_run_id",
    "source_end_id",
    "exclude_reasoning",
    "rendered_prompts",
)
_PREFIX_KEYS: Final = ("run_id", "end_id", "exclude_system", "exclude_reasoning")
_VARIANTS: Final = frozenset(variant.value for variant in Variant)


def position(value: Any, what: str) -> int:
    parsed = seeds.parse_position(value) if isinstance(value, str) else None
    if parsed is None:
        raise InvalidArgumentError(f"{what} must be a position: '0', '1', '2', …")
    return parsed


def strict_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    return value


def _map(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{what} must be a JSON object")
    return value


def declaration(value: Any) -> SeedDeclaration:
    """A declaration as ``declaration_json`` writes it; its rules are checked by
    ``seeds.check_declaration``."""
    obj = _object(value, _DECLARATION_KEYS, "seed_attempt.declaration")
    prompts = obj["rendered_prompts"]
    if not isinstance(prompts, list):
        raise InvalidArgumentError("seed_attempt.declaration.rendered_prompts must be a list")
    rendered = []
    for index, prompt in enumerate(prompts):
        what = f"seed_attempt.declaration.rendered_prompts[{index}]"
        p = _object(prompt, ("prompt_id", "version", "scope"), what)
        scope = _object(p["scope"], ("session_id", "labels"), f"{what}.scope")
        rendered.append(
            RenderedPrompt(
                prompt_id=p["prompt_id"],
                version=p["version"],
                scope=PromptScope(
                    session_id=scope["session_id"],
                    labels=_map(scope["labels"], f"{what}.scope.labels"),
                ),
            )
        )
    kind = _enum(SeedKind, obj["kind"], "seed_attempt.declaration.kind")
    return SeedDeclaration(
        agent_id=obj["agent_id"],
        run_id=obj["run_id"],
        session_id=obj["session_id"],
        command_id=obj["command_id"],
        attempt_id=obj["attempt_id"],
        kind=kind,
        source_run_id=obj["source_run_id"],
        source_end_id=obj["source_end_id"],
        exclude_reasoning=obj["exclude_reasoning"],
        rendered_prompts=tuple(rendered),
    )


def prefix(value: Any, what: str) -> HistoryPrefix:
    obj = _object(value, _PREFIX_KEYS, what)
    for name in ("exclude_system", "exclude_reasoning"):
        if not isinstance(obj[name], bool):
            raise InvalidArgumentError(f"{what}.{name} must be a boolean")
    return HistoryPrefix(
        run_id=strict_text(obj["run_id"], f"{what}.run_id"),
        end_id=strict_text(obj["end_id"], f"{what}.end_id"),
        exclude_system=obj["exclude_system"],
        exclude_reasoning=obj["exclude_reasoning"],
    )


def record_object(value: Any) -> tuple[dict[str, Any], Variant]:
    """A seed record line's object: its five keys and exactly one variant key."""
    obj = _map(value, "seed_record")
    missing = [key for key in SEED_RECORD_KEYS if key not in obj]
    if missing:
        raise InvalidArgumentError(f"seed_record lacks {missing[0]!r}")
    rest = [key for key in obj if key not in SEED_RECORD_KEYS]
    variants = [Variant(key) for key in rest if key in _VARIANTS]
    if len(rest) != 1 or len(variants) != 1:
        raise InvalidArgumentError(
            "seed_record holds exactly one of messages, literal_part, prefix, prepared "
            f"besides {list(SEED_RECORD_KEYS)}"
        )
    for key in SEED_RECORD_KEYS:
        strict_text(obj[key], f"seed_record.{key}")
    return obj, variants[0]


def _bytes(value: Any, what: str) -> bytes:
    """Padded standard base64, in the one spelling the encoder writes."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a base64 string")
    try:
        data = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidArgumentError(f"{what} is not valid standard base64") from None
    if base64.b64encode(data).decode("ascii") != value:
        raise InvalidArgumentError(f"{what} is not in its one base64 spelling")
    return data


def variant(obj: Mapping[str, Any]) -> Any:
    """The variant's value as ``SeedRecord`` holds it."""
    if "messages" in obj:
        text = strict_text(obj["messages"], "seed_record.messages")
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgumentError("seed_record.messages holds a lone surrogate") from None
    if "literal_part" in obj:
        part = _object(obj["literal_part"], ("data", "final"), "seed_record.literal_part")
        return LiteralPart(
            data=_bytes(part["data"], "seed_record.literal_part.data"), final=part["final"]
        )
    if "prefix" in obj:
        return prefix(obj["prefix"], "seed_record.prefix")
    return _bytes(obj["prepared"], "seed_record.prepared")
