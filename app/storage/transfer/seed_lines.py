"""The seed lines of a session file (version 3, CONTRACT.md 15.7): each seed operation, its
attempts and their records, replayed through the rules the seed writes apply
(``app/domain/seeds``: the declaration rules, each record's append checks and counters,
the publication rules), and the run lines' ``seed_end_id`` checked against the published
seeds.

An attempt's records are checked as they are read, its counters and (published) its
publication once its last record is read; what needs the record lines (a source's end
position) or every seed line (the runs that attach a seed) is checked at the end, at the
line that stated it. A seed operation's run ID must be free in the store (no run, no seed
operation, not reserved): ``import_conflict``. Operations are inserted at the end, after
the runs are checked free; attempts and records in batches as they come. The lines'
values are read by ``seed_values``, their checks against the rest of the file are
``seed_checks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from app.domain import seeds
from app.domain import validation as v
from app.domain.seeds import Attempt, AttemptState, Owner
from app.domain.times import now_millis
from app.storage.database.tables import seed_operations
from app.storage.transfer import seed_checks, seed_values
from app.storage.transfer.conflicts import SEED_TAKEN
from app.storage.transfer.format import SEED_ATTEMPT_KEYS, SEED_OPERATION_KEYS
from app.storage.transfer.lines import BATCH, ImportState, _Rows
from app.storage.transfer.reading import _bad, _enum, _object
from runtime_store_client import (
    HistoryPrefix,
    ImportConflictError,
    InvalidArgumentError,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
    StoreError,
)


@dataclass(slots=True)
class _SeedOp:
    """A seed operation line, and what its attempts have shown."""

    line: int
    run_id: str
    owner: Owner
    last_attempt_id: str = ""
    #: Its published attempt (replayed), once read.
    published: Attempt | None = None


@dataclass(slots=True)
class _SeedAttempt:
    """An attempt line being read: its stated values and its chain replayed so far."""

    line: int
    state: AttemptState
    #: The chain as the appends would have built it (state open while replaying).
    replay: Attempt
    history_end: int
    body_end: int
    prepared_bytes: int
    keys: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class _Source:
    """A resolved source, checked against the source run's records at the end."""

    line: int
    kind: SeedKind
    prefix: HistoryPrefix


