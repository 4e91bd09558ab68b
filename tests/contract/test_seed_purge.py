"""Purging a session's seeds (CONTRACT.md 15.7 purge, with 3.1 and the purge answers of
15.2-15.5).

``purge_session`` deletes every seed operation of the session with all its attempts (open,
published, abandoned, tombstones) and records; the run IDs they reserved stay reserved:
every operation of section 15 and every start naming such a run ID, or the session, answers
``session_purged``. Sessionless seeds are never purged by it; open attempts do not block it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from runtime_store_client import (
    RunStatus,
    SeedDeclaration,
    SessionHasActiveRunsError,
    SessionPurgedError,
)
from tests.contract.builders import (
    Backend,
    at,
    canceled_record,
    new_session,
    run_start,
    started_record,
    terminal_record,
)
from tests.contract.seed_builders import (
    Prepared,
    attempt_of,
    begin_and_append,
    completed_source,
    literal,
    messages_record,
    next_turn,
    operation_of,
    prepare,
    seeded,
)


def purge(store: Backend, session_id: str) -> None:
    store.end_session(session_id, at(100))
    store.purge_session(session_id)


@dataclass(frozen=True)
class Purged:
    """A purged session that held an open, a published, an abandoned attempt and a
    tombstone, and a seeded run."""

    session_id: str
    open: SeedDeclaration
    published: Prepared
    abandoned: SeedDeclaration
    tombstone: SeedDeclaration
    run_id: str


def purged(store: Backend) -> Purged:
    session_id = new_session(store).id
    open_ = literal(session_id=session_id)
    begin_and_append(store, open_)
    published = prepare(store, literal(session_id=session_id))
    abandoned = literal(session_id=session_id)
    begin_and_append(store, abandoned)
    store.settle_run_preparation(operation_of(abandoned), abandoned.attempt_id)
    tombstone = literal(session_id=session_id)
    store.settle_run_preparation(operation_of(tombstone), tombstone.attempt_id)
    run = seeded(run_start(run_id=published.run_id, session_id=session_id), published)
    store.start_root_run(run, started_record(run), canceled_record(run))
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    purge(store, session_id)
    return Purged(session_id, open_, published, abandoned, tombstone, run.run_id)


def declarations(p: Purged) -> dict[str, SeedDeclaration]:
    return {
        "open": p.open,
        "published": p.published.declaration,
        "abandoned": p.abandoned,
        "tombstone": p.tombstone,
    }


def operations(store: Backend, d: SeedDeclaration) -> dict[str, Callable[[], object]]:
    """Every operation of section 15 naming ``d``'s run ID."""
    op = operation_of(d)
    return {
        "begin retry": lambda: store.begin_run_seed(d),
        "begin new attempt": lambda: store.begin_run_seed(attempt_of(d)),
        "begin sessionless": lambda: store.begin_run_seed(literal(run_id=d.run_id)),
        "begin in another session": lambda: store.begin_run_seed(
            literal(run_id=d.run_id, session_id=new_session(store).id)
        ),
        "append": lambda: store.append_run_seed(d.run_id, d.attempt_id, messages_record("x", "0")),
        "publish": lambda: store.publish_run_seed(d.run_id, d.attempt_id, "1", "2", 14),
        "find": lambda: store.find_run_preparation(op),
        "find sessionless": lambda: store.find_run_preparation(replace(op, session_id="")),
        "settle": lambda: store.settle_run_preparation(op, d.attempt_id),
        "settle new attempt": lambda: store.settle_run_preparation(op, "att-new"),
        "settle sessionless": lambda: store.settle_run_preparation(
            replace(op, session_id=""), "att-new"
        ),
        "load": lambda: store.load_run_seed(d.run_id, "1"),
        "seed records": lambda: store.list_run_seed_records(d.run_id, "1"),
        "preparation records": lambda: store.list_run_preparation_records(d.run_id, "2"),
    }


OPERATIONS = [
    "begin retry",
    "begin new attempt",
    "begin sessionless",
    "begin in another session",
    "append",
    "publish",
    "find",
    "find sessionless",
    "settle",
    "settle new attempt",
    "settle sessionless",
    "load",
    "seed records",
    "preparation records",
]


def expect_purged(call: Callable[[], object]) -> None:
    with pytest.raises(SessionPurgedError) as info:
        call()
    assert info.value.code == "session_purged"
    assert info.value.status == 410


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("state", ["open", "published", "abandoned", "tombstone"])
def test_after_purge_every_seed_operation_on_a_reserved_run_id_is_session_purged(
    store: Backend, state: str, operation: str
) -> None:
    p = purged(store)
    expect_purged(operations(store, declarations(p)[state])[operation])


