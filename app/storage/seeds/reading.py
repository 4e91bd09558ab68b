"""Reading a published seed (CONTRACT.md 15.4): the seed, its history records and its
compiled start's records, in stable pages."""

from __future__ import annotations

from app.domain import seeds
from app.domain.seeds import Attempt, NewSeedRecord, Variant
from app.domain.validation import require_id
from app.storage.operation import Context
from app.storage.seeds import rows
from app.storage.unit_of_work.transactions import Tx
from runtime_store_client import (
    InvalidArgumentError,
    LiteralPart,
    RunSeed,
    SeedNotFoundError,
    SeedNotPublishedError,
    SeedPage,
    SeedRecord,
)


def published(tx: Tx, run_id: str) -> Attempt:
    """The common answers of 15.4: the run ID's published attempt, or why there is none."""
    bound = rows.operation(tx, run_id)
    if bound is None:
        if rows.reserved(tx, run_id):
            raise rows.reserved_error(run_id)
        raise SeedNotFoundError(f"run {run_id!r} has no seed", run_id=run_id)
    if bound[1] is None:
        if not rows.declared(tx, run_id):
            raise SeedNotFoundError(f"run {run_id!r} has no seed declaration", run_id=run_id)
        raise SeedNotPublishedError(f"run {run_id!r} has no published seed", run_id=run_id)
    attempt = rows.attempt(tx, run_id, bound[1])
    if attempt is None:  # purged between the two reads (PostgreSQL reads in autocommit)
        raise rows.reserved_error(run_id)
    return attempt


def _check_end(attempt: Attempt, given: str, end: int, name: str) -> None:
    if given != seeds.position_text(end):
        raise seeds.conflict(
            attempt.run_id,
            f"{name} {given!r} is not the published {name} {seeds.position_text(end)!r}",
        )


def _required(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"{name} is required")
    return value


def load_run_seed(ctx: Context, run_id: str, seed_end_id: str) -> RunSeed:
    """The published seed; ``seed_end_id`` must be its history end (15.4)."""
    require_id(run_id, "run_id")
    _required(seed_end_id, "seed_end_id")

    def read(tx: Tx) -> RunSeed:
        attempt = published(tx, run_id)
        _check_end(attempt, seed_end_id, attempt.history_end, "seed_end_id")
        return attempt.seed()

    return ctx.uow.read(read)


def list_run_seed_records(
    ctx: Context, run_id: str, seed_end_id: str, after: str, limit: int
) -> SeedPage:
    """The published history records after ``after`` (15.4)."""
    page_limit = seeds.check_limit(limit)
    require_id(run_id, "run_id")
    _required(seed_end_id, "seed_end_id")

    def read(tx: Tx) -> SeedPage:
        attempt = published(tx, run_id)
        _check_end(attempt, seed_end_id, attempt.history_end, "seed_end_id")
        return _page(tx, attempt, 1, attempt.history_end, after, page_limit)

    return ctx.uow.read(read)


def list_run_preparation_records(
    ctx: Context, run_id: str, end_id: str, after: str, limit: int
) -> SeedPage:
    """The published compiled start's records after ``after`` (15.4)."""
    page_limit = seeds.check_limit(limit)
    require_id(run_id, "run_id")
    _required(end_id, "end_id")

    def read(tx: Tx) -> SeedPage:
        attempt = published(tx, run_id)
        _check_end(attempt, end_id, attempt.body_end, "end_id")
        return _page(tx, attempt, attempt.history_end + 1, attempt.body_end, after, page_limit)

    return ctx.uow.read(read)


def _page(tx: Tx, attempt: Attempt, first: int, last: int, after: str, limit: int) -> SeedPage:
    start = seeds.page_after(after, first, last, attempt.run_id)
    sizes = rows.record_sizes(tx, attempt.run_id, attempt.attempt_id, start, last, limit)
    count = seeds.page_length([row.wire_size for row in sizes], [row.id for row in sizes], limit)
    if count == 0:
        return SeedPage(records=[], next_cursor="")
    through = sizes[count - 1].id
    found = rows.records(tx, attempt.run_id, attempt.attempt_id, start, through)
    if len(found) != through - start:  # purged meanwhile
        raise rows.reserved_error(attempt.run_id)
    return SeedPage(
        records=[seed_record(position, record) for position, record in found],
        next_cursor=seeds.position_text(through) if through < last else "",
    )


def seed_record(position: int, record: NewSeedRecord) -> SeedRecord:
    """A stored record as the contract's ``SeedRecord``."""
    variant = record.variant
    part = None
    if variant is Variant.LITERAL_PART:
        assert record.final is not None
        part = LiteralPart(data=record.data, final=record.final)
    return SeedRecord(
        id=seeds.position_text(position),
        key=record.key,
        previous_id=seeds.position_text(position - 1),
        messages=record.data if variant is Variant.MESSAGES else None,
        literal_part=part,
        prefix=record.prefix,
        prepared=record.data if variant is Variant.PREPARED else None,
    )