class SeedLines(ImportState):
    """The seed lines (``replay._Import`` sets up their state)."""

    seed_ops: dict[str, _SeedOp]
    current_op: _SeedOp | None
    current_attempt: _SeedAttempt | None
    seed_attempt_rows: _Rows
    seed_record_rows: _Rows
    seed_sources: list[_Source]
    unchecked_seeds: list[str]

    # --- the lines ------------------------------------------------------------------------

    def seed_operation(self, number: int, value: Any) -> None:
        assert self.session is not None
        self.require_seeds()
        self.close_seed_attempt()
        obj = _object(value, SEED_OPERATION_KEYS, "seed_operation")
        run_id = v.require_id(obj["run_id"], "seed_operation.run_id")
        owner = Owner(
            agent_id=v.require_id(obj["agent_id"], "seed_operation.agent_id"),
            session_id=v.optional_text(obj["session_id"], "seed_operation.session_id"),
            command_id=v.require_id(obj["command_id"], "seed_operation.command_id"),
        )
        if owner.session_id != self.session.session_id:
            raise InvalidArgumentError("seed_operation.session_id must be the header's session")
        if self.current_op is not None and not run_id > self.current_op.run_id:
            raise InvalidArgumentError(
                f"seed operation of run {run_id!r} after that of {self.current_op.run_id!r}: "
                "seed operations come once each, by run ID (UTF-8 bytes)"
            )
        op = _SeedOp(number, run_id, owner)
        self.seed_ops[run_id] = op
        self.current_op = op
        self.counts["seed_operations"] += 1
        self.unchecked_seeds.append(run_id)
        if len(self.unchecked_seeds) >= BATCH:
            self.check_free_seed_ids()

    def seed_attempt(self, number: int, value: Any) -> None:
        self.require_seeds()
        op = self.current_op
        if op is None:
            raise InvalidArgumentError("a seed_attempt line before any seed_operation line")
        self.close_seed_attempt()
        obj = _object(value, SEED_ATTEMPT_KEYS, "seed_attempt")
        if obj["run_id"] != op.run_id:
            raise InvalidArgumentError(
                f"seed_attempt.run_id must be {op.run_id!r}, the run ID of the seed operation "
                "it follows"
            )
        attempt_id = v.require_id(obj["attempt_id"], "seed_attempt.attempt_id")
        if op.last_attempt_id and not attempt_id > op.last_attempt_id:
            raise InvalidArgumentError(
                f"attempt {attempt_id!r} after attempt {op.last_attempt_id!r}: a run ID's "
                "attempts come once each, by attempt ID (UTF-8 bytes)"
            )
        op.last_attempt_id = attempt_id
        state = _enum(AttemptState, obj["state"], "seed_attempt.state")
        history_end = seed_values.position(obj["seed_end_id"], "seed_attempt.seed_end_id")
        body_end = seed_values.position(obj["end_id"], "seed_attempt.end_id")
        prepared_bytes = obj["prepared_bytes"]
        if type(prepared_bytes) is not int or prepared_bytes < 0:
            raise InvalidArgumentError("seed_attempt.prepared_bytes must be an integer >= 0")
        if obj["declaration"] is None:
            declaration = None
            source = None
            if state is not AttemptState.ABANDONED:
                raise InvalidArgumentError(
                    "an attempt without a declaration is a settlement's tombstone: abandoned"
                )
            if obj["source"] is not None or (history_end, body_end, prepared_bytes) != (0, 0, 0):
                raise InvalidArgumentError(
                    "a settlement's tombstone has no source, its ends are '0' and it has "
                    "no prepared bytes"
                )
        else:
            declaration = seed_checks.check_declaration(
                op.run_id, op.owner, attempt_id, seed_values.declaration(obj["declaration"])
            )
            source = self.check_source(number, declaration, obj["source"])
        if state is AttemptState.PUBLISHED and op.published is not None:
            raise InvalidArgumentError(
                f"a second published attempt of run {op.run_id!r} (attempt "
                f"{op.published.attempt_id!r} is published)"
            )
        replay = Attempt(
            run_id=op.run_id,
            attempt_id=attempt_id,
            state=AttemptState.OPEN,
            declaration=declaration,
            source=source,
            history_end=0,
            body_end=0,
            prepared_bytes=0,
            prefix_id=None,
            literal_open=False,
        )
        self.current_attempt = _SeedAttempt(
            number, state, replay, history_end, body_end, prepared_bytes
        )
        self.counts["seed_attempts"] += 1

    def seed_record(self, number: int, value: Any) -> None:
        self.require_seeds()
        attempt = self.current_attempt
        if attempt is None:
            raise InvalidArgumentError("a seed_record line before any seed_attempt line")
        replay = attempt.replay
        obj, variant = seed_values.record_object(value)
        if (obj["run_id"], obj["attempt_id"]) != (replay.run_id, replay.attempt_id):
            raise InvalidArgumentError(
                f"seed_record of run {obj['run_id']!r} attempt {obj['attempt_id']!r} after "
                f"the seed_attempt line of run {replay.run_id!r} attempt "
                f"{replay.attempt_id!r}: records follow their attempt"
            )
        if replay.tombstone:
            raise InvalidArgumentError("a settlement's tombstone holds no records")
        key = obj["key"]
        new = seeds.check_seed_record(
            replay.run_id,
            replay.attempt_id,
            SeedRecord(
                key=key, previous_id=obj["previous_id"], **{variant.value: seed_values.variant(obj)}
            ),
        )
        position = replay.body_end + 1
        if obj["id"] != seeds.position_text(position):
            raise InvalidArgumentError(
                f"seed record ID {obj['id']!r} of attempt {replay.attempt_id!r}: the next ID "
                f"is {position}"
            )
        if key in attempt.keys:
            raise InvalidArgumentError(
                f"record key {key!r} repeats a key of attempt {replay.attempt_id!r}"
            )
        seeds.check_append_order(replay, new)
        seeds.apply_append(replay, new)
        spelled = {"run_id": replay.run_id, "attempt_id": replay.attempt_id}
        if {**spelled, **seeds.record_wire(new, position)} != obj:
            raise InvalidArgumentError("the seed record is not in its one spelling (15.8)")
        attempt.keys.add(key)
        row = {
            "run_id": replay.run_id,
            "attempt_id": replay.attempt_id,
            "id": position,
            "key": key,
            "variant": new.variant.value,
            "data": new.data,
            "final": new.final,
            "wire_size": new.wire_size(position),
        }
        self.counts["seed_records"] += 1
        self.add(self.seed_record_rows, row, number)

    # --- checks of an attempt line ------------------------------------------------------------

    def require_seeds(self) -> None:
        if self.version < 3:
            raise InvalidArgumentError(
                f"seed lines need format version 3; this file is version {self.version}"
            )

    def check_source(
        self, number: int, declaration: SeedDeclaration, value: Any
    ) -> HistoryPrefix | None:
        """The source a begin would have resolved: none for a literal; else a run of the
        file with the declaration's agent (its end position is checked at the end)."""
        if declaration.kind is SeedKind.LITERAL:
            if value is not None:
                raise InvalidArgumentError("a literal seed has no source")
            return None
        if value is None:
            raise InvalidArgumentError(f"a {declaration.kind} seed has a source")
        source = seed_values.prefix(value, "seed_attempt.source")
        expected = seeds.source_of(declaration, source.end_id)
        if declaration.kind is SeedKind.CONTINUATION and source.end_id != declaration.source_end_id:
            expected = None
        if source != expected:
            raise InvalidArgumentError(
                "seed_attempt.source is not the source its declaration resolves to"
            )
        seed_checks.check_source_run(self.runs.get(source.run_id), declaration, source)
        self.seed_sources.append(_Source(number, declaration.kind, source))
        return source

    # --- closing an attempt, the seed lines, the file -------------------------------------

    def close_seed_attempt(self) -> None:
        """The attempt's last record is read: its stated counters are its chain's, and a
        published attempt passes the publication rules; its row waits for its batch."""
        attempt = self.current_attempt
        if attempt is None:
            return
        self.current_attempt = None
        replay = attempt.replay
        stated = (attempt.history_end, attempt.body_end, attempt.prepared_bytes)
        actual = (replay.history_end, replay.body_end, replay.prepared_bytes)
        if stated != actual:
            raise _bad(
                attempt.line,
                f"attempt {replay.attempt_id!r} of run {replay.run_id!r} states history end, "
                f"body end and prepared bytes {stated}; its records make them {actual}",
            )
        if attempt.state is AttemptState.PUBLISHED:
            try:
                seeds.check_publication(
                    replay,
                    seeds.position_text(replay.history_end),
                    seeds.position_text(replay.body_end),
                    replay.prepared_bytes,
                )
            except StoreError as exc:
                message = f"a published attempt that could not publish: {exc.message}"
                raise _bad(attempt.line, message) from None
            op = self.seed_ops[replay.run_id]
            op.published = replay
        declaration, source = replay.declaration, replay.source
        row = {
            "run_id": replay.run_id,
            "attempt_id": replay.attempt_id,
            "state": attempt.state.value,
            "declaration": None
            if declaration is None
            else seeds.canonical(seeds.declaration_json(declaration)).decode(),
            "source": None
            if source is None
            else seeds.canonical(seeds.prefix_json(source)).decode(),
            "history_end": replay.history_end,
            "body_end": replay.body_end,
            "prepared_bytes": replay.prepared_bytes,
            "prefix_id": replay.prefix_id,
            "literal_open": replay.literal_open,
        }
        self.add(self.seed_attempt_rows, row, attempt.line)

    def close_seeds(self) -> None:
        """The seed lines are over (a later kind of line, or the end)."""
        self.close_seed_attempt()
        self.check_free_seed_ids()

    def check_free_seed_ids(self) -> None:
        """``import_conflict`` for a seed operation's run ID used in the store."""
        ids, self.unchecked_seeds = self.unchecked_seeds, []
        if not ids:
            return
        for table, reason in SEED_TAKEN:
            taken = self.sink.read(
                sa.select(table.c.run_id).where(table.c.run_id.in_(ids)).limit(1), {}
            )
            if taken:
                run_id = taken[0].run_id
                raise ImportConflictError(
                    f"the seed operation's run ID {run_id!r} {reason}", run_id=run_id
                )

    def check_seeds_final(self) -> None:
        """At the end: every source ends where its kind says, and every run that attaches a
        seed attaches its run ID's published history end, with its agent and session."""
        for source in self.seed_sources:
            run = self.runs[source.prefix.run_id]
            seed_checks.check_source_end(source.line, run, source.kind, source.prefix)
        for run in self.runs.values():
            if run.state.seed_end_id:
                op = self.seed_ops.get(run.run_id)
                seed_checks.check_attached(run, None if op is None else op.published)

    def insert_seed_operations(self) -> None:
        """The operations, once the runs are checked free (a run of the file may carry the
        run ID of a seed operation of the file)."""
        now = now_millis()
        every = list(self.seed_ops.values())
        for start in range(0, len(every), BATCH):
            chunk = every[start : start + BATCH]
            rows = [
                {
                    "run_id": op.run_id,
                    "agent_id": op.owner.agent_id,
                    "session_id": op.owner.session_id,
                    "command_id": op.owner.command_id,
                    "published_attempt_id": None
                    if op.published is None
                    else op.published.attempt_id,
                    "updated_at_ms": now,
                }
                for op in chunk
            ]
            try:
                self.sink.insert(seed_operations, rows)
            except sa.exc.IntegrityError:  # bound by another transaction since the check
                self.unchecked_seeds = [op.run_id for op in chunk]
                self.check_free_seed_ids()
                raise
