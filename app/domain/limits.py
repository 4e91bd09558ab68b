"""Input bounds: identifiers, labels, payloads and checkpoints (the security issue).

An identifier or label over its bound is ``invalid_argument``; a record payload, memory
data or checkpoint over its bound is ``payload_too_large``. Nothing is written either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from dataclasses import dataclass
from typing import Final

from runtime_store_client import (
    Checkpoint,
    InvalidArgumentError,
    PayloadTooLargeError,
    Record,
    RunStart,
)

MiB = 1024 * 1024

#: Most ``label`` filters one run search takes (CONTRACT.md 2.10): a run holds at most 64
#: labels, so more can match nothing, and each one costs the search a comparison per run.
MAX_LABEL_FILTERS: Final = 64


def check_label_filters(labels: object, what: str = "labels") -> None:
    """A search's label filters, counted before anything else is looked at: more than
    ``MAX_LABEL_FILTERS`` is ``invalid_argument`` (2.10)."""
    if isinstance(labels, Sized) and len(labels) > MAX_LABEL_FILTERS:
        raise InvalidArgumentError(
            f"{what}: a search takes at most {MAX_LABEL_FILTERS} label filters, not {len(labels)}"
        )


@dataclass(frozen=True)
class Limits:
    max_id_bytes: int = 256
    max_labels: int = 64
    max_label_bytes: int = 1024
    max_payload_bytes: int = 4 * MiB
    max_checkpoint_bytes: int = 16 * MiB

    def check_id(self, value: object, what: str) -> None:
        if (
            isinstance(value, str)
            and len(value.encode("utf-8", "surrogatepass")) > self.max_id_bytes
        ):
            raise InvalidArgumentError(f"{what} is longer than {self.max_id_bytes} bytes")

    def check_labels(self, labels: Mapping[str, str] | None, what: str) -> None:
        if not isinstance(labels, Mapping):
            return
        if len(labels) > self.max_labels:
            raise InvalidArgumentError(f"{what} has more than {self.max_labels} labels")
        for key, value in labels.items():
            # Labels are stored as JSON text, where NUL is escaped (2.6, domain/text.py).
            for part in (key, value):
                if isinstance(part, str) and len(part.encode("utf-8", "surrogatepass")) > (
                    self.max_label_bytes
                ):
                    raise InvalidArgumentError(
                        f"{what} has a key or value longer than {self.max_label_bytes} bytes"
                    )

    def check_run_start(self, run: RunStart) -> None:
        if not isinstance(run, RunStart):
            return
        for name in ("run_id", "agent_id", "session_id", "parent_run_id", "predecessor_run_id"):
            self.check_id(getattr(run, name), f"run.{name}")
        self.check_labels(run.labels, "run.labels")

    def check_record(self, record: Record, what: str = "record") -> None:
        if not isinstance(record, Record):
            return
        for name in ("event_key", "run_id", "agent_id", "session_id", "turn_id", "type"):
            self.check_id(getattr(record, name), f"{what}.{name}")
        if isinstance(record.payload, bytes | bytearray) and (
            len(record.payload) > self.max_payload_bytes
        ):
            raise PayloadTooLargeError(
                f"{what}.payload is larger than {self.max_payload_bytes} bytes",
                run_id=record.run_id if isinstance(record.run_id, str) else "",
                event_key=record.event_key if isinstance(record.event_key, str) else "",
            )

    def check_checkpoint(self, checkpoint: Checkpoint) -> None:
        if not isinstance(checkpoint, Checkpoint):
            return
        self.check_id(checkpoint.id, "checkpoint.id")
        if isinstance(checkpoint.data, bytes | bytearray) and (
            len(checkpoint.data) > self.max_checkpoint_bytes
        ):
            raise PayloadTooLargeError(
                f"checkpoint.data is larger than {self.max_checkpoint_bytes} bytes"
            )

    def check_data_size(self, size: int, what: str) -> None:
        if size > self.max_payload_bytes:
            raise PayloadTooLargeError(f"{what} is larger than {self.max_payload_bytes} bytes")
