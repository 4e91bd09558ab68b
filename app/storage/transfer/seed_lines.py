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
the runs are checked free; attempts and records in batches as they come.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import sqlalchemy as sa

from app.domain import seeds
from app.domain import validation as v
from app.domain.seeds import Attempt, AttemptState, Owner, Variant
from app.domain.times import now_millis
from app.storage.database.tables import run_tombstones, runs, seed_operations
from app.storage.transfer.format import SEED_ATTEMPT_KEYS, SEED_OPERATION_KEYS, SEED_RECORD_KEYS
from app.storage.transfer.lines import BATCH, ImportState, _Rows, _Run
from app.storage.transfer.reading import _bad, _enum, _object
from runtime_store_client import (
    HistoryPrefix,
    ImportConflictError,
    InvalidArgumentError,
    LiteralPart,
    PromptScope,
    RenderedPrompt,
    RunStatus,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
    StoreError,
)

#: Where a seed operation's run ID in use is found, and how ``import_conflict`` says so.
SEED_TAKEN: Final = (
    (runs, "already exists"),
    (seed_operations, "already has a seed operation"),
    (run_tombstones, "was purged; its ID stays reserved"),
)

_DECLARATION_KEYS: Final = (
    "agent_id",
    "run_id",
    "session_id",
    "command_id",
    "attempt_id",
    "kind",
    "source_run_id",
    "source_end_id",
    "exclude_reasoning",
    "rendered_prompts",
)
_PREFIX_KEYS: Final = ("run_id", "end_id", "exclude_system", "exclude_reasoning")
_VARIANTS: Final = frozenset(variant.value for variant in Variant)


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
        history_end = _position(obj["seed_end_id"], "seed_attempt.seed_end_id")
        body_end = _position(obj["end_id"], "seed_attempt.end_id")
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
            declaration = self.check_declaration(op, attempt_id, _declaration(obj["declaration"]))
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
        obj, variant = _record_object(value)
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
            SeedRecord(key=key, previous_id=obj["previous_id"], **{variant.value: _variant(obj)}),
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

    @staticmethod
    def check_declaration(
        op: _SeedOp, attempt_id: str, declaration: SeedDeclaration
    ) -> SeedDeclaration:
        """The declaration rules (15.1), the begin's limit, and its operation's identity."""
        checked = seeds.check_declaration(declaration)
        seeds.check_begin_size(checked)
        if (checked.run_id, checked.attempt_id) != (op.run_id, attempt_id):
            raise InvalidArgumentError(
                "the declaration's run_id and attempt_id must be its attempt's"
            )
        if seeds.owner_of(checked) != op.owner:
            raise InvalidArgumentError(
                f"the declaration disagrees with the seed operation of run {op.run_id!r} "
                "(agent, session or command)"
            )
        return checked

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
        source = _prefix(value, "seed_attempt.source")
        expected = seeds.source_of(declaration, source.end_id)
        if declaration.kind is SeedKind.CONTINUATION and source.end_id != declaration.source_end_id:
            expected = None
        if source != expected:
            raise InvalidArgumentError(
                "seed_attempt.source is not the source its declaration resolves to"
            )
        run = self.runs.get(source.run_id)
        if run is None:
            raise InvalidArgumentError(f"source run {source.run_id!r} is not a run of the file")
        if run.state.agent_id != declaration.agent_id:
            raise InvalidArgumentError(
                f"source run {source.run_id!r} belongs to another agent than the declaration's"
            )
        if declaration.kind is SeedKind.NEXT_TURN and run.state.status is not RunStatus.COMPLETED:
            raise InvalidArgumentError(
                f"source run {source.run_id!r} of a next_turn seed is "
                f"{run.state.status.value}, not completed"
            )
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
            position = seeds.parse_position(source.prefix.end_id)
            if source.kind is SeedKind.NEXT_TURN:
                fits = position is not None and position == run.terminal_id
                wanted = "the ID of its terminal record"
            else:
                fits = position is not None and 1 <= position <= run.count
                wanted = "the ID of one of its records"
            if not fits:
                raise _bad(
                    source.line,
                    f"the source's end_id {source.prefix.end_id!r} is not {wanted} (run "
                    f"{run.run_id!r})",
                )
        for run in self.runs.values():
            if run.state.seed_end_id:
                _check_attached(run, self.seed_ops.get(run.run_id))

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


def _check_attached(run: _Run, op: _SeedOp | None) -> None:
    """15.5: the run's ``seed_end_id`` is its run ID's published history end, prepared for
    its agent and session; a continuation seed for exactly its predecessor."""
    seed_end_id = run.state.seed_end_id
    published = None if op is None else op.published
    if published is None:
        raise _bad(
            run.line,
            f"run {run.run_id!r} attaches seed_end_id {seed_end_id!r}, but its run ID has no "
            "published seed in the file",
        )
    end = seeds.position_text(published.history_end)
    if seed_end_id != end:
        raise _bad(
            run.line,
            f"run {run.run_id!r} attaches seed_end_id {seed_end_id!r}, not its published "
            f"history end {end!r}",
        )
    declaration = published.declaration
    assert declaration is not None
    if (declaration.agent_id, declaration.session_id) != (run.state.agent_id, run.state.session_id):
        raise _bad(
            run.line, f"the seed of run {run.run_id!r} was prepared for another agent or session"
        )
    predecessor = run.new.predecessor_run_id
    continuation = declaration.kind is SeedKind.CONTINUATION
    if continuation != bool(predecessor) or (
        continuation and declaration.source_run_id != predecessor
    ):
        raise _bad(
            run.line,
            f"run {run.run_id!r}: a continuation seed goes with a continuation start of "
            "exactly its source, and only with one",
        )


