"""What the framework adapters (``langgraph``, ``openai_agents``) share, framework-free.

A framework's unit of state (a LangGraph thread, an OpenAI Agents session) is a *log*: one
runtime-store session holding one long-lived root run whose records are the log's entries
(docs/frameworks.md). A log is read by catching up: the records after the last one seen
(``list_run_records`` from that record's ID) are applied to an in-process view, so a read
costs one request when nothing changed and every reader sees every committed write, from
any process.

A log that is deleted (or compacted) is *retired*: a marker record names what to keep,
the session is ended, the run completed, the kept records are copied into the next
*generation* (a new session, ``…/1/…``, ``…/2/…``) and the old session is purged. Every
step is idempotent, so whoever finds a retiring generation finishes it; a writer whose
append answered ``session_status = ended`` (it landed in a retiring generation) writes it
again in the next one.

The adapters' logic is written once, as generators of ``Call`` steps (sans I/O);
``drive`` runs them on ``HttpStore`` and ``adrive`` on ``AsyncHttpStore``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

from .errors import (
    EventConflictError,
    RecordNotFoundError,
    RunNotActiveError,
    RunNotFoundError,
    SessionEndedError,
    SessionNotFoundError,
    SessionPurgedError,
)
from .types import AppendResult, Page, Record, RunStart, RunStartOutcome, RunStatus, SessionStatus

T = TypeVar("T")
V = TypeVar("V", bound="LogView")

#: The longest identifier the service accepts by default (``RUNTIME_STORE_MAX_ID_BYTES``).
MAX_ID_BYTES = 256
#: Records per catch-up page (the service's maximum page).
PAGE_LIMIT = 1000
#: At most this many records, and this many payload bytes, per batch append.
BATCH_RECORDS = 1000
BATCH_BYTES = 6 * 1024 * 1024

RETIRE_TYPE = "runtime_store.retire"
RETIRE_KEY = "retire"
STARTED_KEY = "run_started"
CANCELED_KEY = "run_canceled_at_start"
COMPLETED_KEY = "run_completed"


@dataclass(frozen=True)
class Call:
    """One store operation a step needs: the method's name and its arguments."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


Steps = Generator[Call, Any, T]


def drive(store: Any, steps: Steps[T]) -> T:
    """Run ``steps`` on a synchronous store; a store error goes back into the steps."""
    try:
        call = next(steps)
        while True:
            try:
                answer = getattr(store, call.name)(*call.args, **call.kwargs)
            except Exception as exc:  # the steps decide; what they do not catch propagates
                call = steps.throw(exc)
            else:
                call = steps.send(answer)
    except StopIteration as stop:
        result: T = stop.value
        return result


async def adrive(store: Any, steps: Steps[T]) -> T:
    """``drive`` on an asynchronous store."""
    try:
        call = next(steps)
        while True:
            try:
                answer = await getattr(store, call.name)(*call.args, **call.kwargs)
            except Exception as exc:
                call = steps.throw(exc)
            else:
                call = steps.send(answer)
    except StopIteration as stop:
        result: T = stop.value
        return result


# --- values --------------------------------------------------------------------------------


def now_ms() -> datetime:
    """The current UTC time, cut to the millisecond the store keeps."""
    return to_ms(datetime.now(UTC))


