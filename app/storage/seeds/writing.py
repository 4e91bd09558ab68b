"""Writing a seed (CONTRACT.md 15.2): begin an attempt, append its records, publish it.

Each is one transaction under the run ID's lock (``rows.lock``), checking the rules in the
order 15.2 lists them; a refused call writes nothing.
"""

from __future__ import annotations

from app.domain import seeds
from app.domain.seeds import Attempt, AttemptState
from app.domain.state import SessionState
from app.storage.operation import Context
from app.storage.seeds import rows
from app.storage.sessions.administration import not_found
from app.storage.unit_of_work.transactions import Tx, purged_error
from runtime_store_client import (
    HistoryPrefix,
    InvalidTranscriptPositionError,
    RunConflictError,
    RunPreparation,
    RunRecordOwnerMismatchError,
    RunSeed,
    RunStatus,
    SeedAppendResult,
    SeedDeclaration,
    SeedKind,
    SeedNotFoundError,
    SeedRecord,
)


def check_session(tx: Tx, run_id: str, session_id: str, session: SessionState | None) -> None:
    """Step 1 of a begin, a find and a settlement: the run ID reserved by a purge, the
    named session purged (``session_purged``) or unknown (``session_not_found``)."""
    if rows.reserved(tx, run_id):
        raise rows.reserved_error(run_id)
    if not session_id:
        return
    if session is None:
        raise not_found(session_id)
    if session.purged:
        raise purged_error(session_id, run_id)


def begin_run_seed(ctx: Context, declaration: SeedDeclaration) -> RunSeed:
    """Declare one attempt: freeze its owner and resolve its source (15.2)."""
    declared = seeds.check_declaration(declaration)
    seeds.check_begin_size(declared)
    run_id = declared.run_id

    def operation(tx: Tx) -> RunSeed:
        session = rows.lock(tx, run_id, declared.session_id)
        check_session(tx, run_id, declared.session_id, session)
        bound = rows.operation(tx, run_id)
        seeds.check_bound_to(run_id, None if bound is None else bound[0], seeds.owner_of(declared))
        existing = rows.attempt(tx, run_id, declared.attempt_id)
        if existing is not None:
            if existing.state is AttemptState.ABANDONED:
                raise seeds.abandoned_error(existing)
            assert existing.declaration is not None
            if not seeds.same_declaration(existing.declaration, declared):
                raise seeds.conflict(
                    run_id, f"attempt {declared.attempt_id!r} was declared otherwise"
                )
            return existing.seed()
        if bound is not None and bound[1] is not None:
            raise seeds.conflict(run_id, f"another attempt of run {run_id!r} is published")
        if tx.run(run_id) is not None:
            raise RunConflictError(
                f"run {run_id!r} already exists; a seed is published before its first start",
                run_id=run_id,
            )
        attempt = Attempt(
            run_id=run_id,
            attempt_id=declared.attempt_id,
            state=AttemptState.OPEN,
            declaration=declared,
            source=_resolve_source(tx, declared),
            history_end=0,
            body_end=0,
            prepared_bytes=0,
            prefix_id=None,
            literal_open=False,
        )
        if bound is None:
            rows.bind(tx, run_id, seeds.owner_of(declared))
        else:
            rows.touch(tx, run_id)
        rows.insert_attempt(tx, attempt)
        return attempt.seed()

    return ctx.uow.write(operation)


