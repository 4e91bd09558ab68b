"""The replay of a session file, line by line, through the rules the writes apply
(``importer`` says how)."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import sqlalchemy as sa

from app.domain import payloads
from app.domain import validation as v
from app.domain.commands import check_terminal_against_run
from app.domain.state import RunState, SessionRowStatus, SessionState
from runtime_store_client import (
    Checkpoint,
    ImportConflictError,
    InvalidArgumentError,
    MemoryEvent,
    Record,
    RunStart,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    Session,
    SessionStatus,
    StoreError,
)

from .. import statements as st
from ..context import Context
from ..memory import memory_row
from ..rows import NEW_RECORD_FIELDS, RUN_COLUMNS, label_rows, session_of, values_of
from ..schema import (
    checkpoints,
    memory_batches,
    memory_events,
    run_labels,
    run_records,
    runs,
)
from .format import (
    COUNT_KEYS,
    FORMAT,
    FORMAT_1,
    KEY_COLUMNS,
    KINDS,
    MEMORY_BATCH_KEYS,
    MEMORY_EVENT_KEYS,
    RECORD_KEYS,
    RUN_KEYS,
    RUN_KEYS_1,
    SESSION_KEYS,
)
from .reading import (
    _DIGEST,
    _bad,
    _checkpoint,
    _enum,
    _located,
    _millis,
    _object,
    _parse,
    _payload,
    _request_digest,
    _text,
    _time,
)
from .sinks import _TAKEN, _session_conflict, _Sink

_record_values: Final = operator.attrgetter(*NEW_RECORD_FIELDS)


#: Rows per INSERT (and run IDs per existence check).
BATCH: Final = 1000


#: Payload bytes (records, memory data, checkpoints) after which a batch is written: on
#: SQLite each batch is one transaction holding the only writer, kept short.
BATCH_BYTES: Final = 4 * 1024 * 1024


@dataclass(slots=True)
class _Run:
    """A run line, and what the run's records have shown so far."""

    line: int
    state: RunState
    new: v.NewRun
    checkpoint: Checkpoint | None
    #: The status the records so far leave the run in; ``None`` before its run_started.
    status: RunStatus | None = None
    count: int = 0
    #: Remembered-key columns a record of the right kind has matched.
    matched: set[str] = field(default_factory=set)
    #: The continuation whose run_started named this run as its predecessor.
    continued_by: str = ""
    #: A child's link: tool name, tool call ID, child agent, parent agent (12.4).
    link: tuple[str, str, str, str] | None = None

    @property
    def run_id(self) -> str:
        return self.state.run_id

    def expect_key(self, column: str, key: str) -> None:
        remembered = getattr(self.state, column)
        if remembered != key:
            raise InvalidArgumentError(
                f"run {self.run_id!r} remembers {column} {remembered!r}, not this record's {key!r}",
                run_id=self.run_id,
                event_key=key,
            )
        self.matched.add(column)

    def require_running(self, what: str) -> None:
        if self.status is not RunStatus.RUNNING:
            state = "not started" if self.status is None else self.status.value
            raise InvalidArgumentError(
                f"{what} on run {self.run_id!r}, which is {state} at this point",
                run_id=self.run_id,
            )


@dataclass(slots=True)
class _Rows:
    """Rows waiting for their INSERT, with the line of each."""

    table: sa.Table
    what: str
    #: The column whose size counts towards ``BATCH_BYTES``.
    sized: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    size: int = 0