def to_ms(value: datetime) -> datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def json_bytes(value: Any) -> bytes:
    """Canonical JSON text (ASCII, so any string, a lone surrogate too, is valid UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()


def bounded_id(text: str) -> str:
    """``text`` when the store takes it as an identifier, else a digest of it (``#…``)."""
    if len(text.encode("utf-8", "surrogatepass")) <= MAX_ID_BYTES and "\x00" not in text:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return text
    return "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def event_key(*parts: object) -> str:
    """An event key naming ``parts`` unambiguously: their JSON array, or its digest."""
    return bounded_id(json.dumps(parts, separators=(",", ":"), ensure_ascii=False))


@dataclass(frozen=True)
class Entry:
    """A record to append, before it is placed in a generation."""

    event_key: str
    type: str
    payload: bytes
    timestamp: datetime


# --- a log and its generations ---------------------------------------------------------------


class LogView:
    """What a log's records mean; each adapter subclasses it."""

    def apply(self, record: Record) -> None:
        raise NotImplementedError

    @staticmethod
    def keep(records: Sequence[Record], mode: str) -> list[Record]:
        """The records of a retiring generation that its successor keeps."""
        del records
        if mode == "none":
            return []
        raise ValueError(f"unknown retirement mode {mode!r}")


class Generation(Generic[V]):
    """One generation of a log: its session and run, and the view read from it so far."""

    def __init__(self, number: int, session_id: str, view: V) -> None:
        self.number = number
        self.session_id = session_id
        self.run_id = session_id
        self.view = view
        self.last_id = 0
        self.retiring = ""  # the retirement mode, once its marker was read
        self.started = False  # its session and run exist (as far as this process knows)
        self._lock = threading.Lock()

    def apply(self, records: Sequence[Record]) -> None:
        """Apply the records after ``last_id``, once each, in order (thread-safe: two
        catch-ups that overlap apply each record once)."""
        with self._lock:
            for record in records:
                number = int(record.id)
                if number <= self.last_id:
                    continue
                if record.type == RETIRE_TYPE:
                    self.retiring = self.retiring or json.loads(record.payload)["keep"]
                else:
                    self.view.apply(record)
                self.last_id = number


class Log(Generic[V]):
    """A framework's unit of state on runtime-store (module docstring)."""

    def __init__(self, space: LogSpace[V], name: str) -> None:
        self.space = space
        self.name = name
        self.gen: Generation[V] = space.generation(name, 0)
        self.located = False

    # -- where the log lives -----------------------------------------------------------------

    def _advance(self, past: Generation[V]) -> None:
        if self.gen is past:
            self.gen = self.space.generation(self.name, past.number + 1)

    def locate(self) -> Steps[Generation[V]]:
        """The current generation: the first that is neither purged nor ended (an ended
        one is retiring: it is finished first)."""
        while not self.located:
            gen = self.gen
            try:
                status = yield Call("load_session_status", (gen.session_id,))
            except SessionNotFoundError:
                self.located = True
            except SessionPurgedError:
                self._advance(gen)
            else:
                if status == SessionStatus.ACTIVE:
                    self.located = True
                    gen.started = True  # most likely; an append answers if not
                else:
                    yield from self.finish_retirement(gen)
                    self._advance(gen)
        return self.gen

    def relocate(self, past: Generation[V]) -> Steps[Generation[V]]:
        """After ``past`` answered that it is retiring or gone: finish it, move on."""
        yield from self.finish_retirement(past)
        self._advance(past)
        self.located = False
        return (yield from self.locate())

    def start(self, gen: Generation[V]) -> Steps[bool]:
        """Create the generation's session and run (idempotent); False when it is retiring."""
        session = yield Call("create_session", (gen.session_id, now_ms()))
        labels = {"framework": self.space.framework}
        at = session.created_at  # fixed by the first create: every racer sends the same start
        run = RunStart(
            run_id=gen.run_id,
            agent_id=self.space.agent_id,
            session_id=gen.session_id,
            started_at=at,
            labels=labels,
        )
        started = self._lifecycle(
            gen,
            STARTED_KEY,
            "run_started",
            {"ParentRunID": "", "PredecessorRunID": "", "Labels": labels},
            at,
        )
        canceled = self._lifecycle(
            gen,
            CANCELED_KEY,
            "run_completed",
            {
                "status": "canceled",
                "phase": "canceled",
                "cancellation": {"reason": "session_ended"},
                "labels": labels,
            },
            at,
        )
        result = yield Call("start_root_run", (run, started, canceled))
        gen.started = True
        return bool(result.outcome == RunStartOutcome.PROCEED)

    def _lifecycle(
        self, gen: Generation[V], key: str, type_: str, payload: object, at: datetime
    ) -> Record:
        return Record(
            event_key=key,
            run_id=gen.run_id,
            agent_id=self.space.agent_id,
            session_id=gen.session_id,
            type=type_,
            payload=json_bytes(payload),
            timestamp=at,
        )

    def _record(self, gen: Generation[V], entry: Entry) -> Record:
        return Record(
            event_key=entry.event_key,
            run_id=gen.run_id,
            agent_id=self.space.agent_id,
            session_id=gen.session_id,
            type=entry.type,
            payload=entry.payload,
            timestamp=entry.timestamp,
        )

    # -- reading ------------------------------------------------------------------------------

    def catch_up(self) -> Steps[Generation[V]]:
        """Apply every record committed since the last read; the generation read."""
        gen = yield from self.locate()
        while True:
            try:
                page: Page = yield Call(
                    "list_run_records",
                    (gen.run_id,),
                    {"cursor": str(gen.last_id) if gen.last_id else "", "limit": PAGE_LIMIT},
                )
            except RunNotFoundError:
                return gen  # not started yet: empty
            except SessionPurgedError:
                gen = yield from self.relocate(gen)
                continue
            gen.apply(page.records)
            if gen.retiring:
                gen = yield from self.relocate(gen)
                continue
            if not page.next_cursor:
                return gen

    # -- writing ------------------------------------------------------------------------------

    def append(
        self, entries: Sequence[Entry], *, conflicts: Literal["keep_first", "raise"] = "keep_first"
    ) -> Steps[list[AppendResult]]:
        """Append ``entries`` to the current generation, in order, in as few batches as
        their size allows. An entry whose key holds other content keeps the first
        (``keep_first``: it is dropped from the batch) or raises ``EventConflictError``."""
        pending = list(entries)
        results: list[AppendResult] = []
        while pending:
            batch = _first_batch(pending)
            answer = yield from self._append_batch(batch, conflicts)
            results.extend(answer)
            del pending[: len(batch)]
        return results

    def _append_batch(
        self, batch: list[Entry], conflicts: Literal["keep_first", "raise"]
    ) -> Steps[list[AppendResult]]:
        gen = yield from self.locate()
        while True:
            if not batch:
                return []
            gen = yield from self._started(gen)
            records = [self._record(gen, entry) for entry in batch]
            try:
                results: list[AppendResult] = yield Call(
                    "append_run_records", (gen.run_id, records)
                )
            except RunNotFoundError:
                gen.started = False
                continue
            except (SessionPurgedError, RunNotActiveError):
                gen = yield from self.relocate(gen)
                continue
            except EventConflictError as exc:
                if conflicts == "raise":
                    raise
                batch = [entry for entry in batch if entry.event_key != exc.event_key]
                continue
            if results and results[0].session_status == SessionStatus.ENDED:
                gen = yield from self.relocate(gen)  # landed in a retiring generation
                continue
            return results

    def _started(self, gen: Generation[V]) -> Steps[Generation[V]]:
        """``gen`` started, or the generation after it when it is retiring."""
        while not gen.started:
            try:
                proceed = yield from self.start(gen)
            except (SessionEndedError, SessionPurgedError):
                proceed = False
            if not proceed:
                gen = yield from self.relocate(gen)
        return gen

    # -- retiring -------------------------------------------------------------------------------

    def retire(self, mode: str) -> Steps[None]:
        """Delete the log (``none``) or compact it (a mode ``LogView.keep`` knows): the next
        generation keeps what ``mode`` selects; the current one is purged."""
        gen = yield from self.locate()
        marker = Entry(RETIRE_KEY, RETIRE_TYPE, json_bytes({"keep": mode}), now_ms())
        try:
            yield Call("append_run_record", (self._record(gen, marker),))
        except RunNotFoundError:
            return  # nothing was ever stored in this generation
        except (EventConflictError, RunNotActiveError, SessionPurgedError):
            pass  # already retiring (the first marker's mode wins) or gone
        yield from self.finish_retirement(gen)
        self._advance(gen)
        self.located = False

    def finish_retirement(self, gen: Generation[V]) -> Steps[None]:
        """End, complete, copy what is kept, purge: each step idempotent, so anyone who
        finds the generation retiring finishes it."""
        try:
            marker: Record = yield Call("load_run_record", (gen.run_id, RETIRE_KEY))
        except SessionPurgedError:
            return
        except (RunNotFoundError, SessionNotFoundError):
            return
        except RecordNotFoundError as exc:  # ended without a marker
            raise SessionEndedError(
                f"session {gen.session_id!r} was ended outside the adapter: "
                "the log refuses to guess whether to keep it"
            ) from exc
        mode = json.loads(marker.payload)["keep"]
        try:
            session = yield Call("end_session", (gen.session_id, now_ms()))
        except SessionPurgedError:
            return
        completed = self._lifecycle(
            gen,
            COMPLETED_KEY,
            "run_completed",
            {
                "status": "success",
                "phase": "completed",
                "labels": {"framework": self.space.framework},
            },
            to_ms(session.ended_at or now_ms()),
        )
        try:
            yield Call("record_run_terminal", (gen.run_id, RunStatus.COMPLETED, completed))
        except SessionPurgedError:
            return
        if mode != "none":
            records = yield from self.read_all(gen)
            if records is None:
                return
            kept = self.space.view_type.keep(records, mode)
            successor = self.space.generation(self.name, gen.number + 1)
            yield from self._copy(successor, kept)
        with contextlib.suppress(SessionPurgedError):
            yield Call("purge_session", (gen.session_id,))

    def read_all(self, gen: Generation[V]) -> Steps[list[Record] | None]:
        records: list[Record] = []
        cursor = ""
        while True:
            try:
                page: Page = yield Call(
                    "list_run_records", (gen.run_id,), {"cursor": cursor, "limit": PAGE_LIMIT}
                )
            except SessionPurgedError:
                return None
            records.extend(page.records)
            if not page.next_cursor:
                return records
            cursor = page.next_cursor

    def _copy(self, target: Generation[V], records: Sequence[Record]) -> Steps[None]:
        """Append ``records`` (keys, types, payloads and times kept) to ``target``."""
        entries = [Entry(r.event_key, r.type, r.payload, r.timestamp) for r in records]
        log: Log[V] = Log(self.space, self.name)
        log.gen = target
        log.located = True
        yield from log.append(entries)


def _first_batch(entries: list[Entry]) -> list[Entry]:
    size = 0
    for count, entry in enumerate(entries):
        size += len(entry.payload) + 512
        if count and (count >= BATCH_RECORDS or size > BATCH_BYTES):
            return entries[:count]
    return entries[:]


class LogSpace(Generic[V]):
    """The logs of one adapter: how they are named, and a bounded cache of them."""

    def __init__(
        self,
        *,
        framework: str,
        prefix: str,
        agent_id: str,
        view_type: type[V],
        max_cached: int,
    ) -> None:
        self.framework = framework
        self.prefix = prefix
        self.agent_id = agent_id
        self.view_type = view_type
        self.max_cached = max_cached
        self._logs: OrderedDict[str, Log[V]] = OrderedDict()
        self._lock = threading.Lock()

    def session_id(self, name: str, number: int) -> str:
        return bounded_id(f"{self.prefix}{number}/{name}")

    def generation(self, name: str, number: int) -> Generation[V]:
        return Generation(number, self.session_id(name, number), self.view_type())

    def log(self, name: str) -> Log[V]:
        with self._lock:
            log = self._logs.get(name)
            if log is None:
                log = self._logs[name] = Log(self, name)
                while len(self._logs) > self.max_cached:
                    self._logs.popitem(last=False)
            else:
                self._logs.move_to_end(name)
            return log

    def forget(self, name: str) -> None:
        with self._lock:
            self._logs.pop(name, None)