def _resolve_source(tx: Tx, declared: SeedDeclaration) -> HistoryPrefix | None:
    """Step 6 of a begin: the source run, read under its session's lock (which the begin
    holds: a source is a run of the declaration's session)."""
    if declared.kind is SeedKind.LITERAL:
        return None
    source = tx.run(declared.source_run_id)
    if source is None:
        raise tx.missing_run_error(declared.source_run_id)
    if source.agent_id != declared.agent_id or source.session_id != declared.session_id:
        raise RunRecordOwnerMismatchError(
            f"source run {source.run_id!r} belongs to another agent or session",
            run_id=declared.run_id,
        )
    wanted = RunStatus.COMPLETED if declared.kind is SeedKind.NEXT_TURN else RunStatus.SUSPENDED
    if source.status is not wanted:
        raise RunConflictError(
            f"source run {source.run_id!r} is {source.status.value}; a {declared.kind} seed "
            f"needs a {wanted.value} source",
            run_id=declared.run_id,
        )
    if declared.kind is SeedKind.NEXT_TURN:
        assert source.terminal_key is not None
        terminal = tx.stored_record(source.run_id, source.terminal_key)
        assert terminal is not None
        return seeds.source_of(declared, seeds.position_text(terminal.seq))
    position = seeds.parse_position(declared.source_end_id)
    if position is None or not 1 <= position <= source.record_count:
        raise InvalidTranscriptPositionError(
            f"source_end_id {declared.source_end_id!r} is not a record of run {source.run_id!r}",
            run_id=declared.run_id,
        )
    return seeds.source_of(declared, declared.source_end_id)


def _attempt_to_write(tx: Tx, run_id: str, attempt_id: str) -> Attempt:
    """Steps 1-2 of an append and a publication: the attempt, existing and not abandoned."""
    rows.lock(tx, run_id)
    if rows.operation(tx, run_id, lock=True) is None and rows.reserved(tx, run_id):
        raise rows.reserved_error(run_id)
    attempt = rows.attempt(tx, run_id, attempt_id)
    if attempt is None:
        raise SeedNotFoundError(f"run {run_id!r} has no seed attempt {attempt_id!r}", run_id=run_id)
    if attempt.state is AttemptState.ABANDONED:
        raise seeds.abandoned_error(attempt)
    return attempt


def append_run_seed(
    ctx: Context, run_id: str, attempt_id: str, record: SeedRecord
) -> SeedAppendResult:
    """Append one record right after its exact predecessor (15.2)."""
    new = seeds.check_seed_record(run_id, attempt_id, record)

    def operation(tx: Tx) -> SeedAppendResult:
        attempt = _attempt_to_write(tx, run_id, attempt_id)
        stored = rows.record_by_key(tx, run_id, attempt_id, new.key)
        if stored is not None:
            position, original = stored
            if not seeds.same_record(original, new):
                raise seeds.conflict(
                    run_id, f"record key {new.key!r} was appended with other content"
                )
            return SeedAppendResult(id=seeds.position_text(position), inserted=False)
        seeds.check_append_order(attempt, new)
        position = seeds.apply_append(attempt, new)
        rows.insert_record(tx, run_id, attempt_id, position, new)
        rows.update_attempt(tx, attempt)
        rows.touch(tx, run_id)
        return SeedAppendResult(id=seeds.position_text(position), inserted=True)

    return ctx.uow.write(operation)


def publish_run_seed(
    ctx: Context,
    run_id: str,
    attempt_id: str,
    seed_end_id: str,
    end_id: str,
    prepared_bytes: int,
) -> RunPreparation:
    """Seal the attempt's whole chain at once; idempotent (15.2)."""
    seeds.check_publication_args(run_id, attempt_id, seed_end_id, end_id, prepared_bytes)

    def operation(tx: Tx) -> RunPreparation:
        attempt = _attempt_to_write(tx, run_id, attempt_id)
        seeds.check_publication(attempt, seed_end_id, end_id, prepared_bytes)
        bound = rows.operation(tx, run_id)
        assert bound is not None
        published = bound[1]
        if published is not None and published != attempt_id:
            raise seeds.conflict(run_id, f"another attempt of run {run_id!r} is published")
        if attempt.state is AttemptState.OPEN:
            attempt.state = AttemptState.PUBLISHED
            rows.update_attempt(tx, attempt)
            rows.touch(tx, run_id, published_attempt_id=attempt_id)
        return attempt.preparation()

    return ctx.uow.write(operation)
