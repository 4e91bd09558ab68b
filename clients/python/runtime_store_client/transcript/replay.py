"""Rebuild a run's transcript from its records (CONTRACT.md 10.3): the replay of records in
hand and the checks of every page read. The builders that read a store
(``build_messages_from_run_log`` and the seeded history of 15.6) are in :mod:`.history`.

Only ``transcript_messages_seeded`` and ``transcript_messages_appended`` records carry
messages; every other record is skipped. Their payloads are decoded strictly
(:func:`decode_messages`) and concatenated in record order; nothing is reordered.

Errors:

* a payload that does not decode → :class:`~runtime_store_client.InvalidTranscriptError`
  naming the record's event key and run (also set as ``event_key`` / ``run_id``);
* a run with no transcript record → :class:`NoTranscriptError` (a subclass of it, rule
  ``no_transcript_records``);
* a page that breaks the paging contract → :class:`RunLogPageError`: the store is at fault,
  not the transcript, and retrying will not help;
* errors of the store's reads themselves (``run_not_found``, ``unavailable``…) propagate
  unchanged;
* an empty ``run_id`` → :class:`~runtime_store_client.InvalidArgumentError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Protocol

from ..errors import InvalidArgumentError, InvalidTranscriptError, StoreError
from ..types import Page, Record
from .messages import decode_messages
from .model import Message
from .violations import TranscriptRule, TranscriptViolation

TRANSCRIPT_MESSAGES_SEEDED: Final = "transcript_messages_seeded"
TRANSCRIPT_MESSAGES_APPENDED: Final = "transcript_messages_appended"
#: The record types that carry transcript messages.
TRANSCRIPT_RECORD_TYPES: Final = frozenset(
    {TRANSCRIPT_MESSAGES_SEEDED, TRANSCRIPT_MESSAGES_APPENDED}
)
#: The page size :func:`build_messages_from_run_log` asks for.
REPLAY_PAGE_SIZE: Final = 512


class NoTranscriptError(InvalidTranscriptError):
    """The run has no transcript record at all (code ``invalid_transcript``)."""


class RunLogPageError(StoreError):
    """A page a replay read broke its contract (CONTRACT.md 4, 10.3, 12.3 and 15.6).

    The store, not the transcript, is at fault: a record without an ID or of another run,
    a repeated record ID, or a cursor that makes no forward progress; for a seeded run
    (15.6) also a seed that does not name its run's owner or history end, seed records that
    are not one contiguous chain ending at that end, a record holding no history variant
    or more than one, a ``prefix`` that is not the seed's source or comes twice, a literal
    interrupted or left open, and a source outside the run's session or agent or met twice
    on one path (a cycle).
    """

    default_code = "internal"
    default_status = 500


class RunRecordLister(Protocol):
    """The one read replay needs; every :class:`~runtime_store_client.Store` has it."""

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page: ...


class AsyncRunRecordLister(Protocol):
    """The async twin of :class:`RunRecordLister`."""

    async def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page: ...


def _decode_record(record: Record) -> list[Message]:
    try:
        return decode_messages(record.payload)
    except InvalidTranscriptError as exc:
        raise InvalidTranscriptError(
            f"record {record.event_key!r} (type {record.type}) of run {record.run_id!r}: "
            f"{exc.message}",
            run_id=record.run_id,
            event_key=record.event_key,
            violations=exc.violations,
        ) from exc


def replay_run_log_events(records: Iterable[Record]) -> tuple[list[Message], bool]:
    """The messages of the transcript records among ``records``, in order.

    Returns the messages and whether any transcript record was found (a transcript
    record holding ``[]`` counts as found).
    """
    messages: list[Message] = []
    found = False
    for record in records:
        if record.type not in TRANSCRIPT_RECORD_TYPES:
            continue
        messages.extend(_decode_record(record))
        found = True
    return messages, found


class _Pager:
    """Checks every page of one run's records and yields the cursor to follow.

    ``method`` and ``after`` name the list read and its cursor argument in errors:
    ``list_run_records`` and ``cursor`` (10.3) or ``list_run_transcript_records`` and
    ``after`` (12.3, read by the prefix replay of 15.6).
    """

    def __init__(
        self, run_id: str, method: str = "list_run_records", after: str = "cursor"
    ) -> None:
        if not run_id:
            raise InvalidArgumentError("run_id is required")
        self.run_id = run_id
        self.method = method
        self.after = after
        self.cursor = ""
        self.seen: set[str] = set()
        self.messages: list[Message] = []
        self.found = False

    def _broken(self, what: str) -> RunLogPageError:
        return RunLogPageError(
            f"{self.method} for run {self.run_id!r} ({self.after} {self.cursor!r}): {what}",
            run_id=self.run_id,
        )

    def check(self, page: Page) -> bool:
        """Check ``page`` and move the cursor past it; whether another page follows."""
        for record in page.records:
            if not record.id:
                raise self._broken(f"record {record.event_key!r} has no ID")
            if record.run_id != self.run_id:
                raise self._broken(f"record {record.id} belongs to run {record.run_id!r}")
            if record.id in self.seen:
                raise self._broken(f"record ID {record.id} repeats")
            self.seen.add(record.id)
        next_cursor = page.next_cursor
        if next_cursor:
            if not page.records:
                raise self._broken(f"empty page with next_cursor {next_cursor!r}")
            if next_cursor == self.cursor:
                raise self._broken("next_cursor repeats the cursor it was read with")
            if next_cursor != page.records[-1].id:
                raise self._broken(
                    f"next_cursor {next_cursor!r} is not the last record's ID "
                    f"{page.records[-1].id!r}"
                )
        self.cursor = next_cursor
        return bool(next_cursor)

    def replay(self, page: Page) -> list[Message]:
        """The messages of a checked page's transcript records."""
        replayed, found = replay_run_log_events(page.records)
        self.found = self.found or found
        return replayed

    def take(self, page: Page) -> bool:
        """Check ``page``, replay its transcript records; whether another page follows."""
        more = self.check(page)
        self.messages.extend(self.replay(page))
        return more

    def no_transcript(self) -> NoTranscriptError:
        violation = TranscriptViolation(
            -1,
            str(TranscriptRule.NO_TRANSCRIPT_RECORDS),
            f"run {self.run_id!r} has no {TRANSCRIPT_MESSAGES_SEEDED} or "
            f"{TRANSCRIPT_MESSAGES_APPENDED} record",
        )
        return NoTranscriptError(violations=[violation], run_id=self.run_id)

    def result(self) -> list[Message]:
        if not self.found:
            raise self.no_transcript()
        return self.messages
