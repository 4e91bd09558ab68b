"""``publish_run_seed`` (CONTRACT.md 15.1 publication, 15.2 publish).

Validation, then in one transaction: purge, unknown attempt, abandoned (1); the chain must
match (2: ``seed_end_id`` the history end, ``end_id`` the body end, ``prepared_bytes`` > 0
and the total, the source's prefix held, no open literal); another attempt published (3);
first time published, or the same answer again (4).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    PreparationAbandonedError,
    RunPreparation,
    RunSeed,
    SeedConflictError,
    SeedDeclaration,
    SeedNotFoundError,
    StoreError,
)
from tests.contract.builders import Backend, new_session
from tests.contract.seed_builders import (
    Watched,
    append_chain,
    attempt_of,
    begin_and_append,
    completed_source,
    continuation,
    expect_seed_rejected,
    literal,
    msgs,
    next_turn,
    operation_of,
    prepare,
    source_of,
    suspended_source,
)


def publish_rejected(
    store: Backend,
    declaration: SeedDeclaration,
    ends: tuple[str, str, int],
    error: type[StoreError],
    code: str,
    *,
    watch: tuple[Watched, ...] | None = None,
) -> StoreError:
    seed_end_id, end_id, prepared_bytes = ends
    return expect_seed_rejected(
        store,
        lambda: store.publish_run_seed(
            declaration.run_id, declaration.attempt_id, seed_end_id, end_id, prepared_bytes
        ),
        error,
        code,
        declaration.run_id,
        watch=(declaration,) if watch is None else watch,
    )


def publish(store: Backend, declaration: SeedDeclaration, ends: tuple[str, str, int]) -> Any:
    return store.publish_run_seed(declaration.run_id, declaration.attempt_id, *ends)


def history_and_prepared(store: Backend) -> SeedDeclaration:
    """An open literal attempt: 1, 2 messages; 3, 4 prepared (5 + 3 bytes)."""
    declaration = literal()
    begin_and_append(
        store, declaration, [{"messages": msgs("a")}, {"messages": msgs("b")}], [b"12345", b"678"]
    )
    return declaration


GOOD = ("2", "4", 8)


# --- results --------------------------------------------------------------------------------------


def test_publish_returns_the_preparation_of_its_chain(store: Backend) -> None:
    declaration = history_and_prepared(store)
    assert publish(store, declaration, GOOD) == RunPreparation(
        seed=RunSeed(declaration=declaration, source=None, end_id="2"),
        end_id="4",
        prepared_bytes=8,
    )


def test_publish_next_turn_returns_its_resolved_source(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    prepared = prepare(store, next_turn(source))
    assert prepared.preparation == RunPreparation(
        seed=RunSeed(
            declaration=prepared.declaration,
            source=source_of(prepared.declaration, "3"),
            end_id="2",
        ),
        end_id="3",
        prepared_bytes=len(b"compiled-start"),
    )


def test_publish_an_empty_history_with_a_compiled_start(store: Backend) -> None:
    declaration = literal()
    begin_and_append(store, declaration, [], [b"only-the-start"])
    assert publish(store, declaration, ("0", "1", 14)) == RunPreparation(
        seed=RunSeed(declaration=declaration, source=None, end_id="0"),
        end_id="1",
        prepared_bytes=14,
    )


def test_publication_is_idempotent(store: Backend) -> None:
    declaration = history_and_prepared(store)
    first = publish(store, declaration, GOOD)
    assert publish(store, declaration, GOOD) == first
    assert store.find_run_preparation(operation_of(declaration)) == first


def test_publish_makes_the_whole_chain_readable_at_once(store: Backend) -> None:
    declaration = history_and_prepared(store)
    with pytest.raises(StoreError) as info:
        store.load_run_seed(declaration.run_id, "2")
    assert info.value.code == "seed_not_published"
    publish(store, declaration, GOOD)
    assert store.load_run_seed(declaration.run_id, "2").end_id == "2"
    assert [r.id for r in store.list_run_seed_records(declaration.run_id, "2").records] == [
        "1",
        "2",
    ]
    assert [r.id for r in store.list_run_preparation_records(declaration.run_id, "4").records] == [
        "3",
        "4",
    ]


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["run_id", "attempt_id", "seed_end_id", "end_id"])
def test_publish_without_a_required_value_is_invalid_argument(store: Backend, field: str) -> None:
    declaration = history_and_prepared(store)
    args: dict[str, Any] = {
        "run_id": declaration.run_id,
        "attempt_id": declaration.attempt_id,
        "seed_end_id": "2",
        "end_id": "4",
        "prepared_bytes": 8,
    }
    args[field] = ""
    expect_seed_rejected(
        store,
        lambda: store.publish_run_seed(**args),
        InvalidArgumentError,
        "invalid_argument",
        declaration.run_id,
        watch=(declaration,),
    )


@pytest.mark.parametrize("value", ["8", 8.0, None])
def test_publish_prepared_bytes_not_an_integer_is_invalid_argument(
    store: Backend, value: Any
) -> None:
    declaration = history_and_prepared(store)
    publish_rejected(
        store, declaration, ("2", "4", value), InvalidArgumentError, "invalid_argument"
    )


# --- step 1 ---------------------------------------------------------------------------------------


def test_publish_of_an_unknown_attempt_is_seed_not_found(store: Backend) -> None:
    declaration = history_and_prepared(store)
    other = attempt_of(declaration)
    expect_seed_rejected(
        store,
        lambda: publish(store, other, GOOD),
        SeedNotFoundError,
        "seed_not_found",
        declaration.run_id,
        watch=(declaration,),
    )


def test_publish_of_a_run_id_without_seed_is_seed_not_found(store: Backend) -> None:
    publish_rejected(store, literal(), ("0", "1", 1), SeedNotFoundError, "seed_not_found", watch=())


def test_publish_of_an_abandoned_attempt_is_preparation_abandoned(store: Backend) -> None:
    declaration = history_and_prepared(store)
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    publish_rejected(
        store, declaration, GOOD, PreparationAbandonedError, "preparation_abandoned", watch=()
    )


def test_publish_of_a_settlement_tombstone_is_preparation_abandoned(store: Backend) -> None:
    declaration = literal()
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    publish_rejected(
        store,
        declaration,
        ("0", "1", 1),
        PreparationAbandonedError,
        "preparation_abandoned",
        watch=(),
    )


def test_publish_abandoned_comes_before_a_mismatched_chain(store: Backend) -> None:
    declaration = history_and_prepared(store)
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    publish_rejected(
        store,
        declaration,
        ("9", "9", 1),
        PreparationAbandonedError,
        "preparation_abandoned",
        watch=(),
    )


# --- step 2: the chain must match -----------------------------------------------------------------


MISMATCHED = {
    "seed_end_id is the body end": ("4", "4", 8),
    "seed_end_id before the history end": ("1", "4", 8),
    "seed_end_id zero": ("0", "4", 8),
    "seed_end_id not canonical": ("02", "4", 8),
    "end_id is the history end": ("2", "2", 8),
    "end_id past the body end": ("2", "5", 8),
    "end_id not canonical": ("2", "04", 8),
    "prepared_bytes fewer": ("2", "4", 7),
    "prepared_bytes more": ("2", "4", 9),
    "prepared_bytes zero": ("2", "4", 0),
    "prepared_bytes negative": ("2", "4", -8),
}


@pytest.mark.parametrize("case", list(MISMATCHED))
def test_publish_not_matching_its_chain_is_seed_conflict(store: Backend, case: str) -> None:
    declaration = history_and_prepared(store)
    publish_rejected(store, declaration, MISMATCHED[case], SeedConflictError, "seed_conflict")


def test_publish_without_a_compiled_start_is_seed_conflict(store: Backend) -> None:
    declaration = literal()
    begin_and_append(store, declaration, [{"messages": msgs()}], [])
    publish_rejected(store, declaration, ("1", "1", 0), SeedConflictError, "seed_conflict")


def test_publish_of_an_empty_attempt_is_seed_conflict(store: Backend) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    publish_rejected(store, declaration, ("0", "0", 0), SeedConflictError, "seed_conflict")


def test_publish_with_an_open_literal_is_seed_conflict(store: Backend) -> None:
    from runtime_store_client import LiteralPart

    declaration = literal()
    begin_and_append(
        store, declaration, [{"literal_part": LiteralPart(data=b"[", final=False)}], []
    )
    publish_rejected(store, declaration, ("1", "1", 0), SeedConflictError, "seed_conflict")


@pytest.mark.parametrize("kind", ["next_turn", "continuation"])
def test_publish_without_the_sources_prefix_is_seed_conflict(store: Backend, kind: str) -> None:
    session = new_session(store)
    if kind == "next_turn":
        declaration = next_turn(completed_source(store, session.id))
    else:
        declaration = continuation(suspended_source(store, session.id), "2")
    begin_and_append(store, declaration, [{"messages": msgs()}], [b"abc"])
    publish_rejected(store, declaration, ("1", "2", 3), SeedConflictError, "seed_conflict")


def test_publish_of_a_continuation_holding_its_prefix(store: Backend) -> None:
    source = suspended_source(store, new_session(store).id)
    prepared = prepare(store, continuation(source, "2"))
    assert prepared.preparation.seed.source == source_of(prepared.declaration, "2")
    assert prepared.seed_end_id == "2"


def test_a_mismatched_publish_leaves_the_attempt_open(store: Backend) -> None:
    declaration = history_and_prepared(store)
    publish_rejected(store, declaration, ("2", "4", 7), SeedConflictError, "seed_conflict")
    append_chain(store, declaration, [{"prepared": b"9"}], after="4")
    assert publish(store, declaration, ("2", "5", 9)).prepared_bytes == 9


# --- step 3 and 4: one publication per run ID -----------------------------------------------------


def test_publish_after_another_attempt_was_published_is_seed_conflict(store: Backend) -> None:
    first = history_and_prepared(store)
    second = replace(attempt_of(first))
    begin_and_append(
        store, second, [{"messages": msgs("a")}, {"messages": msgs("b")}], [b"12345", b"678"]
    )
    published = publish(store, first, GOOD)
    publish_rejected(store, second, GOOD, SeedConflictError, "seed_conflict")
    assert store.find_run_preparation(operation_of(first)) == published


def test_republish_with_other_values_is_seed_conflict(store: Backend) -> None:
    declaration = history_and_prepared(store)
    publish(store, declaration, GOOD)
    publish_rejected(store, declaration, ("2", "4", 7), SeedConflictError, "seed_conflict")


def test_racing_publications_of_two_attempts_publish_exactly_one(store: Backend) -> None:
    first = history_and_prepared(store)
    second = attempt_of(first)
    begin_and_append(
        store, second, [{"messages": msgs("a")}, {"messages": msgs("b")}], [b"12345", b"678"]
    )
    outcomes: dict[str, object] = {}

    def run(declaration: SeedDeclaration) -> None:
        try:
            outcomes[declaration.attempt_id] = publish(store, declaration, GOOD)
        except StoreError as exc:
            outcomes[declaration.attempt_id] = exc.code

    threads = [threading.Thread(target=run, args=(d,)) for d in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    won = [a for a, o in outcomes.items() if isinstance(o, RunPreparation)]
    assert len(won) == 1, outcomes
    assert sorted(o for o in outcomes.values() if isinstance(o, str)) == ["seed_conflict"]
    found = store.find_run_preparation(operation_of(first))
    assert found is not None
    assert found.seed.declaration.attempt_id == won[0]
