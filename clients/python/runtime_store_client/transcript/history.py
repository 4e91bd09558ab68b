"""A run's whole history read from a store: its seed, then its own transcript records
(CONTRACT.md 10.3 and 15.6).

A seeded run's records hold only what the run itself wrote; the history it started from is
its *seed* (15.1): literal messages and at most one ``prefix``, a reference to the history
of an earlier run of the same session through one of its records. Readers compose the two:

* :func:`build_messages_from_run_log_prefix` (15.6): the history through the run's record
  ``through``;
* :func:`build_messages_from_run_log` (10.3): the history through the run's last record,
  reading its records with ``list_run_records`` exactly as before for a run without a seed;
* :func:`build_seed_history`: what the run inherits from its seed alone, with the seed (the
  console's transcript view shows this part under its own marker).

Each has an ``_async`` twin. The procedure is written once, as a generator that yields the
store reads it needs (:class:`_Read`) and receives their answers; a sync and an async driver
run it, so both twins read exactly the same things in the same order.

The procedure (15.6), for a run and a position ``through``:

1. ``load_run``, then the first ``list_run_transcript_records(run_id, through, "", 512)``
   page (the store judges ``through``);
2. with a ``seed_end_id``: ``load_run_seed`` and every ``list_run_seed_records`` page
   (limit 512, ``after`` the previous ``next_cursor``), each checked; in position order,
   ``messages`` decode as a message array, ``literal_part`` data is joined up to its
   ``final`` part and decodes as a non-empty message array, and the ``prefix`` expands in
   place the source run's history through ``prefix.end_id`` by this same procedure, with
   the prefix's exclusions OR-ed with those in force around it;
3. the run's own transcript records, page by page;
4. ``load_run`` again: a purge meanwhile answers its error, never a history it removed.

Expansions use an explicit stack, not recursion: a session of a thousand ``next_turn``
turns is a chain of a thousand prefixes, each run read once (its seed and its transcript,
one page each when they fit).

Exclusions: ``exclude_system`` drops ``system`` messages; ``exclude_reasoning`` drops
``thinking`` parts, sets every ``tool_use.thought_signature`` to "" and drops a message
left with no parts and no (or an empty) ``meta``; ``meta`` is kept as stored (15.9 item 13).

Errors: a page or a seed that breaks a check is :class:`RunLogPageError` (the store is at
fault); content that does not decode is ``invalid_transcript``
(:class:`~runtime_store_client.InvalidTranscriptError`, naming the record); the store's own
errors (``run_not_found``, ``session_purged``, ``invalid_transcript_position`` for a bad
``through``…) propagate unchanged; an empty ``run_id`` is ``invalid_argument``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Generator, Mapping
from typing import Any, NamedTuple, Protocol, TypeVar, cast, runtime_checkable

from ..errors import InvalidArgumentError, InvalidTranscriptError
from ..seeds import HistoryPrefix, RunSeed, SeedPage, SeedRecord
from ..types import Page, RecordPage, RunMeta
from ._json import fail
from .messages import decode_messages
from .model import Message, Part, Role, ThinkingPart, ToolUsePart
from .replay import (
    REPLAY_PAGE_SIZE,
    AsyncRunRecordLister,
    RunLogPageError,
    RunRecordLister,
    _Pager,
)
from .violations import TranscriptRule

#: The page size the replay asks for seed records (the most a page holds, 15.4).
SEED_PAGE_SIZE = 512

T = TypeVar("T")


@runtime_checkable
class RunHistoryReader(Protocol):
    """The reads a seeded run's replay needs (15.6); every :class:`~runtime_store_client.Store`
    has them."""

    def load_run(self, run_id: str) -> RunMeta: ...
    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> RecordPage: ...
    def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed: ...
    def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage: ...


@runtime_checkable
class AsyncRunHistoryReader(Protocol):
    """The async twin of :class:`RunHistoryReader`."""

    async def load_run(self, run_id: str) -> RunMeta: ...
    async def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> RecordPage: ...
    async def load_run_seed(self, run_id: str, seed_end_id: str) -> RunSeed: ...
    async def list_run_seed_records(
        self, run_id: str, seed_end_id: str, after: str = "", limit: int = 100
    ) -> SeedPage: ...


@dataclasses.dataclass(frozen=True, kw_only=True)
class SeedHistory:
    """What a run inherits from its seed (15.6 step 2).

    ``run`` is the run as its last ``load_run`` answered; ``seed`` its published seed, or
    ``None`` for a run started without one; ``messages`` the seed's history in position
    order, every ``prefix`` expanded with its exclusions (``[]`` without a seed).
    """

    run: RunMeta
    seed: RunSeed | None
    messages: list[Message]


# --- exclusions -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Exclusions:
    system: bool = False
    reasoning: bool = False

    def around(self, prefix: HistoryPrefix) -> _Exclusions:
        """Those in force inside ``prefix``: an inner exclusion is never undone."""
        return _Exclusions(
            self.system or prefix.exclude_system, self.reasoning or prefix.exclude_reasoning
        )


_NONE = _Exclusions()


def _without_reasoning(message: Message) -> Message | None:
    parts: list[Part] = [
        dataclasses.replace(part, thought_signature="") if isinstance(part, ToolUsePart) else part
        for part in message.parts
        if not isinstance(part, ThinkingPart)
    ]
    if not parts and not message.meta:
        return None
    return dataclasses.replace(message, parts=parts)


def _exclude(messages: list[Message], exclusions: _Exclusions) -> list[Message]:
    """``messages`` with the exclusions in force applied (never changed in place)."""
    if exclusions == _NONE:
        return messages
    out: list[Message] = []
    for message in messages:
        if exclusions.system and message.role == Role.SYSTEM:
            continue
        kept: Message | None = message
        if exclusions.reasoning:
            kept = _without_reasoning(message)
        if kept is not None:
            out.append(kept)
    return out


# --- the reads ------------------------------------------------------------------------


class _Read(NamedTuple):
    """One store read the procedure needs: ``method(*args, **kwargs)``."""

    method: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]


def _load_run(run_id: str) -> _Read:
    return _Read("load_run", (run_id,), {})


_Procedure = Generator[_Read, Any, T]


def _drive(store: object, procedure: _Procedure[T]) -> T:
    try:
        read = next(procedure)
        while True:
            read = procedure.send(getattr(store, read.method)(*read.args, **read.kwargs))
    except StopIteration as done:
        return cast(T, done.value)
    finally:
        procedure.close()


async def _drive_async(store: object, procedure: _Procedure[T]) -> T:
    try:
        read = next(procedure)
        while True:
            answer: Awaitable[Any] = getattr(store, read.method)(*read.args, **read.kwargs)
            read = procedure.send(await answer)
    except StopIteration as done:
        return cast(T, done.value)
    finally:
        procedure.close()


# --- one run: its seed, then its transcript ---------------------------------------------


class _Seed:
    """The published seed of one run, read page by page with every check of 15.6."""

    def __init__(self, meta: RunMeta, seed: RunSeed) -> None:
        self.run_id = meta.run_id
        self.seed = seed
        if (
            seed.end_id != meta.seed_end_id
            or seed.declaration.run_id != meta.run_id
            or seed.declaration.agent_id != meta.agent_id
            or seed.declaration.session_id != meta.session_id
        ):
            raise RunLogPageError(
                f"load_run_seed answered the seed of run {seed.declaration.run_id!r} (agent "
                f"{seed.declaration.agent_id!r}, session {seed.declaration.session_id!r}) "
                f"ending at {seed.end_id!r}, not the run's (agent {meta.agent_id!r}, session "
                f"{meta.session_id!r}, seed_end_id {meta.seed_end_id!r})",
                run_id=meta.run_id,
            )
        self.records: list[SeedRecord] = []
        self.index = 0
        #: The ``after`` of the page in hand, and that of the next page.
        self.after = ""
        self.cursor = ""
        self.more = True
        self.previous = "0"
        self.seen: set[str] = set()
        #: The data of the open literal and the ID of its first part, if one is open.
        self.literal: bytearray | None = None
        self.literal_from = ""
        self.prefix_seen = False

    def _broken(self, what: str) -> RunLogPageError:
        return RunLogPageError(
            f"list_run_seed_records for run {self.run_id!r} (after {self.after!r}): {what}",
            run_id=self.run_id,
        )

    def _take(self, page: SeedPage) -> None:
        next_cursor = page.next_cursor
        if next_cursor:
            if not page.records:
                raise self._broken(f"empty page with next_cursor {next_cursor!r}")
            if next_cursor == self.after:
                raise self._broken("next_cursor repeats the cursor it was read with")
            if next_cursor != page.records[-1].id:
                raise self._broken(
                    f"next_cursor {next_cursor!r} is not the last record's ID "
                    f"{page.records[-1].id!r}"
                )
        self.records, self.index = page.records, 0
        self.cursor, self.more = next_cursor, bool(next_cursor)

    def _check(self, record: SeedRecord) -> None:
        if not record.id:
            raise self._broken(f"record {record.key!r} has no ID")
        if record.id in self.seen:
            raise self._broken(f"record ID {record.id} repeats")
        if record.previous_id != self.previous:
            raise self._broken(
                f"record {record.id} follows {record.previous_id!r}, not {self.previous!r}: "
                "the records are not one contiguous chain"
            )
        variants = [
            name
            for name, value in (
                ("messages", record.messages),
                ("literal_part", record.literal_part),
                ("prefix", record.prefix),
                ("prepared", record.prepared),
            )
            if value is not None
        ]
        if variants not in (["messages"], ["literal_part"], ["prefix"]):
            raise self._broken(
                f"record {record.id} holds {', '.join(variants) or 'no variant'}, not exactly "
                "one of messages, literal_part and prefix"
            )
        if self.literal is not None and record.literal_part is None:
            raise self._broken(
                f"record {record.id} ({variants[0]}) comes inside the literal that began at "
                f"record {self.literal_from}"
            )
        self.seen.add(record.id)
        self.previous = record.id

    def _finish(self) -> None:
        if self.previous != self.seed.end_id:
            raise self._broken(
                f"the records end at {self.previous!r}, not at the seed's history end "
                f"{self.seed.end_id!r}"
            )
        if self.literal is not None:
            raise self._broken(
                f"the history ends inside the literal that began at record {self.literal_from}"
            )
        if self.seed.source is not None and not self.prefix_seen:
            raise self._broken("the seed has a source but no prefix record")

    def next(self) -> _Procedure[SeedRecord | None]:
        """The next record, checked; ``None`` once the seed is read to its end."""
        while self.index == len(self.records):
            if not self.more:
                self._finish()
                return None
            self.after = self.cursor
            page: SeedPage = yield _Read(
                "list_run_seed_records",
                (self.run_id,),
                {"seed_end_id": self.seed.end_id, "after": self.after, "limit": SEED_PAGE_SIZE},
            )
            self._take(page)
        record = self.records[self.index]
        self.index += 1
        self._check(record)
        return record

    def prefix(self, record: SeedRecord, prefix: HistoryPrefix) -> None:
        """Accept the seed's one ``prefix``: exactly its source."""
        if self.prefix_seen:
            raise self._broken(f"record {record.id} is a second prefix")
        if self.seed.source is None:
            raise self._broken(f"record {record.id} is a prefix, but the seed has no source")
        if prefix != self.seed.source:
            raise self._broken(
                f"record {record.id} is the prefix {prefix}, not the seed's source "
                f"{self.seed.source}"
            )
        self.prefix_seen = True

    def _invalid(self, exc: InvalidTranscriptError, what: str) -> InvalidTranscriptError:
        return InvalidTranscriptError(
            f"{what} of the seed of run {self.run_id!r}: {exc.message}",
            run_id=self.run_id,
            violations=exc.violations,
        )

    def messages(self, record: SeedRecord) -> list[Message]:
        """The messages a ``messages`` or ``literal_part`` record completes (``[]`` for a
        part that does not end its literal)."""
        if record.messages is not None:
            try:
                return decode_messages(record.messages)
            except InvalidTranscriptError as exc:
                raise self._invalid(exc, f"messages record {record.id} ({record.key!r})") from exc
        part = record.literal_part
        assert part is not None  # _check: exactly one history variant
        if self.literal is None:
            self.literal, self.literal_from = bytearray(), record.id
        self.literal += part.data
        if not part.final:
            return []
        data, self.literal = bytes(self.literal), None
        what = f"literal of records {self.literal_from}-{record.id}"
        try:
            messages = decode_messages(data)
            if not messages:
                fail(-1, TranscriptRule.EMPTY_LITERAL, "$", "a literal holds at least one message")
        except InvalidTranscriptError as exc:
            raise self._invalid(exc, what) from exc
        return messages


