"""``begin_run_seed`` (CONTRACT.md 15.1 declaration rules, 15.1 command limit, 15.2 begin).

Validation before any state is read, then the command limit, then in one transaction: purge
and session (1), another operation (2), the attempt exists (3: abandoned, changed, or the
exact retry with the current history end), another attempt published (4), the run exists
(5), the source (6), and finally the binding and the open attempt (7).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from runtime_store_client import (
    HistoryPrefix,
    InvalidArgumentError,
    InvalidTranscriptPositionError,
    PayloadTooLargeError,
    PreparationAbandonedError,
    PromptScope,
    RenderedPrompt,
    RunConflictError,
    RunNotFoundError,
    RunRecordOwnerMismatchError,
    RunSeed,
    RunStatus,
    SeedConflictError,
    SeedDeclaration,
    SeedKind,
    SessionNotFoundError,
    SessionPurgedError,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    at,
    canceled_record,
    new_session,
    observe,
    run_start,
    start_root,
    started_record,
)
from tests.contract.seed_builders import (
    COMMAND_LIMIT,
    NEXT_TURN_END,
    attempt_of,
    begin_and_append,
    begin_command_size,
    completed_source,
    continuation,
    expect_seed_rejected,
    finish,
    literal,
    msgs,
    next_turn,
    operation_of,
    prepare,
    seeded,
    sized,
    suspended_source,
    transcript_root,
)


def begin_rejected(
    store: Backend,
    declaration: SeedDeclaration,
    error: type[StoreError],
    code: str,
    *,
    watch: tuple[Any, ...] = (),
) -> StoreError:
    """The begin fails and nothing changed: no run, no seed, the session as it was."""
    session_id = declaration.session_id
    return expect_seed_rejected(
        store,
        lambda: store.begin_run_seed(declaration),
        error,
        code,
        declaration.run_id,
        *filter(None, [declaration.source_run_id]),
        session_id=session_id,
        watch=watch,
    )


def purged_session(store: Backend) -> str:
    session = new_session(store)
    store.end_session(session.id, at(1))
    store.purge_session(session.id)
    return session.id


# --- results --------------------------------------------------------------------------------------


def test_begin_literal_returns_its_declaration_without_source_at_position_zero(
    store: Backend,
) -> None:
    declaration = literal()
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration, source=None, end_id="0"
    )


def test_begin_literal_in_a_session_returns_its_declaration(store: Backend) -> None:
    declaration = literal(session_id=new_session(store).id)
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration, source=None, end_id="0"
    )


def test_begin_next_turn_resolves_source_to_terminal_record_excluding_system(
    store: Backend,
) -> None:
    source = completed_source(store, new_session(store).id)
    declaration = next_turn(source)
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration,
        source=HistoryPrefix(
            run_id=source.run_id, end_id=NEXT_TURN_END, exclude_system=True, exclude_reasoning=False
        ),
        end_id="0",
    )


def test_begin_next_turn_source_carries_the_declarations_exclude_reasoning(
    store: Backend,
) -> None:
    source = completed_source(store, new_session(store).id)
    declaration = next_turn(source, exclude_reasoning=True)
    seed = store.begin_run_seed(declaration)
    assert seed.source == HistoryPrefix(
        run_id=source.run_id, end_id=NEXT_TURN_END, exclude_system=True, exclude_reasoning=True
    )


def test_begin_continuation_resolves_source_to_the_exact_record(store: Backend) -> None:
    source = suspended_source(store, new_session(store).id)
    declaration = continuation(source, "2")
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration,
        source=HistoryPrefix(
            run_id=source.run_id, end_id="2", exclude_system=False, exclude_reasoning=False
        ),
        end_id="0",
    )


@pytest.mark.parametrize("end_id", ["1", "3"])  # run_started, run_suspended
def test_begin_continuation_source_end_may_be_a_record_of_any_type(
    store: Backend, end_id: str
) -> None:
    source = suspended_source(store, new_session(store).id)
    seed = store.begin_run_seed(continuation(source, end_id))
    assert seed.source == HistoryPrefix(run_id=source.run_id, end_id=end_id)


def test_begin_creates_no_run_and_writes_no_record(store: Backend) -> None:
    session = new_session(store)
    source = completed_source(store, session.id)
    before = observe(store, source.run_id, session_id=session.id)
    declaration = next_turn(source)
    store.begin_run_seed(declaration)
    assert observe(store, source.run_id, session_id=session.id) == before
    assert observe(store, declaration.run_id) == [
        "run_not_found",
        "run_not_found",
        "run_not_found",
    ]


def test_begin_in_an_ended_session_is_allowed(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    declaration = literal(session_id=session.id)
    assert store.begin_run_seed(declaration).end_id == "0"


def test_several_attempts_of_one_operation_may_be_open_at_once(store: Backend) -> None:
    first = literal()
    second = attempt_of(first)
    store.begin_run_seed(first)
    assert store.begin_run_seed(second) == RunSeed(declaration=second, source=None, end_id="0")
    assert store.begin_run_seed(first) == RunSeed(declaration=first, source=None, end_id="0")


def test_begin_literal_with_rendered_prompts_returns_them(store: Backend) -> None:
    prompts = (
        RenderedPrompt(prompt_id="system", version="3"),
        RenderedPrompt(
            prompt_id="greeting",
            version="1",
            scope=PromptScope(session_id="sess-x", labels={"tier": "gold", "lang": "fr"}),
        ),
    )
    declaration = literal(rendered_prompts=prompts)
    seed = store.begin_run_seed(declaration)
    assert seed.declaration == declaration
    assert list(seed.declaration.rendered_prompts) == list(prompts)


# --- validation (invalid_argument, before any state is read) --------------------------------------


def _invalid_declarations() -> dict[str, Any]:
    base = literal(run_id="run-v", command_id="cmd-v", attempt_id="att-v")
    nt = SeedDeclaration(
        agent_id="agent-1",
        run_id="run-v",
        session_id="sess-v",
        command_id="cmd-v",
        attempt_id="att-v",
        kind=SeedKind.NEXT_TURN,
        source_run_id="run-src",
    )
    co = replace(nt, kind=SeedKind.CONTINUATION, source_end_id="2")
    return {
        "agent_id empty": replace(base, agent_id=""),
        "run_id empty": replace(base, run_id=""),
        "command_id empty": replace(base, command_id=""),
        "attempt_id empty": replace(base, attempt_id=""),
        "next_turn without session": replace(nt, session_id=""),
        "continuation without session": replace(co, session_id=""),
        "unknown kind": replace(base, kind="resume"),  # type: ignore[arg-type]
        "literal with source_run_id": replace(base, source_run_id="run-src"),
        "literal with source_end_id": replace(base, source_end_id="2"),
        "next_turn without source_run_id": replace(nt, source_run_id=""),
        "next_turn with source_end_id": replace(nt, source_end_id="2"),
        "next_turn source is the run": replace(nt, source_run_id="run-v"),
        "continuation without source_run_id": replace(co, source_run_id=""),
        "continuation without source_end_id": replace(co, source_end_id=""),
        "continuation source is the run": replace(co, source_run_id="run-v"),
        "literal excluding reasoning": replace(base, exclude_reasoning=True),
        "continuation excluding reasoning": replace(co, exclude_reasoning=True),
        "lone surrogate in run_id": replace(base, run_id="run-\ud800"),
        "lone surrogate in a label": replace(
            base,
            rendered_prompts=(
                RenderedPrompt(
                    prompt_id="p", version="1", scope=PromptScope(labels={"k": "\udfff"})
                ),
            ),
        ),
    }


INVALID = _invalid_declarations()


@pytest.mark.parametrize("case", list(INVALID))
def test_begin_declaration_breaking_a_field_rule_is_invalid_argument(
    store: Backend, case: str
) -> None:
    declaration = INVALID[case]
    with pytest.raises(InvalidArgumentError) as info:
        store.begin_run_seed(declaration)
    assert info.value.code == "invalid_argument"
    assert info.value.status == 422


def test_begin_validation_comes_before_the_purge_check(store: Backend) -> None:
    session_id = purged_session(store)
    declaration = replace(literal(session_id=session_id), command_id="")
    begin_rejected(store, declaration, InvalidArgumentError, "invalid_argument")


def test_begin_validation_comes_before_the_command_limit(store: Backend) -> None:
    big = big_declaration(COMMAND_LIMIT + 1)
    begin_rejected(store, replace(big, attempt_id=""), InvalidArgumentError, "invalid_argument")


def test_next_turn_may_exclude_reasoning(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    assert store.begin_run_seed(next_turn(source, exclude_reasoning=True)).end_id == "0"


# --- the command limit (15.1) ---------------------------------------------------------------------


def big_declaration(size: int, filler: str = "x", **changes: Any) -> SeedDeclaration:
    """A literal declaration whose canonical begin command is exactly ``size`` bytes;
    ``filler`` (one character) fills a label value, adjusted by single "x"s."""
    base = literal(**changes)
    unit = len(filler.encode()) + (1 if filler in '"\\' else 0)

    def build(n: int) -> SeedDeclaration:
        value = filler * (n // unit) + "x" * (n % unit)
        scope = PromptScope(labels={"big": value})
        return replace(
            base, rendered_prompts=(RenderedPrompt(prompt_id="p", version="1", scope=scope),)
        )

    return sized(build, begin_command_size, size)


def test_begin_command_of_exactly_one_million_bytes_is_accepted(store: Backend) -> None:
    declaration = big_declaration(COMMAND_LIMIT)
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration, source=None, end_id="0"
    )


def test_begin_command_of_one_million_and_one_bytes_is_payload_too_large(
    store: Backend,
) -> None:
    declaration = big_declaration(COMMAND_LIMIT + 1)
    begin_rejected(store, declaration, PayloadTooLargeError, "payload_too_large")


def test_begin_command_limit_counts_json_escapes(store: Backend) -> None:
    """Quotes are escaped in the canonical encoding: 2 bytes each."""
    declaration = big_declaration(COMMAND_LIMIT + 1, filler='"')
    value = declaration.rendered_prompts[0].scope.labels["big"]
    assert len(value) < COMMAND_LIMIT // 2 + 1
    begin_rejected(store, declaration, PayloadTooLargeError, "payload_too_large")


def test_begin_command_limit_counts_escaped_quotes_exactly(store: Backend) -> None:
    declaration = big_declaration(COMMAND_LIMIT, filler='"')
    assert store.begin_run_seed(declaration).declaration == declaration


def test_begin_command_limit_counts_utf8_bytes_not_the_spelling_sent(store: Backend) -> None:
    """Non-ASCII text counts its UTF-8 bytes, however a client escapes it on the wire."""
    declaration = big_declaration(COMMAND_LIMIT, filler="é")
    assert store.begin_run_seed(declaration).declaration == declaration
    too_big = big_declaration(COMMAND_LIMIT + 1, filler="é")
    begin_rejected(store, too_big, PayloadTooLargeError, "payload_too_large")


def test_begin_command_limit_comes_before_any_state_is_read(store: Backend) -> None:
    declaration = big_declaration(COMMAND_LIMIT + 1, session_id=purged_session(store))
    begin_rejected(store, declaration, PayloadTooLargeError, "payload_too_large")


# --- step 1: purge and session --------------------------------------------------------------------


def test_begin_in_an_unknown_session_is_session_not_found(store: Backend) -> None:
    declaration = literal(session_id="sess-never-created")
    begin_rejected(store, declaration, SessionNotFoundError, "session_not_found")


def test_begin_in_a_purged_session_is_session_purged(store: Backend) -> None:
    declaration = literal(session_id=purged_session(store))
    begin_rejected(store, declaration, SessionPurgedError, "session_purged")


def test_begin_of_a_run_id_of_a_purged_run_is_session_purged(store: Backend) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    finish(store, run, RunStatus.COMPLETED)
    store.end_session(session.id, at(50))
    store.purge_session(session.id)
    for declaration in (
        literal(run_id=run.run_id),
        literal(run_id=run.run_id, session_id=new_session(store).id),
    ):
        begin_rejected(store, declaration, SessionPurgedError, "session_purged")


def test_begin_unknown_session_comes_before_another_operation(store: Backend) -> None:
    bound = literal(session_id=new_session(store).id)
    store.begin_run_seed(bound)
    declaration = replace(attempt_of(bound), session_id="sess-never-created")
    begin_rejected(store, declaration, SessionNotFoundError, "session_not_found", watch=(bound,))


def test_begin_unknown_session_comes_before_an_existing_run(store: Backend) -> None:
    run = start_root(store, new_session(store).id).run
    declaration = literal(run_id=run.run_id, session_id="sess-never-created")
    begin_rejected(store, declaration, SessionNotFoundError, "session_not_found")


# --- step 2: the run ID bound to another operation ------------------------------------------------


@pytest.mark.parametrize("field", ["agent_id", "session_id", "command_id"])
def test_begin_of_a_run_id_bound_to_another_operation_is_seed_conflict(
    store: Backend, field: str
) -> None:
    first = literal(session_id=new_session(store).id)
    store.begin_run_seed(first)
    other = {"agent_id": "agent-2", "session_id": new_session(store).id, "command_id": "cmd-2"}
    declaration = replace(attempt_of(first), **{field: other[field]})  # type: ignore[arg-type]
    begin_rejected(store, declaration, SeedConflictError, "seed_conflict", watch=(first,))


def test_begin_same_attempt_of_another_operation_is_seed_conflict(store: Backend) -> None:
    first = literal()
    store.begin_run_seed(first)
    declaration = replace(first, command_id="cmd-other")
    begin_rejected(store, declaration, SeedConflictError, "seed_conflict", watch=(first,))


def test_begin_another_operation_comes_before_an_abandoned_attempt(store: Backend) -> None:
    declaration = literal()
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    other = replace(declaration, command_id="cmd-other")
    begin_rejected(store, other, SeedConflictError, "seed_conflict")


def test_begin_another_operation_comes_before_an_existing_run(store: Backend) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    bound = literal(run_id=run.run_id, session_id=session.id)
    assert store.settle_run_preparation(operation_of(bound), "att-lost") is None
    other = replace(bound, command_id="cmd-other")
    begin_rejected(store, other, SeedConflictError, "seed_conflict")
    begin_rejected(store, bound, RunConflictError, "run_conflict")


# --- step 3: the attempt exists -------------------------------------------------------------------


def test_begin_exact_retry_returns_the_stored_seed_with_its_current_history_end(
    store: Backend,
) -> None:
    declaration = literal()
    begin_and_append(
        store, declaration, [{"messages": msgs("a")}, {"messages": msgs("b")}], [b"x", b"y"]
    )
    assert store.begin_run_seed(declaration) == RunSeed(
        declaration=declaration, source=None, end_id="2"
    )


def test_begin_exact_retry_of_a_next_turn_keeps_its_resolved_source(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    declaration = next_turn(source)
    first = store.begin_run_seed(declaration)
    assert store.begin_run_seed(declaration) == first


def test_begin_exact_retry_after_publication_returns_the_published_history_end(
    store: Backend,
) -> None:
    prepared = prepare(store, literal(), [{"messages": msgs("a")}], [b"compiled"])
    assert store.begin_run_seed(prepared.declaration) == prepared.preparation.seed
    assert prepared.preparation.seed.end_id == "1"


def test_begin_exact_retry_after_the_run_started_succeeds(store: Backend) -> None:
    session = new_session(store)
    prepared = prepare(store, literal(session_id=session.id))
    run = seeded(run_start(run_id=prepared.run_id, session_id=session.id), prepared)
    store.start_root_run(run, started_record(run), canceled_record(run))
    assert store.begin_run_seed(prepared.declaration) == prepared.preparation.seed


def test_begin_exact_retry_after_the_session_ended_succeeds(store: Backend) -> None:
    session = new_session(store)
    declaration = literal(session_id=session.id)
    first = store.begin_run_seed(declaration)
    store.end_session(session.id, at(1))
    assert store.begin_run_seed(declaration) == first


def test_begin_retry_with_prompt_labels_in_another_order_is_an_exact_retry(
    store: Backend,
) -> None:
    def declared(labels: dict[str, str]) -> SeedDeclaration:
        scope = PromptScope(labels=labels)
        return replace(
            base, rendered_prompts=(RenderedPrompt(prompt_id="p", version="1", scope=scope),)
        )

    base = literal()
    first = store.begin_run_seed(declared({"a": "1", "b": "2"}))
    assert store.begin_run_seed(declared({"b": "2", "a": "1"})) == first


def test_begin_retry_with_absent_and_empty_rendered_prompts_is_an_exact_retry(
    store: Backend,
) -> None:
    declaration = literal()
    first = store.begin_run_seed(declaration)
    assert store.begin_run_seed(replace(declaration, rendered_prompts=[])) == first


def _changed_declarations() -> dict[str, Any]:
    p1 = RenderedPrompt(prompt_id="p1", version="1")
    p2 = RenderedPrompt(prompt_id="p2", version="1")
    return {
        "prompt added": ((p1,), (p1, p2)),
        "prompts reordered": ((p1, p2), (p2, p1)),
        "prompt version": ((p1,), (replace(p1, version="2"),)),
        "prompt scope session": ((p1,), (replace(p1, scope=PromptScope(session_id="s")),)),
        "prompt scope label": (
            (replace(p1, scope=PromptScope(labels={"a": "1"})),),
            (replace(p1, scope=PromptScope(labels={"a": "2"})),),
        ),
    }


CHANGED = _changed_declarations()


@pytest.mark.parametrize("case", list(CHANGED))
def test_begin_retry_with_a_changed_declaration_is_seed_conflict(store: Backend, case: str) -> None:
    before, after = CHANGED[case]
    declaration = literal(rendered_prompts=before)
    store.begin_run_seed(declaration)
    changed = replace(declaration, rendered_prompts=after)
    begin_rejected(store, changed, SeedConflictError, "seed_conflict", watch=(declaration,))


def test_begin_retry_changing_exclude_reasoning_is_seed_conflict(store: Backend) -> None:
    source = completed_source(store, new_session(store).id)
    declaration = next_turn(source)
    store.begin_run_seed(declaration)
    changed = replace(declaration, exclude_reasoning=True)
    begin_rejected(store, changed, SeedConflictError, "seed_conflict", watch=(declaration,))


def test_begin_retry_changing_the_continuation_position_is_seed_conflict(
    store: Backend,
) -> None:
    source = suspended_source(store, new_session(store).id)
    declaration = continuation(source, "2")
    store.begin_run_seed(declaration)
    changed = replace(declaration, source_end_id="1")
    begin_rejected(store, changed, SeedConflictError, "seed_conflict", watch=(declaration,))


def test_begin_retry_changing_the_kind_is_seed_conflict(store: Backend) -> None:
    session = new_session(store)
    source = completed_source(store, session.id)
    declaration = literal(session_id=session.id)
    store.begin_run_seed(declaration)
    changed = replace(declaration, kind=SeedKind.NEXT_TURN, source_run_id=source.run_id)
    begin_rejected(store, changed, SeedConflictError, "seed_conflict", watch=(declaration,))


def test_begin_retry_of_an_abandoned_attempt_is_preparation_abandoned(store: Backend) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    begin_rejected(store, declaration, PreparationAbandonedError, "preparation_abandoned")


def test_begin_of_a_settled_attempt_never_begun_is_preparation_abandoned(
    store: Backend,
) -> None:
    declaration = literal()
    assert store.settle_run_preparation(operation_of(declaration), declaration.attempt_id) is None
    begin_rejected(store, declaration, PreparationAbandonedError, "preparation_abandoned")


def test_begin_abandoned_comes_before_a_changed_declaration(store: Backend) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    changed = replace(declaration, rendered_prompts=(RenderedPrompt(prompt_id="p", version="1"),))
    begin_rejected(store, changed, PreparationAbandonedError, "preparation_abandoned")


def test_begin_exact_retry_comes_before_another_published_attempt(store: Backend) -> None:
    waiting = literal()
    first = store.begin_run_seed(waiting)
    prepare(store, attempt_of(waiting))
    assert store.begin_run_seed(waiting) == first


# --- step 4: another attempt published ------------------------------------------------------------


def test_begin_new_attempt_after_another_was_published_is_seed_conflict(store: Backend) -> None:
    prepared = prepare(store)
    begin_rejected(
        store,
        attempt_of(prepared.declaration),
        SeedConflictError,
        "seed_conflict",
        watch=(prepared,),
    )


def test_begin_published_attempt_comes_before_the_existing_run(store: Backend) -> None:
    prepared = prepare(store)
    run = seeded(run_start(run_id=prepared.run_id), prepared)
    store.start_one_shot_run(run, started_record(run))
    begin_rejected(
        store,
        attempt_of(prepared.declaration),
        SeedConflictError,
        "seed_conflict",
        watch=(prepared,),
    )


# --- step 5: the run exists -----------------------------------------------------------------------


def _existing_run(store: Backend, how: str) -> tuple[str, str]:
    """A run started by ``how``; returns its run ID and a session for the declaration."""
    session = new_session(store)
    if how == "root in the session":
        return start_root(store, session.id).run.run_id, session.id
    if how == "root in another session":
        return start_root(store, new_session(store).id).run.run_id, session.id
    run = run_start()
    if how == "one-shot":
        store.start_one_shot_run(run, started_record(run))
    else:
        store.start_synchronous_run(run, started_record(run))
    return run.run_id, ""


@pytest.mark.parametrize(
    "how", ["root in the session", "root in another session", "one-shot", "synchronous"]
)
def test_begin_of_an_existing_run_id_is_run_conflict(store: Backend, how: str) -> None:
    run_id, session_id = _existing_run(store, how)
    declaration = literal(run_id=run_id, session_id=session_id)
    begin_rejected(store, declaration, RunConflictError, "run_conflict")


def test_begin_existing_run_comes_before_the_source_check(store: Backend) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    declaration = replace(
        next_turn(run_start(run_id="run-never-started", session_id=session.id)),
        run_id=run.run_id,
    )
    begin_rejected(store, declaration, RunConflictError, "run_conflict")


def test_refused_begin_of_an_existing_run_binds_nothing(store: Backend) -> None:
    session = new_session(store)
    run = start_root(store, session.id).run
    declaration = literal(run_id=run.run_id, session_id=session.id)
    begin_rejected(store, declaration, RunConflictError, "run_conflict")
    other = replace(attempt_of(declaration), command_id="cmd-other")
    begin_rejected(store, other, RunConflictError, "run_conflict")


# --- step 6: the source ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["next_turn", "continuation"])
def test_begin_from_an_unknown_source_is_run_not_found(store: Backend, kind: str) -> None:
    session = new_session(store)
    ghost = run_start(run_id="run-never-started", session_id=session.id)
    declaration = next_turn(ghost) if kind == "next_turn" else continuation(ghost, "1")
    begin_rejected(store, declaration, RunNotFoundError, "run_not_found")


@pytest.mark.parametrize("kind", ["next_turn", "continuation"])
def test_begin_from_a_source_of_another_agent_is_run_record_owner_mismatch(
    store: Backend, kind: str
) -> None:
    session = new_session(store)
    if kind == "next_turn":
        source = completed_source(store, session.id)
        declaration = next_turn(source, agent_id="agent-2")
    else:
        source = suspended_source(store, session.id)
        declaration = continuation(source, agent_id="agent-2")
    begin_rejected(store, declaration, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


@pytest.mark.parametrize("kind", ["next_turn", "continuation"])
def test_begin_from_a_source_of_another_session_is_run_record_owner_mismatch(
    store: Backend, kind: str
) -> None:
    other = new_session(store)
    if kind == "next_turn":
        source = completed_source(store, new_session(store).id)
        declaration = next_turn(source, session_id=other.id)
    else:
        source = suspended_source(store, new_session(store).id)
        declaration = continuation(source, session_id=other.id)
    begin_rejected(store, declaration, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


def test_begin_from_a_sessionless_source_is_run_record_owner_mismatch(store: Backend) -> None:
    run = run_start()
    store.start_one_shot_run(run, started_record(run))
    finish(store, run, RunStatus.COMPLETED)
    declaration = next_turn(run, session_id=new_session(store).id)
    begin_rejected(store, declaration, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


@pytest.mark.parametrize(
    "status",
    [RunStatus.RUNNING, RunStatus.SUSPENDED, RunStatus.FAILED, RunStatus.CANCELED],
)
def test_begin_next_turn_from_a_source_not_completed_is_run_conflict_naming_its_status(
    store: Backend, status: RunStatus
) -> None:
    session = new_session(store)
    if status is RunStatus.SUSPENDED:
        source = suspended_source(store, session.id)
    else:
        source = transcript_root(store, session.id)
        if status is not RunStatus.RUNNING:
            finish(store, source, status)
    error = begin_rejected(store, next_turn(source), RunConflictError, "run_conflict")
    assert str(status) in error.message


@pytest.mark.parametrize("status", [RunStatus.RUNNING, RunStatus.COMPLETED, RunStatus.FAILED])
def test_begin_continuation_from_a_source_not_suspended_is_run_conflict_naming_its_status(
    store: Backend, status: RunStatus
) -> None:
    source = transcript_root(store, new_session(store).id)
    if status is not RunStatus.RUNNING:
        finish(store, source, status)
    error = begin_rejected(store, continuation(source, "2"), RunConflictError, "run_conflict")
    assert str(status) in error.message


@pytest.mark.parametrize("end_id", ["0", "02", "4", "99", "x", "-1"])
def test_begin_continuation_at_a_position_not_of_the_source_is_invalid_transcript_position(
    store: Backend, end_id: str
) -> None:
    source = suspended_source(store, new_session(store).id)  # records 1..3
    declaration = continuation(source, end_id)
    begin_rejected(
        store, declaration, InvalidTranscriptPositionError, "invalid_transcript_position"
    )


def test_begin_source_owner_comes_before_its_status(store: Backend) -> None:
    source = transcript_root(store, new_session(store).id)  # running: wrong status too
    declaration = next_turn(source, agent_id="agent-2")
    begin_rejected(store, declaration, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


def test_begin_source_status_comes_before_its_position(store: Backend) -> None:
    source = transcript_root(store, new_session(store).id)  # running, records 1..2
    declaration = continuation(source, "0")
    begin_rejected(store, declaration, RunConflictError, "run_conflict")


def test_begin_next_turn_source_end_is_the_remembered_terminal_record(store: Backend) -> None:
    """Records written to the source after its terminal do not move the resolved end."""
    session = new_session(store)
    source = start_root(store, session.id).run  # 1 run_started
    finish(store, source, RunStatus.COMPLETED)  # 2 run_completed
    seed = store.begin_run_seed(next_turn(source))
    assert seed.source is not None
    assert seed.source.end_id == "2"
    assert [r.id for r in all_records(store, source.run_id)][-1] == "2"


# --- step 7: binding ------------------------------------------------------------------------------


def test_begin_binds_the_operation(store: Backend) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    other = replace(attempt_of(declaration), command_id="cmd-other")
    begin_rejected(store, other, SeedConflictError, "seed_conflict", watch=(declaration,))


def test_a_refused_begin_reserves_nothing(store: Backend) -> None:
    session = new_session(store)
    ghost = run_start(run_id="run-never-started", session_id=session.id)
    refused = next_turn(ghost)
    begin_rejected(store, refused, RunNotFoundError, "run_not_found")
    other = literal(run_id=refused.run_id, session_id=session.id, command_id="cmd-other")
    assert store.begin_run_seed(other).declaration == other


def test_a_refused_begin_leaves_an_earlier_binding(store: Backend) -> None:
    declaration = literal()
    store.begin_run_seed(declaration)
    refused = replace(attempt_of(declaration), session_id="sess-never-created")
    begin_rejected(store, refused, SessionNotFoundError, "session_not_found")
    other = replace(attempt_of(declaration), command_id="cmd-other")
    begin_rejected(store, other, SeedConflictError, "seed_conflict")
    assert store.begin_run_seed(attempt_of(declaration)).end_id == "0"
