"""Serialisation of run seeds (CONTRACT.md 15.8): racing publications, settlement against
publication, begins of different operations, and a begin racing a start of the same run
ID, from 16 clients over two service replicas of one PostgreSQL database. The database
alone decides; each race must end in exactly one of the outcomes 15.3 and 15.5 allow."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from runtime_store_client import (
    HttpStore,
    PreparationAbandonedError,
    PreparationOperation,
    RootRunStartResult,
    RunConflictError,
    RunPreparation,
    RunSeed,
    RunStart,
    SeedConflictError,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
    StoreError,
)
from tests.contract.builders import canceled_record, new_session, run_start, started_record, uid
from tests.reliability.test_races import CLIENTS, Races, contract_error, races

__all__ = ["races"]  # the module's fixture: two replicas over a fresh database

MESSAGES = b'[{"role":"user","parts":[{"Text":"hello"}]}]'


def declaration(
    run_id: str, session_id: str, attempt_id: str, command_id: str = "cmd"
) -> SeedDeclaration:
    return SeedDeclaration(
        agent_id="agent-1",
        run_id=run_id,
        session_id=session_id,
        command_id=command_id,
        attempt_id=attempt_id,
        kind=SeedKind.LITERAL,
    )


def prepared_attempt(store: HttpStore, run_id: str, session_id: str, attempt_id: str) -> None:
    """An attempt with one history record and one compiled start record, not published."""
    store.begin_run_seed(declaration(run_id, session_id, attempt_id))
    store.append_run_seed(
        run_id, attempt_id, SeedRecord(key="h", previous_id="0", messages=MESSAGES)
    )
    store.append_run_seed(
        run_id, attempt_id, SeedRecord(key="p", previous_id="1", prepared=attempt_id.encode())
    )


def publish(attempt_id: str, run_id: str) -> Callable[[HttpStore], RunPreparation]:
    prepared = len(attempt_id.encode())
    return lambda store: store.publish_run_seed(run_id, attempt_id, "1", "2", prepared)


def settle(operation: PreparationOperation, attempt_id: str) -> Callable[[HttpStore], object]:
    return lambda store: store.settle_run_preparation(operation, attempt_id)


def begin_for(run: RunStart, session_id: str) -> Callable[[HttpStore], object]:
    return lambda store: store.begin_run_seed(declaration(run.run_id, session_id, "a1"))


def start_root(run: RunStart) -> Callable[[HttpStore], object]:
    return lambda store: store.start_root_run(run, started_record(run), canceled_record(run))


def test_racing_publications_of_one_run_id_publish_exactly_one_attempt(races: Races) -> None:
    session = new_session(races.store, uid("sess"))
    run_id = uid("run")
    attempts = [f"attempt-{index:02d}" for index in range(CLIENTS)]
    for attempt_id in attempts:
        prepared_attempt(races.store, run_id, session.id, attempt_id)

    results = races.at_once([publish(attempt_id, run_id) for attempt_id in attempts])

    errors = [contract_error(result) for result in results]
    winners = [attempts[i] for i, error in enumerate(errors) if error is None]
    assert len(winners) == 1, results
    assert all(isinstance(error, SeedConflictError) for error in errors if error is not None)
    operation = PreparationOperation(
        agent_id="agent-1", run_id=run_id, session_id=session.id, command_id="cmd"
    )
    found = races.store.find_run_preparation(operation)
    assert found is not None
    assert found.seed.declaration.attempt_id == winners[0]
    races.assert_verified()


def test_settlement_against_publication_either_answers_the_preparation_or_abandons(
    races: Races,
) -> None:
    session = new_session(races.store, uid("sess"))
    for _ in range(6):
        run_id = uid("run")
        prepared_attempt(races.store, run_id, session.id, "a1")
        operation = PreparationOperation(
            agent_id="agent-1", run_id=run_id, session_id=session.id, command_id="cmd"
        )
        half = CLIENTS // 2
        calls: list[Callable[[HttpStore], object]] = [publish("a1", run_id)] * half
        calls += [settle(operation, "a1")] * half

        results = races.at_once(calls)

        published = [r for r in results[:half] if isinstance(r, RunPreparation)]
        refused = [r for r in results[:half] if isinstance(r, StoreError)]
        settled = results[half:]
        assert all(contract_error(r) is None for r in settled), settled
        if published:
            # Publication committed first: every settlement after it answers the preparation;
            # a settlement that committed before it would have abandoned the attempt.
            assert not refused, refused
            assert all(r == published[0] for r in published)
            assert all(r == published[0] for r in settled), settled
        else:
            assert all(isinstance(r, PreparationAbandonedError) for r in refused), refused
            assert all(r is None for r in settled), settled
            assert races.store.find_run_preparation(operation) is None
    races.assert_verified()


def test_racing_begins_of_different_operations_bind_the_run_id_to_exactly_one(
    races: Races,
) -> None:
    session = new_session(races.store, uid("sess"))
    run_id = uid("run")
    calls = [
        lambda store, i=index: store.begin_run_seed(
            declaration(run_id, session.id, f"attempt-{i}", command_id=f"cmd-{i}")
        )
        for index in range(CLIENTS)
    ]

    results = races.at_once(calls)

    begun = [r for r in results if isinstance(r, RunSeed)]
    assert len(begun) == 1, results
    assert all(isinstance(contract_error(r), SeedConflictError) for r in results if r not in begun)
    races.assert_verified()


def test_a_begin_racing_an_unseeded_start_of_the_same_run_id_never_both_succeed(
    races: Races,
) -> None:
    session = new_session(races.store, uid("sess"))
    for _ in range(6):
        run = run_start(session_id=session.id)
        half = CLIENTS // 2
        calls: list[Callable[[HttpStore], object]] = [begin_for(run, session.id)] * half
        calls += [start_root(run)] * half

        results = races.at_once(calls)

        begun = [r for r in results[:half] if isinstance(r, RunSeed)]
        started = [r for r in results[half:] if isinstance(r, RootRunStartResult)]
        for result in results:
            contract_error(result)  # never unavailable
        assert bool(begun) != bool(started), results
        if begun:
            # The run ID was prepared first: an unseeded start of it is seed_conflict.
            assert all(isinstance(r, SeedConflictError) for r in results[half:]), results
        else:
            # The run exists: a begin of its ID is run_conflict.
            assert all(isinstance(r, RunConflictError) for r in results[:half]), results
            assert sum(r.started.inserted for r in started) == 1
    races.assert_verified()


@pytest.mark.parametrize("attempts", [2])
def test_a_seeded_start_from_16_workers_attaches_the_published_seed_once(
    races: Races, attempts: int
) -> None:
    session = new_session(races.store, uid("sess"))
    run = run_start(session_id=session.id)
    for index in range(attempts):
        prepared_attempt(races.store, run.run_id, session.id, f"a{index}")
    races.store.publish_run_seed(run.run_id, "a0", "1", "2", 2)
    seeded = type(run)(**{**run.__dict__, "seed_end_id": "1"})

    results = races.at_once(
        [
            lambda store: store.start_root_run(
                seeded, started_record(seeded), canceled_record(seeded)
            )
        ]
        * CLIENTS
    )

    starts = [r for r in results if isinstance(r, RootRunStartResult)]
    assert len(starts) == CLIENTS, results
    assert sum(r.started.inserted for r in starts) == 1
    assert races.store.load_run(run.run_id).seed_end_id == "1"
    races.assert_verified()