# --- values of the seed lines -------------------------------------------------------------


def _position(value: Any, what: str) -> int:
    position = seeds.parse_position(value) if isinstance(value, str) else None
    if position is None:
        raise InvalidArgumentError(f"{what} must be a position: '0', '1', '2', …")
    return position


def _strict_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a string")
    return value


def _map(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"{what} must be a JSON object")
    return value


def _declaration(value: Any) -> SeedDeclaration:
    """A declaration as ``declaration_json`` writes it; its rules are checked by
    ``seeds.check_declaration``."""
    obj = _object(value, _DECLARATION_KEYS, "seed_attempt.declaration")
    prompts = obj["rendered_prompts"]
    if not isinstance(prompts, list):
        raise InvalidArgumentError("seed_attempt.declaration.rendered_prompts must be a list")
    rendered = []
    for index, prompt in enumerate(prompts):
        what = f"seed_attempt.declaration.rendered_prompts[{index}]"
        p = _object(prompt, ("prompt_id", "version", "scope"), what)
        scope = _object(p["scope"], ("session_id", "labels"), f"{what}.scope")
        rendered.append(
            RenderedPrompt(
                prompt_id=p["prompt_id"],
                version=p["version"],
                scope=PromptScope(
                    session_id=scope["session_id"],
                    labels=_map(scope["labels"], f"{what}.scope.labels"),
                ),
            )
        )
    kind = _enum(SeedKind, obj["kind"], "seed_attempt.declaration.kind")
    return SeedDeclaration(
        agent_id=obj["agent_id"],
        run_id=obj["run_id"],
        session_id=obj["session_id"],
        command_id=obj["command_id"],
        attempt_id=obj["attempt_id"],
        kind=kind,
        source_run_id=obj["source_run_id"],
        source_end_id=obj["source_end_id"],
        exclude_reasoning=obj["exclude_reasoning"],
        rendered_prompts=tuple(rendered),
    )


def _prefix(value: Any, what: str) -> HistoryPrefix:
    obj = _object(value, _PREFIX_KEYS, what)
    for name in ("exclude_system", "exclude_reasoning"):
        if not isinstance(obj[name], bool):
            raise InvalidArgumentError(f"{what}.{name} must be a boolean")
    return HistoryPrefix(
        run_id=_strict_text(obj["run_id"], f"{what}.run_id"),
        end_id=_strict_text(obj["end_id"], f"{what}.end_id"),
        exclude_system=obj["exclude_system"],
        exclude_reasoning=obj["exclude_reasoning"],
    )


def _record_object(value: Any) -> tuple[dict[str, Any], Variant]:
    """A seed record line's object: its five keys and exactly one variant key."""
    obj = _map(value, "seed_record")
    missing = [key for key in SEED_RECORD_KEYS if key not in obj]
    if missing:
        raise InvalidArgumentError(f"seed_record lacks {missing[0]!r}")
    rest = [key for key in obj if key not in SEED_RECORD_KEYS]
    variants = [Variant(key) for key in rest if key in _VARIANTS]
    if len(rest) != 1 or len(variants) != 1:
        raise InvalidArgumentError(
            "seed_record holds exactly one of messages, literal_part, prefix, prepared "
            f"besides {list(SEED_RECORD_KEYS)}"
        )
    for key in SEED_RECORD_KEYS:
        _strict_text(obj[key], f"seed_record.{key}")
    return obj, variants[0]


def _bytes(value: Any, what: str) -> bytes:
    """Padded standard base64, in the one spelling the encoder writes."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a base64 string")
    try:
        data = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidArgumentError(f"{what} is not valid standard base64") from None
    if base64.b64encode(data).decode("ascii") != value:
        raise InvalidArgumentError(f"{what} is not in its one base64 spelling")
    return data


def _variant(obj: Mapping[str, Any]) -> Any:
    """The variant's value as ``SeedRecord`` holds it."""
    if "messages" in obj:
        text = _strict_text(obj["messages"], "seed_record.messages")
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgumentError("seed_record.messages holds a lone surrogate") from None
    if "literal_part" in obj:
        part = _object(obj["literal_part"], ("data", "final"), "seed_record.literal_part")
        return LiteralPart(
            data=_bytes(part["data"], "seed_record.literal_part.data"), final=part["final"]
        )
    if "prefix" in obj:
        return _prefix(obj["prefix"], "seed_record.prefix")
    return _bytes(obj["prepared"], "seed_record.prepared")