class _Run:
    """One run on the stack: its seed first, then its own transcript records."""

    def __init__(self, meta: RunMeta, through: str | None, exclusions: _Exclusions) -> None:
        self.meta = meta
        self.run_id = meta.run_id
        #: ``None``: the run's records to its last one, with ``list_run_records`` (10.3).
        self.through = through
        self.exclusions = exclusions
        self.pager = (
            _Pager(meta.run_id)
            if through is None
            else _Pager(meta.run_id, "list_run_transcript_records", "after")
        )
        self.pending: Page | None = None
        self.more = True
        self.seed: _Seed | None = None

    def read(self) -> _Read:
        if self.through is None:
            return _Read(
                "list_run_records",
                (self.run_id,),
                {"cursor": self.pager.cursor, "limit": REPLAY_PAGE_SIZE},
            )
        return _Read(
            "list_run_transcript_records",
            (self.run_id,),
            {"through": self.through, "after": self.pager.cursor, "limit": REPLAY_PAGE_SIZE},
        )

    def take(self, page: Page) -> None:
        self.more = self.pager.check(page)
        self.pending = page

    def next_messages(self) -> _Procedure[list[Message] | None]:
        """The messages of the next page of the run's own records; ``None`` after the last."""
        if self.pending is None:
            if not self.more:
                return None
            self.take((yield self.read()))
        page, self.pending = self.pending, None
        assert page is not None
        return _exclude(self.pager.replay(page), self.exclusions)


