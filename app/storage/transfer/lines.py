"""What an import knows while it reads a session file: each run as its lines tell it,
the rows waiting for their batch, and the batches' writes through the sink."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Final

import sqlalchemy as sa

from app.domain import validation as v
from app.domain.limits import Limits
from app.domain.starts import LinkFacts
from app.domain.state import RunState, SessionState
from app.storage.database.row_mapping import (
    NEW_RECORD_FIELDS,
    RUN_COLUMNS,
    label_rows,
    values_of,
)
from app.storage.database.tables import checkpoints, run_labels, runs
from app.storage.transfer.conflicts import TAKEN
from app.storage.transfer.format import KEY_COLUMNS
from app.storage.transfer.reading import _bad
from app.storage.transfer.sinks import _Sink
from runtime_store_client import (
    Checkpoint,
    ImportConflictError,
    InvalidArgumentError,
    RunStartOutcome,
    RunStatus,
)

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
    #: A child's link, as a continuation under another parent must repeat it (12.4).
    link: LinkFacts | None = None
    #: The ID of the record its terminal key names, once replayed (a next_turn source).
    terminal_id: int = 0

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
        if column == "terminal_key":
            self.terminal_id = self.count + 1  # the record being replayed

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


class ImportState:
    """The state every kind of line reads and writes (``replay._Import`` sets it up)."""

    sink: _Sink
    limits: Limits
    session: SessionState | None
    runs: dict[str, _Run]
    unchecked: list[_Run]
    records: _Rows
    events: _Rows
    batches: _Rows
    counts: dict[str, int]
    phase: int
    #: The keys of a run line and of the trailer, by the header's format.
    run_keys: tuple[str, ...]
    count_keys: tuple[str, ...]
    #: The header's format version (1, 2 or 3).
    version: int
    last_line: int
    ended: bool

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

    def check_free_ids(self) -> None:
        """``import_conflict`` for a run ID that exists, was purged, or has memory."""
        ids = [run.run_id for run in self.unchecked]
        self.unchecked = []
        if not ids:
            return
        for table, reason in TAKEN:
            taken = self.sink.read(
                sa.select(table.c.run_id).where(table.c.run_id.in_(ids)).limit(1), {}
            )
            if taken:
                raise ImportConflictError(
                    f"run {taken[0].run_id!r} {reason}", run_id=taken[0].run_id
                )


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
