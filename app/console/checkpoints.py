"""A suspended run's checkpoint as the run page summarises it: its ID, size, a short
preview of its opaque bytes (CONTRACT.md 1.6: never interpreted), and the record that
suspended the run.

The preview is bounded (``PREVIEW_BYTES``): text when those bytes are printable UTF-8,
else hexadecimal; Jinja2 escapes it like any other value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from runtime_store_client import Checkpoint, LifecycleRecordType, Record
from runtime_store_client.times import format_rfc3339

from .views import pretty_json, showable

#: Bytes of a checkpoint the preview shows at most (as text; hexadecimal shows a third).
PREVIEW_BYTES: Final = 240
HEX_BYTES: Final = PREVIEW_BYTES // 3
_ALLOWED_CONTROLS: Final = frozenset("\n\r\t")


@dataclass(frozen=True)
class Preview:
    kind: str  # "text" or "hex"
    text: str
    shown: int  # bytes shown
    size: int

    @property
    def cut(self) -> bool:
        return self.shown < self.size


def _text(data: bytes) -> str | None:
    """``data`` as printable text, a multi-byte character cut at the end dropped."""
    for trim in range(4):
        try:
            text = data[: len(data) - trim].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if all(char.isprintable() or char in _ALLOWED_CONTROLS for char in text):
            return text
        return None
    return None


def preview(data: bytes) -> Preview:
    """The first bytes of a checkpoint, as text or hexadecimal."""
    head = data[:PREVIEW_BYTES]
    text = _text(head)
    if text is not None and text:
        return Preview("text", showable(text), len(text.encode()), len(data))
    shown = data[:HEX_BYTES]
    return Preview("hex", shown.hex(" "), len(shown), len(data))


@dataclass(frozen=True)
class Suspension:
    """The checkpoint and the ``run_suspended`` record that stored it."""

    id: str
    size: int
    preview: Preview
    record_id: str = ""
    record_key: str = ""
    record_time: str = ""
    record_payload: str = ""


def summary(found: Checkpoint, records: list[Record]) -> Suspension:
    """The summary of ``found``, with its ``run_suspended`` record when in ``records``."""
    suspending = next(
        (r for r in reversed(records) if r.type == LifecycleRecordType.RUN_SUSPENDED), None
    )
    if suspending is None:
        return Suspension(showable(found.id), len(found.data), preview(found.data))
    return Suspension(
        id=showable(found.id),
        size=len(found.data),
        preview=preview(found.data),
        record_id=suspending.id,
        record_key=showable(suspending.event_key),
        record_time=format_rfc3339(suspending.timestamp),
        record_payload=pretty_json(suspending.payload.decode()),
    )