def _open(
    run_id: str,
    through: str | None,
    exclusions: _Exclusions,
    root: RunMeta | None,
) -> _Procedure[_Run]:
    """Steps 1 and the start of 2 for one run: its meta, its first transcript page, its seed."""
    meta: RunMeta = yield _load_run(run_id)
    if meta.run_id != run_id:
        raise RunLogPageError(f"load_run({run_id!r}) answered run {meta.run_id!r}", run_id=run_id)
    if root is not None and (
        not root.session_id or meta.session_id != root.session_id or meta.agent_id != root.agent_id
    ):
        raise RunLogPageError(
            f"the seed history of run {root.run_id!r} (agent {root.agent_id!r}, session "
            f"{root.session_id!r}) refers to run {run_id!r} of agent {meta.agent_id!r} and "
            f"session {meta.session_id!r}: a source must be a run of the same session and agent",
            run_id=root.run_id,
        )
    run = _Run(meta, through, exclusions)
    if through is not None:
        run.take((yield run.read()))
    if meta.seed_end_id:
        seed: RunSeed = yield _Read("load_run_seed", (run_id,), {"seed_end_id": meta.seed_end_id})
        run.seed = _Seed(meta, seed)
    return run


@dataclasses.dataclass
class _History:
    #: ``None`` only for the replay of a store that cannot load runs.
    run: RunMeta | None
    seed: RunSeed | None
    messages: list[Message]
    #: Whether the run's own records held a transcript record (10.3).
    found: bool


