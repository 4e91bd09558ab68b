"""The decisions over an attempt's state (15.3, 15.5) and the seed operation's owner
(15.8)."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.validation import require_id
from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    PreparationAbandonedError,
    PreparationOperation,
    RunPreparation,
    RunSeed,
    SeedConflictError,
    SeedDeclaration,
)

from .declarations import check_text
from .encoding import AttemptState, Variant, position_text
from .records import NewSeedRecord

# --- attempts ---------------------------------------------------------------------------


@dataclass(slots=True)
class Attempt:
    """An attempt's row as the decisions read it."""

    run_id: str
    attempt_id: str
    state: AttemptState
    declaration: SeedDeclaration | None
    source: HistoryPrefix | None
    history_end: int
    body_end: int
    prepared_bytes: int
    prefix_id: int | None
    literal_open: bool

    @property
    def tombstone(self) -> bool:
        return self.declaration is None

    def seed(self) -> RunSeed:
        assert self.declaration is not None
        return RunSeed(
            declaration=self.declaration,
            source=self.source,
            end_id=position_text(self.history_end),
        )

    def preparation(self) -> RunPreparation:
        return RunPreparation(
            seed=self.seed(),
            end_id=position_text(self.body_end),
            prepared_bytes=self.prepared_bytes,
        )


def abandoned_error(attempt: Attempt) -> PreparationAbandonedError:
    return PreparationAbandonedError(
        f"attempt {attempt.attempt_id!r} of run {attempt.run_id!r} was settled without "
        "publication and can never publish",
        run_id=attempt.run_id,
    )


def conflict(run_id: str, message: str) -> SeedConflictError:
    return SeedConflictError(message, run_id=run_id)


def check_append_order(attempt: Attempt, record: NewSeedRecord) -> None:
    """Steps 4-8 of an append (15.2): where a new record may go; ``seed_conflict``."""
    run_id = attempt.run_id
    if attempt.state is AttemptState.PUBLISHED:
        raise conflict(run_id, "the attempt is published; nothing may be appended to it")
    if record.previous != attempt.body_end:
        raise conflict(
            run_id,
            f"previous_id must be the attempt's body end {position_text(attempt.body_end)!r}",
        )
    if attempt.literal_open and record.variant is not Variant.LITERAL_PART:
        raise conflict(run_id, "a literal is open: only its next literal_part may follow")
    if attempt.body_end > attempt.history_end and record.variant is not Variant.PREPARED:
        raise conflict(run_id, "the compiled start comes last: only prepared records follow")
    if record.variant is Variant.PREFIX:
        if attempt.prefix_id is not None:
            raise conflict(run_id, "the attempt already holds its prefix")
        if attempt.source is None or record.prefix != attempt.source:
            raise conflict(run_id, "the prefix must be exactly the attempt's source")


def apply_append(attempt: Attempt, record: NewSeedRecord) -> int:
    """The counters a stored record moves (step 9); the position it is stored at."""
    position = attempt.body_end + 1
    attempt.body_end = position
    if record.variant.history:
        attempt.history_end = position
    else:
        attempt.prepared_bytes += len(record.data)
    if record.variant is Variant.PREFIX:
        attempt.prefix_id = position
    attempt.literal_open = record.variant is Variant.LITERAL_PART and not record.final
    return position


def check_publication(attempt: Attempt, seed_end_id: str, end_id: str, prepared_bytes: int) -> None:
    """Step 2 of a publication (15.2): the values must match the chain; ``seed_conflict``."""
    run_id = attempt.run_id
    if seed_end_id != position_text(attempt.history_end):
        raise conflict(
            run_id, f"seed_end_id must be the history end {position_text(attempt.history_end)!r}"
        )
    if end_id != position_text(attempt.body_end):
        raise conflict(run_id, f"end_id must be the body end {position_text(attempt.body_end)!r}")
    if attempt.prepared_bytes <= 0:
        raise conflict(run_id, "no publication without a compiled start (prepared records)")
    if prepared_bytes != attempt.prepared_bytes:
        raise conflict(
            run_id, f"prepared_bytes must be the attempt's total {attempt.prepared_bytes}"
        )
    if attempt.source is not None and attempt.prefix_id is None:
        raise conflict(run_id, "the attempt has a source but holds no prefix record")
    if attempt.literal_open:
        raise conflict(run_id, "a literal is still open")


def check_publication_args(
    run_id: object, attempt_id: object, seed_end_id: object, end_id: object, prepared: object
) -> None:
    require_id(run_id, "run_id")  # type: ignore[arg-type]
    require_id(attempt_id, "attempt_id")  # type: ignore[arg-type]
    require_id(seed_end_id, "seed_end_id")  # type: ignore[arg-type]
    require_id(end_id, "end_id")  # type: ignore[arg-type]
    if not isinstance(prepared, int) or isinstance(prepared, bool):
        raise InvalidArgumentError("prepared_bytes must be an integer")


# --- operations -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Owner:
    """A seed operation's identity; ``session_id`` "" when sessionless."""

    agent_id: str
    session_id: str
    command_id: str


def check_operation(operation: object) -> PreparationOperation:
    if not isinstance(operation, PreparationOperation):
        raise InvalidArgumentError("operation must be a PreparationOperation")
    require_id(operation.agent_id, "operation.agent_id")
    require_id(operation.run_id, "operation.run_id")
    require_id(operation.command_id, "operation.command_id")
    check_text(operation.session_id, "operation.session_id")
    return operation


def owner_of(value: SeedDeclaration | PreparationOperation) -> Owner:
    return Owner(agent_id=value.agent_id, session_id=value.session_id, command_id=value.command_id)


def check_bound_to(run_id: str, bound: Owner | None, owner: Owner) -> None:
    """Every begin, find and settlement must name the run ID's operation (15.1)."""
    if bound is not None and bound != owner:
        raise conflict(
            run_id,
            f"run {run_id!r} is prepared by another operation (agent, session or command differ)",
        )
