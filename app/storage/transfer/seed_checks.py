"""The checks of a session file's seed lines against the rest of the file (CONTRACT.md
15.1, 15.5, 15.7): a declaration against its seed operation, a source against the run it
names (its agent and status as it is read, its end position at the end), and a run that
attaches a seed against its run ID's published attempt."""

from __future__ import annotations

from app.domain import seeds
from app.domain.seeds import Attempt, Owner
from app.storage.transfer.lines import _Run
from app.storage.transfer.reading import _bad
from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    RunStatus,
    SeedDeclaration,
    SeedKind,
)


def check_declaration(
    run_id: str, owner: Owner, attempt_id: str, declaration: SeedDeclaration
) -> SeedDeclaration:
    """The declaration rules (15.1), the begin's limit, and its operation's identity."""
    checked = seeds.check_declaration(declaration)
    seeds.check_begin_size(checked)
    if (checked.run_id, checked.attempt_id) != (run_id, attempt_id):
        raise InvalidArgumentError("the declaration's run_id and attempt_id must be its attempt's")
    if seeds.owner_of(checked) != owner:
        raise InvalidArgumentError(
            f"the declaration disagrees with the seed operation of run {run_id!r} "
            "(agent, session or command)"
        )
    return checked


def check_source_run(run: _Run | None, declaration: SeedDeclaration, source: HistoryPrefix) -> None:
    """The source run is a run of the file, of the declaration's agent; a next_turn seed's
    is completed."""
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


def check_source_end(line: int, run: _Run, kind: SeedKind, prefix: HistoryPrefix) -> None:
    """At the end, every record of the source run read: the source ends where its kind
    says (a next_turn seed at the run's terminal record, any other at one of its records)."""
    position = seeds.parse_position(prefix.end_id)
    if kind is SeedKind.NEXT_TURN:
        fits = position is not None and position == run.terminal_id
        wanted = "the ID of its terminal record"
    else:
        fits = position is not None and 1 <= position <= run.count
        wanted = "the ID of one of its records"
    if not fits:
        raise _bad(
            line,
            f"the source's end_id {prefix.end_id!r} is not {wanted} (run {run.run_id!r})",
        )


def check_attached(run: _Run, published: Attempt | None) -> None:
    """15.5: the run's ``seed_end_id`` is its run ID's published history end, prepared for
    its agent and session; a continuation seed for exactly its predecessor."""
    seed_end_id = run.state.seed_end_id
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