def _replay(run_id: str) -> _Procedure[_History]:
    """10.3 for a store that only lists records: no ``load_run``, no seed."""
    pager = _Pager(run_id)
    messages: list[Message] = []
    while True:
        page: Page = yield _Read(
            "list_run_records", (run_id,), {"cursor": pager.cursor, "limit": REPLAY_PAGE_SIZE}
        )
        more = pager.check(page)
        messages += pager.replay(page)
        if not more:
            return _History(None, None, messages, pager.found)


class _Stack:
    """The runs being read, innermost last: the root, then each ``prefix``'s source."""

    def __init__(self, root: _Run) -> None:
        self.root = root
        self.runs = [root]
        self.messages: list[Message] = []

    def _enter(self, run: _Run, record: SeedRecord, prefix: HistoryPrefix) -> _Procedure[None]:
        assert run.seed is not None
        run.seed.prefix(record, prefix)
        if any(on_path.run_id == prefix.run_id for on_path in self.runs):
            raise RunLogPageError(
                f"the seed history of run {self.root.run_id!r} meets run {prefix.run_id!r} "
                f"twice on one path (record {record.id} of the seed of run {run.run_id!r}): "
                "a cycle",
                run_id=self.root.run_id,
            )
        inner = run.exclusions.around(prefix)
        self.runs.append((yield from _open(prefix.run_id, prefix.end_id, inner, self.root.meta)))

    def step(self) -> _Procedure[bool]:
        """Read on: the next seed record of the innermost run or its next transcript page.
        Whether the root's seed just ended."""
        run = self.runs[-1]
        if run.seed is None:
            page = yield from run.next_messages()
            if page is None:
                self.runs.pop()
            else:
                self.messages += page
            return False
        record = yield from run.seed.next()
        if record is None:
            run.seed = None
            return run is self.root
        if record.prefix is not None:
            yield from self._enter(run, record, record.prefix)
        else:
            self.messages += _exclude(run.seed.messages(record), run.exclusions)
        return False


