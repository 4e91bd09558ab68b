"""The replay of a session file, line by line, through the rules the writes apply
(``importer`` says how)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from app.domain import validation as v
from app.domain.state import SessionRowStatus, SessionState
from app.storage.database import statements as st
from app.storage.database.row_mapping import session_of
from app.storage.database.tables import (
    memory_batches,
    memory_events,
    run_records,
    seed_attempts,
    seed_records,
)
from app.storage.memory.events import memory_row
from app.storage.operation import Context
from app.storage.transfer.conflicts import session_conflict
from app.storage.transfer.format import (
    COUNT_KEYS,
    COUNT_KEYS_2,
    FORMAT,
    FORMAT_1,
    FORMAT_2,
    KINDS,
    MEMORY_BATCH_KEYS,
    MEMORY_EVENT_KEYS,
    RUN_KEYS,
    RUN_KEYS_1,
    RUN_KEYS_2,
    SEED_KINDS,
    SESSION_KEYS,
    phase_of,
)
from app.storage.transfer.lines import _check_final, _Rows, _Run
from app.storage.transfer.reading import (
    _DIGEST,
    _bad,
    _enum,
    _located,
    _millis,
    _object,
    _parse,
    _text,
    _time,
)
from app.storage.transfer.record_lines import RecordLines
from app.storage.transfer.run_lines import RunLines
from app.storage.transfer.seed_lines import SeedLines
from app.storage.transfer.sinks import _Sink
from runtime_store_client import (
    InvalidArgumentError,
    MemoryEvent,
    Session,
    SessionStatus,
    StoreError,
)

#: Each format the import reads: its version, its run line keys, its trailer's counts.
_FORMATS: Final = {
    FORMAT_1: (1, RUN_KEYS_1, COUNT_KEYS_2),
    FORMAT_2: (2, RUN_KEYS_2, COUNT_KEYS_2),
    FORMAT: (3, RUN_KEYS, COUNT_KEYS),
}
_SEED_PHASE: Final = phase_of(SEED_KINDS[0])


class _Import(RunLines, SeedLines, RecordLines):
    """One import: the lines in order, then the checks and writes of the trailer."""

    def __init__(self, ctx: Context, sink: _Sink) -> None:
        self.sink = sink
        self.limits = ctx.limits
        self.session: SessionState | None = None
        self.runs: dict[str, _Run] = {}
        self.unchecked: list[_Run] = []
        self.records = _Rows(run_records, "record", "payload")
        self.events = _Rows(memory_events, "memory event", "data")
        self.batches = _Rows(memory_batches, "memory batch", "digest")
        self.counts = dict.fromkeys(COUNT_KEYS, 0)
        self.phase = -1
        #: The keys of a run line and of the trailer, by the header's format.
        self.version, self.run_keys, self.count_keys = _FORMATS[FORMAT]
        self.seed_ops = {}
        self.current_op = None
        self.current_attempt = None
        self.seed_attempt_rows = _Rows(seed_attempts, "seed attempt", "declaration")
        self.seed_record_rows = _Rows(seed_records, "seed record", "data")
        self.seed_sources = []
        self.unchecked_seeds = []
        self.last_line = 0
        self.ended = False

    def read(self, lines: Iterator[tuple[int, bytes]]) -> Session:
        for number, raw in lines:
            self.last_line = number
            value = _parse(number, raw)
            try:
                self.line(number, value)
            except StoreError as exc:
                located = _located(number, exc)
                if located is exc:
                    raise
                raise located from None
        if self.session is None:
            raise _bad(1, "the file is empty: the header is missing")
        if not self.ended:
            raise _bad(
                self.last_line + 1,
                f"the file ends after line {self.last_line} without its end line: it is cut short",
            )
        self.sink.publish(self.session.session_id, self.session.record_count)
        return session_of(self.session)

    def line(self, number: int, value: Any) -> None:
        if self.ended:
            raise InvalidArgumentError("a line after the end line")
        if self.session is None:
            self.header(value)
            return
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in KINDS:
            raise InvalidArgumentError(f"a line is one object with one key of {list(KINDS)}")
        ((kind, body),) = value.items()
        phase = phase_of(kind)
        if phase < self.phase:
            raise InvalidArgumentError(
                f"a {kind} line after the {KINDS[self.phase]} lines (order: {list(KINDS)})"
            )
        if phase > self.phase and self.phase == 0:
            self.check_free_ids()  # every run line read: conflicts before any record
        if phase > self.phase and self.phase == _SEED_PHASE:
            self.close_seeds()  # every seed line read: conflicts before any record
        self.phase = phase
        _HANDLERS[kind](self, number, body)

    def header(self, value: Any) -> None:
        obj = _object(value, ("format", "session"), "the header")
        known = obj["format"] in _FORMATS if isinstance(obj["format"], str) else False
        if not known:
            raise InvalidArgumentError(
                f"format {obj['format']!r} is not {FORMAT!r} (or {FORMAT_2!r}, {FORMAT_1!r})"
            )
        self.version, self.run_keys, self.count_keys = _FORMATS[obj["format"]]
        s = _object(obj["session"], SESSION_KEYS, "session")
        session_id = v.require_id(s["id"], "session.id")
        self.limits.check_id(session_id, "session.id")
        status = _enum(SessionStatus, s["status"], "session.status")
        created = _millis(s["created_at"], "session.created_at")
        ended = None
        if status is SessionStatus.ENDED:
            ended = _millis(s["ended_at"], "session.ended_at")
        elif s["ended_at"] is not None:
            raise InvalidArgumentError("session.ended_at must be null for an active session")
        existing = self.sink.read(st.SELECT_SESSION, {"session_id": session_id})
        if existing:
            raise session_conflict(session_id, existing[0].status)
        state = SessionState(session_id, SessionRowStatus(status.value), created, ended, None, 0)
        self.sink.claim_session(
            {
                "session_id": session_id,
                "status": status.value,
                "created_at_ms": created,
                "ended_at_ms": ended,
                "record_count": 0,
            }
        )
        self.session = state

    def owned(self, obj: dict[str, Any], what: str) -> tuple[str, str]:
        agent_id = v.require_id(obj["agent_id"], f"{what}.agent_id")
        run_id = v.require_id(obj["run_id"], f"{what}.run_id")
        self.limits.check_id(agent_id, f"{what}.agent_id")
        if run_id not in self.runs:
            raise InvalidArgumentError(f"{what} of run {run_id!r}, which has no run line")
        return agent_id, run_id

    def memory_event(self, number: int, value: Any) -> None:
        obj = _object(value, MEMORY_EVENT_KEYS, "memory_event")
        agent_id, run_id = self.owned(obj, "memory_event")
        event = MemoryEvent(
            type=_text(obj, "type", "memory_event"),
            timestamp=_time(obj["timestamp"], "memory_event.timestamp"),
            data=obj["data"],
            labels=obj["labels"],
        )
        self.counts["memory_events"] += 1
        self.add(self.events, memory_row(agent_id, run_id, event, 0, self.limits), number)

    def memory_batch(self, number: int, value: Any) -> None:
        obj = _object(value, MEMORY_BATCH_KEYS, "memory_batch")
        agent_id, run_id = self.owned(obj, "memory_batch")
        key = v.require_id(obj["idempotency_key"], "memory_batch.idempotency_key")
        self.limits.check_id(key, "memory_batch.idempotency_key")
        digest = obj["digest"]
        if digest is not None and (not isinstance(digest, str) or not _DIGEST.fullmatch(digest)):
            raise InvalidArgumentError("memory_batch.digest must be 64 hex digits or null")
        row = {
            "agent_id": agent_id,
            "run_id": run_id,
            "idempotency_key": key,
            "appended_at_ms": _millis(obj["appended_at"], "memory_batch.appended_at"),
            "digest": digest,
        }
        self.counts["memory_batches"] += 1
        self.add(self.batches, row, number)

    def end(self, number: int, value: Any) -> None:
        self.close_seeds()
        obj = _object(value, self.count_keys, "end")
        for name in self.count_keys:
            stated = obj[name]
            if type(stated) is not int or stated != self.counts[name]:
                raise InvalidArgumentError(
                    f"the end line counts {stated!r} {name}; the file holds {self.counts[name]}"
                )
        self.check_free_ids()
        rows: _Rows
        for rows in (
            self.records,
            self.events,
            self.batches,
            self.seed_attempt_rows,
            self.seed_record_rows,
        ):
            self.flush(rows)
        for run in self.runs.values():
            try:
                _check_final(run)
            except StoreError as exc:
                raise _located(run.line, exc) from None
        self.check_seeds_final()
        self.insert_runs()
        self.insert_seed_operations()
        assert self.session is not None
        self.session.record_count = self.counts["records"]
        self.ended = True  # published once no line follows (``read``)
        del number


_HANDLERS: Final[dict[str, Callable[[_Import, int, Any], None]]] = {
    "run": _Import.run,
    "seed_operation": _Import.seed_operation,
    "seed_attempt": _Import.seed_attempt,
    "seed_record": _Import.seed_record,
    "record": _Import.record,
    "memory_event": _Import.memory_event,
    "memory_batch": _Import.memory_batch,
    "end": _Import.end,
}
