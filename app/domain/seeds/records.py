"""Seed records (15.3): checked, compared as the same record, and written for the wire."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.domain.payloads import parse_json
from app.domain.validation import require_id
from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    LiteralPart,
    PayloadTooLargeError,
    SeedRecord,
)

from .declarations import check_bool, check_text, prefix_json
from .encoding import (
    MAX_COMMAND_BYTES,
    Variant,
    base64_text,
    canonical,
    parse_position,
    position_text,
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
        return {"literal_part": {"data": base64_text(record.data), "final": record.final}}
    if record.variant is Variant.PREFIX:
        assert record.prefix is not None
        return {"prefix": prefix_json(record.prefix)}
    return {"prepared": base64_text(record.data)}


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
        run_id=check_text(prefix.run_id, "record.prefix.run_id"),
        end_id=check_text(prefix.end_id, "record.prefix.end_id"),
        exclude_system=check_bool(prefix.exclude_system, "record.prefix.exclude_system"),
        exclude_reasoning=check_bool(prefix.exclude_reasoning, "record.prefix.exclude_reasoning"),
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
        final = check_bool(part.final, "record.literal_part.final")
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