class _Import:
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
        #: The keys of a run line, by the header's format.
        self.run_keys: tuple[str, ...] = RUN_KEYS
        self.last_line = 0
        self.ended = False

    # --- the lines ----------------------------------------------------------------------

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
        phase = KINDS.index(kind)
        if phase < self.phase:
            raise InvalidArgumentError(
                f"a {kind} line after the {KINDS[self.phase]} lines (order: {list(KINDS)})"
            )
        if phase > self.phase and self.phase == 0:
            self.check_free_ids()  # every run line read: conflicts before any record
        self.phase = phase
        _HANDLERS[kind](self, number, body)

    def header(self, value: Any) -> None:
        obj = _object(value, ("format", "session"), "the header")
        if obj["format"] not in (FORMAT, FORMAT_1):
            raise InvalidArgumentError(
                f"format {obj['format']!r} is not {FORMAT!r} (or {FORMAT_1!r})"
            )
        self.run_keys = RUN_KEYS_1 if obj["format"] == FORMAT_1 else RUN_KEYS
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
            raise _session_conflict(session_id, existing[0].status)
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

    # --- runs ---------------------------------------------------------------------------

    def run(self, number: int, value: Any) -> None:
        assert self.session is not None
        obj = _object(value, self.run_keys, "run")
        start = RunStart(
            run_id=obj["run_id"],
            agent_id=obj["agent_id"],
            session_id=obj["session_id"],
            parent_run_id=obj["parent_run_id"],
            started_at=_time(obj["started_at"], "run.started_at"),
            labels=obj["labels"],
        )
        self.limits.check_run_start(start)
        new = v.check_run_start(
            start, sessionful=True, child=bool(start.parent_run_id), continuation_allowed=True
        )
        if new.session_id != self.session.session_id:
            raise InvalidArgumentError("run.session_id must be the header's session")
        if new.run_id in self.runs:
            raise InvalidArgumentError(
                f"run {new.run_id!r} is also on line {self.runs[new.run_id].line}"
            )
        keys = self.keys(obj["keys"], child=bool(new.parent_run_id))
        state = RunState(
            run_id=new.run_id,
            agent_id=new.agent_id,
            session_id=new.session_id,
            parent_run_id=new.parent_run_id,
            status=_enum(RunStatus, obj["status"], "run.status"),
            start_outcome=_enum(RunStartOutcome, obj["start_outcome"], "run.start_outcome"),
            started_at_ms=new.started_at_ms,
            updated_at_ms=_millis(obj["updated_at"], "run.updated_at"),
            labels=new.labels_json,
            cancellation_reason=self.identifier(obj, "cancellation_reason"),
            record_count=0,
            successor_run_id=self.identifier(obj, "successor_run_id"),
            request_digest=_request_digest(obj.get("request_digest")),
            start_kind=_enum(RunStartKind, obj.get("start_kind", "engine"), "run.start_kind"),
            is_new=True,
            **keys,
        )
        if state.start_kind is not RunStartKind.ENGINE:
            raise InvalidArgumentError("a session's run is engine-started (12.2)")
        self.check_stop(state)
        run = _Run(number, state, new, _checkpoint(obj["checkpoint"], self.limits))
        self.runs[new.run_id] = run
        self.counts["runs"] += 1
        self.unchecked.append(run)
        if len(self.unchecked) >= BATCH:
            self.check_free_ids()

    def identifier(self, obj: dict[str, Any], key: str) -> str:
        value = v.optional_text(obj[key], f"run.{key}")
        self.limits.check_id(value, f"run.{key}")
        return value

    def keys(self, value: Any, *, child: bool) -> dict[str, Any]:
        obj = _object(value, tuple(KEY_COLUMNS), "run.keys")
        keys: dict[str, Any] = {}
        for name, column in KEY_COLUMNS.items():
            key = v.optional_text(obj[name], f"run.keys.{name}")
            self.limits.check_id(key, f"run.keys.{name}")
            keys[column] = key or None
        if keys["start_key"] is None:
            raise InvalidArgumentError("run.keys.start is required")
        if child != (keys["parent_link_key"] is not None):
            raise InvalidArgumentError(
                "run.keys.parent_link is required for a child run and empty for a root run"
            )
        keys["start_key"] = str(keys["start_key"])
        return keys

    def check_stop(self, state: RunState) -> None:
        """A start stopped by an ended session (3.3 step 5) is canceled for that reason."""
        assert self.session is not None
        if state.start_outcome is not RunStartOutcome.STOP:
            return
        if self.session.status is not SessionRowStatus.ENDED:
            raise InvalidArgumentError("a stopped start needs an ended session")
        if state.status is not RunStatus.CANCELED or state.cancellation_reason != "session_ended":
            raise InvalidArgumentError(
                "a stopped start is canceled with cancellation_reason 'session_ended'"
            )

    def check_free_ids(self) -> None:
        """``import_conflict`` for a run ID that exists, was purged, or has memory."""
        ids = [run.run_id for run in self.unchecked]
        self.unchecked = []
        if not ids:
            return
        for table, reason in _TAKEN:
            taken = self.sink.read(
                sa.select(table.c.run_id).where(table.c.run_id.in_(ids)).limit(1), {}
            )
            if taken:
                raise ImportConflictError(
                    f"run {taken[0].run_id!r} {reason}", run_id=taken[0].run_id
                )

    # --- records ------------------------------------------------------------------------

    def record(self, number: int, value: Any) -> None:
        assert self.session is not None
        obj = _object(value, RECORD_KEYS, "record")
        record = Record(
            id=_text(obj, "id", "record"),
            event_key=obj["event_key"],
            run_id=obj["run_id"],
            agent_id=obj["agent_id"],
            session_id=obj["session_id"],
            turn_id=obj["turn_id"],
            type=obj["type"],
            payload=_payload(obj["payload"]),
            timestamp=_time(obj["timestamp"], "record.timestamp"),
        )
        self.limits.check_record(record)
        rec = v.check_record(record)
        run = self.runs.get(rec.run_id)
        if run is None:
            raise InvalidArgumentError(f"record of run {rec.run_id!r}, which has no run line")
        if (rec.agent_id, rec.session_id) != (run.state.agent_id, run.state.session_id):
            raise InvalidArgumentError(
                f"record must carry agent {run.state.agent_id!r} and session "
                f"{run.state.session_id!r} of run {run.run_id!r}",
                run_id=run.run_id,
                event_key=rec.event_key,
            )
        if record.id != str(run.count + 1):
            raise InvalidArgumentError(
                f"record ID {record.id!r} of run {run.run_id!r}: the next ID is {run.count + 1}"
            )
        if run.status is None and rec.type != payloads.RUN_STARTED:
            raise InvalidArgumentError(f"the first record of run {run.run_id!r} is not run_started")
        _STEPS.get(rec.type, _Import.ordinary)(self, run, record, rec)
        run.count += 1
        self.counts["records"] += 1
        # ``rows.record_row`` spelled for the hot loop: a session's records all carry it.
        row = dict(zip(NEW_RECORD_FIELDS, _record_values(rec), strict=True))
        row["seq"], row["session_seq"] = run.count, self.counts["records"]
        self.add(self.records, row, number)

    def ordinary(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        del record
        run.require_running(f"record {rec.event_key!r}")

    def started(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        if run.status is not None:
            raise InvalidArgumentError(f"a second run_started on run {run.run_id!r}")
        predecessor = payloads.decode_run_started(rec.payload).predecessor_run_id
        start = RunStart(
            run_id=run.run_id,
            agent_id=run.state.agent_id,
            session_id=run.state.session_id,
            parent_run_id=run.state.parent_run_id,
            predecessor_run_id=predecessor,
            started_at=record.timestamp,
            labels=run.new.labels,
        )
        new = v.check_run_start(
            start, sessionful=True, child=bool(start.parent_run_id), continuation_allowed=True
        )
        run.new = dataclasses.replace(run.new, predecessor_run_id=new.predecessor_run_id)
        v.check_started_record(record, run.new)
        run.expect_key("start_key", rec.event_key)
        if run.state.parent_run_id and "parent_link_key" not in run.matched:
            raise InvalidArgumentError(
                f"run {run.run_id!r} starts before its parent holds its child_run_linked"
            )
        if predecessor:
            self.continuation(run, predecessor)
        run.status = RunStatus.RUNNING

    def continuation(self, run: _Run, predecessor_id: str) -> None:
        """3.13: the predecessor is a suspended run of the session, alike, naming this run."""
        predecessor = self.runs.get(predecessor_id)
        if predecessor is None:
            raise InvalidArgumentError(
                f"run {run.run_id!r} continues run {predecessor_id!r}, which has no run line"
            )
        facts: list[tuple[str, object, object]] = [
            ("status", predecessor.status and predecessor.status.value, RunStatus.SUSPENDED.value),
            ("agent_id", predecessor.state.agent_id, run.state.agent_id),
            ("successor_run_id", predecessor.state.successor_run_id, run.run_id),
        ]
        if predecessor.state.parent_run_id and run.state.parent_run_id:
            # 12.4: a child may continue under another parent with the predecessor's link.
            facts.append(("link", predecessor.link, run.link))
        else:
            facts.append(
                ("parent_run_id", predecessor.state.parent_run_id, run.state.parent_run_id)
            )
        for name, actual, expected in facts:
            if actual != expected:
                raise InvalidArgumentError(
                    f"predecessor {predecessor_id!r} of run {run.run_id!r} has {name} "
                    f"{actual!r} at this point, the continuation needs {expected!r}"
                )
        if predecessor.continued_by:
            raise InvalidArgumentError(
                f"run {predecessor_id!r} is continued twice: {predecessor.continued_by!r}"
            )
        predecessor.continued_by = run.run_id

    def linked(self, parent: _Run, record: Record, rec: v.NewRecord) -> None:
        parent.require_running("child_run_linked")
        child_id = payloads.decode_child_run_linked(rec.payload).child_run_id
        child = self.runs.get(child_id)
        if child is None or child.state.parent_run_id != parent.run_id:
            raise InvalidArgumentError(
                f"child_run_linked names run {child_id!r}, which is not a child of "
                f"{parent.run_id!r} in the file"
            )
        if "parent_link_key" in child.matched:
            raise InvalidArgumentError(f"a second child_run_linked for run {child_id!r}")
        v.check_link_record(record, child.new)
        linked = payloads.decode_child_run_linked(rec.payload)
        child.link = (linked.tool_name, linked.tool_call_id, linked.child_agent_id, rec.agent_id)
        child.expect_key("parent_link_key", rec.event_key)

    def cancellation(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        run.require_running("runtime.cancellation_intent")
        if not run.state.cancellation_reason or "cancellation_key" in run.matched:
            raise InvalidArgumentError(
                f"a cancellation intent on run {run.run_id!r}, whose run line has no "
                "cancellation reason or another intent"
            )
        v.check_cancellation(run.run_id, run.state.cancellation_reason, record)
        run.expect_key("cancellation_key", rec.event_key)

    def suspension(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        run.require_running("run_suspended")
        if run.checkpoint is None:
            raise InvalidArgumentError(
                f"run_suspended on run {run.run_id!r}, which has no checkpoint"
            )
        v.check_suspension(run.run_id, run.checkpoint, record)
        run.expect_key("suspension_key", rec.event_key)
        run.expect_key("terminal_key", rec.event_key)
        run.status = RunStatus.SUSPENDED

    def completion(self, run: _Run, record: Record, rec: v.NewRecord) -> None:
        if run.state.start_outcome is RunStartOutcome.STOP:
            if run.count != 1:
                raise InvalidArgumentError("a stopped start's run_completed is its second record")
            v.check_canceled_record(record, run.new)
        else:
            run.require_running("run_completed")
            if not run.state.status.is_finished:
                raise InvalidArgumentError(
                    f"run_completed on run {run.run_id!r}, which is {run.state.status.value} "
                    "on its line"
                )
            terminal, _, payload = v.check_terminal(run.run_id, run.state.status, record)
            check_terminal_against_run(
                run.state.labels, run.state.cancellation_reason, terminal, payload
            )
        run.expect_key("terminal_key", rec.event_key)
        run.status = run.state.status

    # --- memory -------------------------------------------------------------------------

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

    # --- the end ------------------------------------------------------------------------

    def end(self, number: int, value: Any) -> None:
        obj = _object(value, COUNT_KEYS, "end")
        for name in COUNT_KEYS:
            stated = obj[name]
            if type(stated) is not int or stated != self.counts[name]:
                raise InvalidArgumentError(
                    f"the end line counts {stated!r} {name}; the file holds {self.counts[name]}"
                )
        self.check_free_ids()
        for rows in (self.records, self.events, self.batches):
            self.flush(rows)
        for run in self.runs.values():
            try:
                _check_final(run)
            except StoreError as exc:
                raise _located(run.line, exc) from None
        self.insert_runs()
        assert self.session is not None
        self.session.record_count = self.counts["records"]
        self.ended = True  # published once no line follows (``read``)
        del number

    def insert_runs(self) -> None:
        every = list(self.runs.values())
        for start in range(0, len(every), BATCH):
            chunk = [run.state for run in every[start : start + BATCH]]
            try:
                self.sink.insert(runs, [values_of(s, RUN_COLUMNS) for s in chunk])
            except sa.exc.IntegrityError:  # written by another transaction since the check
                self.unchecked = [self.runs[s.run_id] for s in chunk]
                self.check_free_ids()
                raise
            labels = [row for state in chunk for row in label_rows(state)]
            if labels:
                self.sink.insert(run_labels, labels)
        waiting = _Rows(checkpoints, "checkpoint", "data")
        for run in every:
            if run.checkpoint is not None:
                row = {
                    "run_id": run.run_id,
                    "checkpoint_id": run.checkpoint.id,
                    "data": run.checkpoint.data,
                }
                self.add(waiting, row, run.line)
        self.flush(waiting)

    # --- batched inserts ----------------------------------------------------------------

    def add(self, rows: _Rows, row: dict[str, Any], number: int) -> None:
        rows.rows.append(row)
        rows.lines.append(number)
        sized = row[rows.sized]
        rows.size += len(sized) if sized is not None else 0
        if len(rows.rows) >= BATCH or rows.size >= BATCH_BYTES:
            self.flush(rows)

    def flush(self, rows: _Rows) -> None:
        if not rows.rows:
            return
        try:
            self.sink.insert(rows.table, rows.rows)
        except sa.exc.IntegrityError:
            self.find_repeated(rows)
            raise
        rows.rows.clear()
        rows.lines.clear()
        rows.size = 0

    def find_repeated(self, rows: _Rows) -> None:
        """The line of the row that repeats a unique key (the whole batch failed)."""
        for row, number in zip(rows.rows, rows.lines, strict=True):
            try:
                self.sink.insert(rows.table, [row])
            except sa.exc.IntegrityError:
                raise _bad(number, f"the {rows.what} repeats the key of an earlier one") from None


def _check_final(run: _Run) -> None:
    """The run stands where its line says: status, remembered keys, checkpoint, successor."""
    state = run.state
    if run.status is None:
        raise InvalidArgumentError(f"run {run.run_id!r} has no records (no run_started)")
    if run.status is not state.status:
        raise InvalidArgumentError(
            f"run {run.run_id!r} is {state.status.value} on its line, its records leave it "
            f"{run.status.value}"
        )
    for column in KEY_COLUMNS.values():
        key = getattr(state, column)
        if key is not None and column not in run.matched:
            raise InvalidArgumentError(
                f"run {run.run_id!r} remembers {column} {key!r}, which names no record of its kind"
            )
    explicit = state.start_outcome is RunStartOutcome.PROCEED and state.cancellation_reason
    if explicit and "cancellation_key" not in run.matched:
        raise InvalidArgumentError(
            f"run {run.run_id!r} has cancellation reason {state.cancellation_reason!r} "
            "but no cancellation intent"
        )
    if (run.checkpoint is not None) != (state.status is RunStatus.SUSPENDED):
        raise InvalidArgumentError(f"run {run.run_id!r} has a checkpoint iff it is suspended")
    if state.successor_run_id != run.continued_by:
        raise InvalidArgumentError(
            f"run {run.run_id!r} remembers successor {state.successor_run_id!r}, but "
            f"{run.continued_by or 'no run'!r} continues it"
        )
    state.record_count = run.count


_Step = Callable[[_Import, _Run, Record, v.NewRecord], None]


_STEPS: Final[dict[str, _Step]] = {
    payloads.RUN_STARTED: _Import.started,
    payloads.CHILD_RUN_LINKED: _Import.linked,
    payloads.CANCELLATION_INTENT: _Import.cancellation,
    payloads.RUN_SUSPENDED: _Import.suspension,
    payloads.RUN_COMPLETED: _Import.completion,
}


_HANDLERS: Final[dict[str, Callable[[_Import, int, Any], None]]] = {
    "run": _Import.run,
    "record": _Import.record,
    "memory_event": _Import.memory_event,
    "memory_batch": _Import.memory_batch,
    "end": _Import.end,
}
