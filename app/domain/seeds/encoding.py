"""The canonical encoding the byte limits of CONTRACT.md 15 count, the bounds, an
attempt's states and record variants, and record positions."""

from __future__ import annotations

import base64
import enum
import json
from typing import Any, Final

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


def base64_text(data: bytes) -> str:
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