def _compose(run_id: str, through: str | None, *, seed_only: bool = False) -> _Procedure[_History]:
    """The history of ``run_id`` through ``through`` (``None``: its last record, read with
    ``list_run_records``), or with ``seed_only`` what its seed gives."""
    if not run_id:
        raise InvalidArgumentError("run_id is required")
    root = yield from _open(run_id, through, _NONE, None)
    if through is None and root.seed is None:
        # No seed: exactly the replay of 10.3 (no second load_run).
        messages: list[Message] = []
        while not seed_only and (page := (yield from root.next_messages())) is not None:
            messages += page
        return _History(root.meta, None, messages, root.pager.found)
    seed = root.seed.seed if root.seed is not None else None
    stack = _Stack(root)
    while stack.runs:
        if (yield from stack.step()) and seed_only:
            break
    final: RunMeta = yield _load_run(run_id)
    return _History(final, seed, stack.messages, root.pager.found)


def _messages(history: _History, run_id: str) -> list[Message]:
    """10.3's answer: the history, unless neither the seed nor the run gave a message."""
    if not history.found and not history.messages:
        raise _Pager(run_id).no_transcript()
    return history.messages


def _seed_history(history: _History) -> SeedHistory:
    assert history.run is not None  # _compose always loads the run
    return SeedHistory(run=history.run, seed=history.seed, messages=history.messages)


# --- the public helpers -----------------------------------------------------------------


def build_messages_from_run_log_prefix(
    store: RunHistoryReader, run_id: str, through: str
) -> list[Message]:
    """The history of ``run_id`` through its record ``through`` (15.6): its seed's
    history, then its own transcript records up to and including ``through``."""
    return _drive(store, _compose(run_id, through)).messages


async def build_messages_from_run_log_prefix_async(
    store: AsyncRunHistoryReader, run_id: str, through: str
) -> list[Message]:
    """:func:`build_messages_from_run_log_prefix` for an
    :class:`~runtime_store_client.AsyncStore`."""
    return (await _drive_async(store, _compose(run_id, through))).messages


def build_messages_from_run_log(store: RunRecordLister, run_id: str) -> list[Message]:
    """The transcript of ``run_id`` (10.3): every page of its records, checked, then
    replayed; a run with no transcript record is :class:`NoTranscriptError`.

    For a store that can read seeds (:class:`RunHistoryReader`) a seeded run's history
    starts with its seed's (15.6), and the error applies only when neither the seed nor
    the run gave a transcript message. A run without a seed is replayed exactly as before,
    after one ``load_run``.
    """
    if isinstance(store, RunHistoryReader):
        return _messages(_drive(store, _compose(run_id, None)), run_id)
    return _messages(_drive(store, _replay(run_id)), run_id)


async def build_messages_from_run_log_async(
    store: AsyncRunRecordLister, run_id: str
) -> list[Message]:
    """:func:`build_messages_from_run_log` for an :class:`~runtime_store_client.AsyncStore`."""
    if isinstance(store, AsyncRunHistoryReader):
        return _messages(await _drive_async(store, _compose(run_id, None)), run_id)
    return _messages(await _drive_async(store, _replay(run_id)), run_id)


def build_seed_history(store: RunHistoryReader, run_id: str) -> SeedHistory:
    """What ``run_id`` inherits from its seed (15.6 step 2), with the seed: one
    ``load_run`` for a run without one."""
    return _seed_history(_drive(store, _compose(run_id, None, seed_only=True)))


async def build_seed_history_async(store: AsyncRunHistoryReader, run_id: str) -> SeedHistory:
    """:func:`build_seed_history` for an :class:`~runtime_store_client.AsyncStore`."""
    return _seed_history(await _drive_async(store, _compose(run_id, None, seed_only=True)))