@pytest.mark.parametrize("state", ["open", "published", "abandoned", "tombstone"])
@pytest.mark.parametrize("seed", [False, True])
def test_after_purge_a_start_naming_a_reserved_run_id_is_session_purged(
    store: Backend, state: str, seed: bool
) -> None:
    p = purged(store)
    d = declarations(p)[state]
    run = run_start(run_id=d.run_id)
    if seed:
        run = seeded(run, "1")
    expect_purged(lambda: store.start_one_shot_run(run, started_record(run)))
    other = run_start(run_id=d.run_id, session_id=new_session(store).id)
    if seed:
        other = seeded(other, "1")
    expect_purged(
        lambda: store.start_root_run(other, started_record(other), canceled_record(other))
    )
    expect_purged(lambda: store.start_synchronous_run(run, started_record(run)))


def test_after_purge_an_exact_retry_of_a_seeded_start_is_session_purged(store: Backend) -> None:
    p = purged(store)
    run = seeded(run_start(run_id=p.published.run_id, session_id=p.session_id), p.published)
    expect_purged(lambda: store.start_root_run(run, started_record(run), canceled_record(run)))


@pytest.mark.parametrize(
    "call",
    ["begin", "find", "settle"],
)
def test_after_purge_a_seed_operation_naming_the_session_is_session_purged(
    store: Backend, call: str
) -> None:
    p = purged(store)
    fresh = literal(session_id=p.session_id)
    calls: dict[str, Callable[[], object]] = {
        "begin": lambda: store.begin_run_seed(fresh),
        "find": lambda: store.find_run_preparation(operation_of(fresh)),
        "settle": lambda: store.settle_run_preparation(operation_of(fresh), fresh.attempt_id),
    }
    expect_purged(calls[call])
    # nothing was bound by the refusals: the run ID is still free elsewhere
    other = literal(run_id=fresh.run_id)
    assert store.begin_run_seed(other).declaration == other


def test_purge_deletes_the_seeds_of_the_session_only(store: Backend) -> None:
    sessionless = prepare(store)
    other_session = prepare(store, literal(session_id=new_session(store).id))
    purged(store)
    for kept in (sessionless, other_session):
        assert store.load_run_seed(kept.run_id, kept.seed_end_id) == kept.preparation.seed
        assert store.find_run_preparation(operation_of(kept.declaration)) == kept.preparation


def test_sessionless_seeds_are_never_purged(store: Backend) -> None:
    sessionless = literal()
    _, records = begin_and_append(store, sessionless)
    session_id = new_session(store).id
    prepare(store, literal(session_id=session_id))
    purge(store, session_id)
    assert store.begin_run_seed(sessionless).end_id == "1"
    assert (
        store.publish_run_seed(
            sessionless.run_id, sessionless.attempt_id, "1", "2", len(records[-1].prepared or b"")
        ).seed.declaration
        == sessionless
    )


def test_open_attempts_do_not_block_a_purge(store: Backend) -> None:
    session_id = new_session(store).id
    declaration = literal(session_id=session_id)
    begin_and_append(store, declaration)
    purge(store, session_id)
    expect_purged(lambda: store.begin_run_seed(declaration))


def test_a_purged_next_turn_seed_leaves_its_reserved_run_id(store: Backend) -> None:
    session_id = new_session(store).id
    source = completed_source(store, session_id)
    declaration = next_turn(source)
    begin_and_append(store, declaration)
    purge(store, session_id)
    expect_purged(lambda: store.begin_run_seed(declaration))
    expect_purged(lambda: store.begin_run_seed(literal(run_id=declaration.run_id)))


def test_a_session_with_a_running_seeded_run_still_cannot_be_purged(store: Backend) -> None:
    session_id = new_session(store).id
    prepared = prepare(store, literal(session_id=session_id))
    run = seeded(run_start(run_id=prepared.run_id, session_id=session_id), prepared)
    store.start_root_run(run, started_record(run), canceled_record(run))
    store.end_session(session_id, at(100))
    with pytest.raises(SessionHasActiveRunsError):
        store.purge_session(session_id)
    assert store.load_run_seed(prepared.run_id, prepared.seed_end_id) == prepared.preparation.seed


def test_purging_again_is_a_no_op_and_run_ids_stay_reserved(store: Backend) -> None:
    p = purged(store)
    store.purge_session(p.session_id)
    expect_purged(lambda: store.begin_run_seed(literal(run_id=p.open.run_id)))
