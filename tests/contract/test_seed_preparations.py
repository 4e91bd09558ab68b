"""``find_run_preparation`` and ``settle_run_preparation`` (CONTRACT.md 15.3).

Find is read-only: the accepted preparation or none, binding nothing. Settle answers for
good: a published preparation whatever attempt it names, or it abandons that attempt for
ever (a tombstone when it was never begun), binding the operation.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest

from runtime_store_client import (
    InvalidArgumentError,
    PreparationAbandonedError,
    PreparationOperation,
    RunPreparation,
    SeedConflictError,
    SessionNotFoundError,
    SessionPurgedError,
    StoreError,
)
from tests.contract.builders import Backend, at, new_session
from tests.contract.seed_builders import (
    append_chain,
    attempt_of,
    begin_and_append,
    expect_seed_rejected,
    literal,
    messages_record,
    msgs,
    operation_of,
    prepare,
    publish_all,
)


def find_rejected(
    store: Backend,
    operation: PreparationOperation,
    error: type[StoreError],
    code: str,
    watch: tuple[Any, ...] = (),
) -> StoreError:
    return expect_seed_rejected(
        store,
        lambda: store.find_run_preparation(operation),
        error,
        code,
        operation.run_id,
        session_id=operation.session_id,
        watch=watch,
    )


def settle_rejected(
    store: Backend,
    operation: PreparationOperation,
    attempt_id: str,
    error: type[StoreError],
    code: str,
    watch: tuple[Any, ...] = (),
) -> StoreError:
    return expect_seed_rejected(
        store,
        lambda: store.settle_run_preparation(operation, attempt_id),
        error,
        code,
        operation.run_id,
        session_id=operation.session_id,
        watch=watch,
    )


def purged_session(store: Backend) -> str:
    session = new_session(store)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    return session.id


def other_operations(operation: PreparationOperation, store: Backend) -> dict[str, Any]:
    return {
        "agent_id": replace(operation, agent_id="agent-2"),
        "session_id": replace(operation, session_id=new_session(store).id),
        "command_id": replace(operation, command_id="cmd-other"),
    }


# --- find -----------------------------------------------------------------------------------------


def test_find_before_any_seed_is_none(store: Backend) -> None:
    assert store.find_run_preparation(operation_of(literal())) is None


def test_find_while_attempts_are_open_is_none(store: Backend) -> None:
    declaration = literal()
    begin_and_append(store, declaration)
    assert store.find_run_preparation(operation_of(declaration)) is None


def test_find_returns_the_published_preparation(store: Backend) -> None:
    prepared = prepare(store, literal(session_id=new_session(store).id))
    assert store.find_run_preparation(operation_of(prepared.declaration)) == prepared.preparation


def test_find_after_a_settlement_abandoned_the_attempt_is_none(store: Backend) -> None:
    declaration = literal()
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    assert store.find_run_preparation(operation_of(declaration)) is None


def test_find_binds_nothing(store: Backend) -> None:
    declaration = literal()
    assert store.find_run_preparation(operation_of(declaration)) is None
    other = replace(declaration, command_id="cmd-other")
    assert store.begin_run_seed(other).declaration == other


def test_find_abandons_nothing(store: Backend) -> None:
    declaration = literal()
    _, records = begin_and_append(store, declaration)
    assert store.find_run_preparation(operation_of(declaration)) is None
    assert publish_all(store, declaration, records).end_id == records[-1].id


@pytest.mark.parametrize("field", ["agent_id", "session_id", "command_id"])
def test_find_for_another_operation_is_seed_conflict(store: Backend, field: str) -> None:
    prepared = prepare(store, literal(session_id=new_session(store).id))
    operation = other_operations(operation_of(prepared.declaration), store)[field]
    find_rejected(store, operation, SeedConflictError, "seed_conflict", watch=(prepared,))


def test_find_for_another_operation_of_an_unpublished_seed_is_seed_conflict(
    store: Backend,
) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    operation = replace(operation_of(declaration), command_id="cmd-other")
    find_rejected(store, operation, SeedConflictError, "seed_conflict", watch=(declaration,))


def test_find_in_an_unknown_session_is_session_not_found(store: Backend) -> None:
    operation = operation_of(literal(session_id="sess-never-created"))
    find_rejected(store, operation, SessionNotFoundError, "session_not_found")


def test_find_in_a_purged_session_is_session_purged(store: Backend) -> None:
    operation = operation_of(literal(session_id=purged_session(store)))
    find_rejected(store, operation, SessionPurgedError, "session_purged")


def test_find_unknown_session_comes_before_another_operation(store: Backend) -> None:
    declaration = literal(session_id=new_session(store).id)
    store.begin_run_seed(declaration)
    operation = replace(operation_of(declaration), session_id="sess-never-created")
    find_rejected(store, operation, SessionNotFoundError, "session_not_found")


@pytest.mark.parametrize("field", ["agent_id", "run_id", "command_id"])
def test_find_without_a_required_value_is_invalid_argument(store: Backend, field: str) -> None:
    operation = replace(operation_of(literal()), **{field: ""})
    with pytest.raises(InvalidArgumentError) as info:
        store.find_run_preparation(operation)
    assert info.value.code == "invalid_argument"


def test_find_in_an_ended_session_returns_the_preparation(store: Backend) -> None:
    session = new_session(store)
    prepared = prepare(store, literal(session_id=session.id))
    store.end_session(session.id, at(5))
    assert store.find_run_preparation(operation_of(prepared.declaration)) == prepared.preparation


# --- settle: a published preparation --------------------------------------------------------------


def test_settle_after_publication_returns_the_preparation(store: Backend) -> None:
    prepared = prepare(store)
    operation = operation_of(prepared.declaration)
    assert (
        store.settle_run_preparation(operation, prepared.declaration.attempt_id)
        == prepared.preparation
    )


def test_settle_after_publication_answers_it_whatever_attempt_is_named(store: Backend) -> None:
    prepared = prepare(store)
    operation = operation_of(prepared.declaration)
    assert store.settle_run_preparation(operation, "att-never-begun") == prepared.preparation


def test_settle_after_publication_leaves_the_named_attempt_as_it_is(store: Backend) -> None:
    """The other attempt stays open: it may still append, never publish."""
    waiting = literal()
    store.begin_run_seed(waiting)
    prepared = prepare(store, attempt_of(waiting))
    assert (
        store.settle_run_preparation(operation_of(waiting), waiting.attempt_id)
        == prepared.preparation
    )
    assert store.begin_run_seed(waiting).end_id == "0"
    records = append_chain(store, waiting, [{"messages": msgs()}, {"prepared": b"p"}])
    with pytest.raises(SeedConflictError):
        publish_all(store, waiting, records)


def test_settle_after_publication_of_an_unknown_attempt_leaves_no_tombstone(
    store: Backend,
) -> None:
    """The attempt is "left as it is": never begun, it may still be declared (and then
    refused only because another attempt is published)."""
    prepared = prepare(store)
    late = attempt_of(prepared.declaration)
    assert store.settle_run_preparation(operation_of(late), late.attempt_id) == prepared.preparation
    with pytest.raises(SeedConflictError):
        store.begin_run_seed(late)


# --- settle: abandoning ---------------------------------------------------------------------------


def test_settle_of_an_open_attempt_abandons_it(store: Backend) -> None:
    declaration = literal()
    _, records = begin_and_append(store, declaration)
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    with pytest.raises(PreparationAbandonedError):
        publish_all(store, declaration, records)
    with pytest.raises(PreparationAbandonedError):
        store.append_run_seed(
            declaration.run_id, declaration.attempt_id, messages_record("new", records[-1].id)
        )
    with pytest.raises(PreparationAbandonedError):
        store.begin_run_seed(declaration)


def test_settle_of_an_unknown_attempt_leaves_a_tombstone(store: Backend) -> None:
    declaration = literal()
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    for call in (
        lambda: store.begin_run_seed(declaration),
        lambda: store.append_run_seed(
            declaration.run_id, declaration.attempt_id, messages_record("k", "0")
        ),
        lambda: store.publish_run_seed(declaration.run_id, declaration.attempt_id, "0", "1", 1),
    ):
        with pytest.raises(PreparationAbandonedError) as info:
            call()
        assert info.value.code == "preparation_abandoned"
        assert info.value.status == 409


def test_settle_of_an_unknown_attempt_binds_the_operation(store: Backend) -> None:
    declaration = literal(session_id=new_session(store).id)
    assert store.settle_run_preparation(operation_of(declaration), "att-lost") is None
    for field, other in other_operations(operation_of(declaration), store).items():
        changed = replace(declaration, **{field: getattr(other, field)})
        with pytest.raises(SeedConflictError):
            store.begin_run_seed(changed)
    assert store.begin_run_seed(declaration).declaration == declaration


def test_a_new_attempt_may_begin_append_and_publish_after_a_settlement(store: Backend) -> None:
    declaration = literal()
    begin_and_append(store, declaration)
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    prepared = prepare(store, attempt_of(declaration))
    assert store.find_run_preparation(operation_of(declaration)) == prepared.preparation


def test_settling_again_gives_the_same_answer(store: Backend) -> None:
    declaration = literal()
    begin_and_append(store, declaration)
    operation = operation_of(declaration)
    assert store.settle_run_preparation(operation, declaration.attempt_id) is None
    assert store.settle_run_preparation(operation, declaration.attempt_id) is None
    with pytest.raises(PreparationAbandonedError):
        store.begin_run_seed(declaration)


def test_settling_again_after_publication_gives_the_same_answer(store: Backend) -> None:
    prepared = prepare(store)
    operation = operation_of(prepared.declaration)
    first = store.settle_run_preparation(operation, prepared.declaration.attempt_id)
    assert store.settle_run_preparation(operation, prepared.declaration.attempt_id) == first


def test_settle_after_a_new_attempt_published_answers_that_preparation(store: Backend) -> None:
    declaration = literal()
    operation = operation_of(declaration)
    assert store.settle_run_preparation(operation, declaration.attempt_id) is None
    prepared = prepare(store, attempt_of(declaration))
    assert store.settle_run_preparation(operation, declaration.attempt_id) == prepared.preparation


def test_settle_of_an_open_attempt_leaves_other_open_attempts_open(store: Backend) -> None:
    first = literal()
    begin_and_append(store, first)
    second = attempt_of(first)
    _, records = begin_and_append(store, second)
    assert store.settle_run_preparation(operation_of(first), first.attempt_id) is None
    assert publish_all(store, second, records).seed.declaration == second


# --- settle: checks -------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["agent_id", "session_id", "command_id"])
def test_settle_for_another_operation_is_seed_conflict(store: Backend, field: str) -> None:
    declaration = literal(session_id=new_session(store).id)
    store.begin_run_seed(declaration)
    operation = other_operations(operation_of(declaration), store)[field]
    settle_rejected(
        store,
        operation,
        declaration.attempt_id,
        SeedConflictError,
        "seed_conflict",
        watch=(declaration,),
    )


def test_settle_for_another_operation_of_a_published_seed_is_seed_conflict(
    store: Backend,
) -> None:
    prepared = prepare(store)
    operation = replace(operation_of(prepared.declaration), command_id="cmd-other")
    settle_rejected(
        store,
        operation,
        prepared.declaration.attempt_id,
        SeedConflictError,
        "seed_conflict",
        watch=(prepared,),
    )


def test_a_refused_settlement_abandons_nothing(store: Backend) -> None:
    declaration = literal()
    _, records = begin_and_append(store, declaration)
    operation = replace(operation_of(declaration), command_id="cmd-other")
    settle_rejected(store, operation, declaration.attempt_id, SeedConflictError, "seed_conflict")
    assert publish_all(store, declaration, records).seed.declaration == declaration


def test_settle_in_an_unknown_session_is_session_not_found(store: Backend) -> None:
    operation = operation_of(literal(session_id="sess-never-created"))
    settle_rejected(store, operation, "att-1", SessionNotFoundError, "session_not_found")


def test_settle_in_a_purged_session_is_session_purged(store: Backend) -> None:
    operation = operation_of(literal(session_id=purged_session(store)))
    settle_rejected(store, operation, "att-1", SessionPurgedError, "session_purged")


def test_settle_refused_for_an_unknown_session_binds_nothing(store: Backend) -> None:
    declaration = literal(session_id="sess-never-created")
    settle_rejected(
        store, operation_of(declaration), "att-1", SessionNotFoundError, "session_not_found"
    )
    other = literal(run_id=declaration.run_id)
    assert store.begin_run_seed(other).declaration == other


@pytest.mark.parametrize("field", ["agent_id", "run_id", "command_id", "attempt_id"])
def test_settle_without_a_required_value_is_invalid_argument(store: Backend, field: str) -> None:
    declaration = literal()
    operation = operation_of(declaration)
    attempt_id = "" if field == "attempt_id" else declaration.attempt_id
    if field != "attempt_id":
        operation = replace(operation, **{field: ""})
    with pytest.raises(InvalidArgumentError) as info:
        store.settle_run_preparation(operation, attempt_id)
    assert info.value.code == "invalid_argument"
    # nothing was bound: another operation may still begin
    other = replace(declaration, command_id="cmd-other")
    assert store.begin_run_seed(other).declaration == other


def test_settle_in_an_ended_session_abandons(store: Backend) -> None:
    session = new_session(store)
    declaration = literal(session_id=session.id)
    store.begin_run_seed(declaration)
    store.end_session(session.id, at(5))
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    with pytest.raises(PreparationAbandonedError):
        store.begin_run_seed(declaration)


# --- settlement versus publication ----------------------------------------------------------------


def test_settlement_and_publication_racing_resolve_one_way(store: Backend) -> None:
    declaration = literal()
    _, records = begin_and_append(store, declaration)
    outcome: dict[str, object] = {}

    def publish() -> None:
        try:
            outcome["publish"] = publish_all(store, declaration, records)
        except StoreError as exc:
            outcome["publish"] = exc.code

    def settle() -> None:
        outcome["settle"] = store.settle_run_preparation(
            operation_of(declaration), declaration.attempt_id
        )

    threads = [threading.Thread(target=publish), threading.Thread(target=settle)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if isinstance(outcome["publish"], RunPreparation):
        assert outcome["settle"] == outcome["publish"]
    else:
        assert outcome == {"publish": "preparation_abandoned", "settle": None}
