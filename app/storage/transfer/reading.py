"""Reading a session file: its lines (bounded), their JSON, and the values in them, each
refusal ``invalid_argument`` naming its line."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Iterator
from datetime import datetime
from enum import StrEnum
from typing import Any, Final, TypeVar

from app.domain import seeds
from app.domain import validation as v
from app.domain.limits import Limits
from app.domain.times import to_millis
from runtime_store_client import (
    Checkpoint,
    ImportConflictError,
    InvalidArgumentError,
    StoreError,
    UnavailableError,
)
from runtime_store_client.protocols import BinaryReader
from runtime_store_client.times import TimeError, parse_rfc3339

E = TypeVar("E", bound=StrEnum)


T = TypeVar("T")


log = logging.getLogger("runtime_store.import")


#: Bytes read from the file at a time.
CHUNK: Final = 256 * 1024


_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


def max_line_bytes(limits: Limits) -> int:
    """The longest line a valid file holds: a payload at its bound with every byte escaped
    once, a checkpoint at its bound in base64, or a seed command at its bound (15.1: a
    seed record or declaration as its canonical encoding counts it), plus the rest of the
    line."""
    return (
        max(
            2 * limits.max_payload_bytes,
            4 * limits.max_checkpoint_bytes // 3,
            seeds.MAX_COMMAND_BYTES,
        )
        + 64 * 1024
    )


def _lines(source: BinaryReader, longest: int) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of ``source`` (split on ``\n`` only), none longer than
    ``longest``; read in chunks, so a line without end never fills memory."""
    number = 0
    pending = bytearray()
    while chunk := source.read(CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            number += 1
            if pending:
                pending += chunk[start : end + 1]
                line, pending = bytes(pending), bytearray()
            else:
                line = chunk[start : end + 1]
            if len(line) > longest:
                raise _bad(number, f"the line is longer than {longest} bytes")
            yield number, line
            start = end + 1
        pending += chunk[start:]
        if len(pending) > longest:
            raise _bad(number + 1, f"the line is longer than {longest} bytes")
    if pending:
        yield number + 1, bytes(pending)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)


def _parse(number: int, raw: bytes) -> Any:
    """One line's JSON value (UTF-8; ``NaN`` and ``Infinity`` are not JSON)."""
    try:
        return _DECODER.decode(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise _bad(number, f"not a JSON value: {exc}") from None


def _bad(line: int, message: str, **fields: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"line {line}: {message}", line=line, **fields)


def _located(line: int, exc: StoreError) -> StoreError:
    """The error to raise for a rule a check of ``line`` found broken: ``invalid_argument``
    at the line (a conflict stays a conflict, a located error stays as it is)."""
    if isinstance(exc, ImportConflictError | UnavailableError) or (
        isinstance(exc, InvalidArgumentError) and exc.line
    ):
        return exc  # a conflict, a located refusal, a stop (the client went away)
    # e.g. run_record_owner_mismatch, payload_too_large: the line breaks a rule
    return _bad(line, exc.message, run_id=exc.run_id, event_key=exc.event_key)


def _object(value: Any, keys: tuple[str, ...], what: str) -> dict[str, Any]:
    """A JSON object with exactly ``keys``."""
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{what} must be a JSON object")
    if value.keys() != set(keys):
        missing = sorted(set(keys) - value.keys())
        unknown = sorted(value.keys() - set(keys))
        problem = f"lacks {missing[0]!r}" if missing else f"has unknown key {unknown[0]!r}"
        raise InvalidArgumentError(f"{what} {problem}")
    return value


def _text(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what}.{key} must be a string")
    return value


def _time(value: Any, what: str) -> datetime:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be an RFC 3339 string")
    try:
        return parse_rfc3339(value)
    except TimeError as exc:
        raise InvalidArgumentError(f"{what} {exc}") from None


def _millis(value: Any, what: str) -> int:
    return to_millis(_time(value, what), what)


def _enum(kind: type[E], value: Any, what: str) -> E:
    try:
        return kind(value)
    except ValueError:
        raise InvalidArgumentError(
            f"{what} {value!r} is not one of {[m.value for m in kind]}"
        ) from None


def _checkpoint(value: Any, limits: Limits) -> Checkpoint | None:
    if value is None:
        return None
    obj = _object(value, ("id", "data"), "run.checkpoint")
    try:  # standard base64, decoded strictly (as the API decodes checkpoint data)
        data = base64.b64decode(_text(obj, "data", "run.checkpoint").encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidArgumentError("run.checkpoint.data is not valid standard base64") from None
    checkpoint = Checkpoint(id=_text(obj, "id", "run.checkpoint"), data=data)
    limits.check_checkpoint(checkpoint)
    v.require_id(checkpoint.id, "run.checkpoint.id")
    if not data:
        raise InvalidArgumentError("run.checkpoint.data is required")
    return checkpoint


def _request_digest(value: Any) -> bytes | None:
    """A run line's ``request_digest`` (12.1): null, or 64 lowercase hex digits of 32 bytes
    that are not all zero."""
    if value is None:
        return None
    if not isinstance(value, str) or not _DIGEST.fullmatch(value):
        raise InvalidArgumentError("run.request_digest must be 64 lowercase hex digits or null")
    return v.check_request_digest(bytes.fromhex(value))


def _payload(value: Any) -> bytes:
    if not isinstance(value, str):
        raise InvalidArgumentError("record.payload must be a string holding the JSON text")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError("record.payload holds a lone surrogate") from None
