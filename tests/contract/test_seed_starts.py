"""Starts with a seed (CONTRACT.md 15.5, with 15.1 attachment and 15.6's unchanged lists).

The seed check runs in every start (root 3.3, child 3.4, one-shot 3.5, one-shot child 3.6,
synchronous 12.2) right after the session's purge check and before the continuation
check, the retry path and the digest comparison; ``seed_end_id`` joins the identity every
retry compares; ``RunMeta.seed_end_id`` records what the first start named.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import (
    AppendResult,
    RunConflictError,
    RunRecordOwnerMismatchError,
    RunStart,
    RunStartOutcome,
    RunStatus,
    SeedConflictError,
    SeedNotFoundError,
    SeedNotPublishedError,
    SessionPurgedError,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    at,
    canceled_record,
    checkpoint,
    expect_rejected,
    link_record,
    new_session,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)
from tests.contract.seed_builders import (
    AGENT,
    Prepared,
    attempt_of,
    begin_and_append,
    completed_source,
    continuation,
    literal,
    next_turn,
    operation_of,
    prepare,
    seeded,
    suspended_source,
)

KINDS = ["root", "child", "one_shot", "one_shot_child", "synchronous"]
ENGINE_KINDS = ["root", "child", "one_shot", "one_shot_child"]
SESSIONFUL = ["root", "child"]
SESSIONLESS = ["one_shot", "one_shot_child", "synchronous"]
DIGEST = bytes(range(1, 33))
OTHER_DIGEST = bytes(range(2, 34))


@dataclass(frozen=True)
class Ctx:
    """Where a start of one kind happens: its session ("" for sessionless) and parent."""

    kind: str
    session_id: str
    parent: RunStart | None

    def run(self, run_id: str | None = None, **changes: Any) -> RunStart:
        run = run_start(
            run_id=run_id or uid("run"),
            agent_id=AGENT,
            session_id=self.session_id,
            parent_run_id=self.parent.run_id if self.parent else "",
        )
        return replace(run, **changes)

    def declaration(self, run_id: str | None = None, **changes: Any) -> Any:
        return literal(run_id=run_id, session_id=self.session_id, **changes)

    def runs(self, run: RunStart) -> tuple[str, ...]:
        """Run IDs a start of this kind may write to (the parent holds the link)."""
        return (run.run_id, *([self.parent.run_id] if self.parent else []))


def context(store: Backend, kind: str, *, session_id: str | None = None) -> Ctx:
    if kind in SESSIONFUL:
        session = session_id or new_session(store).id
        parent = (
            start_root(store, session, agent_id="agent-parent").run if kind == "child" else None
        )
        return Ctx(kind, session, parent)
    parent = None
    if kind == "one_shot_child":
        parent = run_start(agent_id="agent-parent")
        store.start_one_shot_run(parent, started_record(parent))
    return Ctx(kind, "", parent)


def send(store: Backend, ctx: Ctx, run: RunStart, *, digest: bytes | None = None) -> Any:
    extra = {} if digest is None else {"request_digest": digest}
    if ctx.kind == "root":
        return store.start_root_run(run, started_record(run), canceled_record(run), **extra)
    if ctx.kind == "child":
        assert ctx.parent is not None
        return store.start_child_run(
            run, link_record(ctx.parent, run), started_record(run), canceled_record(run), **extra
        )
    if ctx.kind == "one_shot":
        return store.start_one_shot_run(run, started_record(run), **extra)
    if ctx.kind == "one_shot_child":
        assert ctx.parent is not None
        return store.start_one_shot_child_run(
            run, link_record(ctx.parent, run), started_record(run), **extra
        )
    assert digest is None
    return store.start_synchronous_run(run, started_record(run))


def appended(result: Any) -> list[AppendResult]:
    """The append results a start answered (link, run_started, stop path's run_completed)."""
    values = (getattr(result, f.name) for f in fields(result))
    return [v for v in values if isinstance(v, AppendResult)]


def start_rejected(
    store: Backend, ctx: Ctx, run: RunStart, error: type[StoreError], code: str, **kw: Any
) -> StoreError:
    return expect_rejected(
        store,
        lambda: send(store, ctx, run, **kw),
        error,
        code,
        *ctx.runs(run),
        session_id=ctx.session_id,
    )


def prepared_for(store: Backend, ctx: Ctx, **changes: Any) -> Prepared:
    return prepare(store, ctx.declaration(**changes))


# --- attaching a seed, on all five starts ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_naming_the_published_history_end_attaches_the_seed(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    meta = store.load_run(run.run_id)
    assert meta.seed_end_id == prepared.seed_end_id == "1"
    assert meta.status is RunStatus.RUNNING


@pytest.mark.parametrize("kind", KINDS)
def test_a_seeded_runs_own_records_begin_at_one_with_its_run_started(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    assert all_records(store, run.run_id) == [replace(started_record(run), id="1")]


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_without_seed_stores_an_empty_seed_end_id(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    run = ctx.run()
    send(store, ctx, run)
    assert store.load_run(run.run_id).seed_end_id == ""


@pytest.mark.parametrize("kind", KINDS)
def test_a_seed_with_an_empty_history_attaches_at_position_zero(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepare(store, ctx.declaration(), [], [b"start"])
    run = seeded(ctx.run(prepared.run_id), "0")
    send(store, ctx, run)
    assert store.load_run(run.run_id).seed_end_id == "0"


# --- the seed check refuses -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_with_a_seed_of_a_run_id_without_seed_is_seed_not_found(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    start_rejected(store, ctx, seeded(ctx.run(), "1"), SeedNotFoundError, "seed_not_found")


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_with_a_seed_only_settled_is_seed_not_found(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    declaration = ctx.declaration()
    store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    run = seeded(ctx.run(declaration.run_id), "1")
    start_rejected(store, ctx, run, SeedNotFoundError, "seed_not_found")


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_with_a_seed_not_published_is_seed_not_published(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    declaration = ctx.declaration()
    begin_and_append(store, declaration)
    run = seeded(ctx.run(declaration.run_id), "1")
    start_rejected(store, ctx, run, SeedNotPublishedError, "seed_not_published")


@pytest.mark.parametrize("end", ["0", "2", "01", "x"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_start_naming_another_position_than_the_history_end_is_seed_conflict(
    store: Backend, kind: str, end: str
) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)  # history end "1", body end "2"
    run = seeded(ctx.run(prepared.run_id), end)
    start_rejected(store, ctx, run, SeedConflictError, "seed_conflict")


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_of_another_agent_than_the_seeds_is_run_record_owner_mismatch(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx, agent_id="agent-seeded")
    run = seeded(ctx.run(prepared.run_id), prepared)
    start_rejected(store, ctx, run, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


@pytest.mark.parametrize("kind", KINDS)
def test_a_start_in_another_session_than_the_seeds_is_run_record_owner_mismatch(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    other_session = "" if kind in SESSIONFUL else new_session(store).id
    prepared = prepare(store, literal(session_id=other_session))
    run = seeded(ctx.run(prepared.run_id), prepared)
    start_rejected(store, ctx, run, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


@pytest.mark.parametrize("kind", SESSIONFUL)
def test_a_start_in_a_third_session_is_run_record_owner_mismatch(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepare(store, literal(session_id=new_session(store).id))
    run = seeded(ctx.run(prepared.run_id), prepared)
    start_rejected(store, ctx, run, RunRecordOwnerMismatchError, "run_record_owner_mismatch")


@pytest.mark.parametrize("how", ["begun", "settled", "published"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_new_start_without_seed_on_a_seed_bound_run_id_is_seed_conflict(
    store: Backend, kind: str, how: str
) -> None:
    ctx = context(store, kind)
    declaration = ctx.declaration()
    if how == "begun":
        store.begin_run_seed(declaration)
    elif how == "settled":
        store.settle_run_preparation(operation_of(declaration), declaration.attempt_id)
    else:
        prepare(store, declaration)
    start_rejected(store, ctx, ctx.run(declaration.run_id), SeedConflictError, "seed_conflict")


# --- the order of the checks ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", SESSIONFUL)
def test_the_session_purge_check_comes_before_the_seed_check(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    if ctx.parent is not None:
        store.record_run_terminal(
            ctx.parent.run_id,
            RunStatus.COMPLETED,
            terminal_record(ctx.parent, RunStatus.COMPLETED),
        )
    store.end_session(ctx.session_id, at(1))
    store.purge_session(ctx.session_id)
    run = seeded(ctx.run(), "1")
    start_rejected(store, ctx, run, SessionPurgedError, "session_purged")


@pytest.mark.parametrize("kind", SESSIONFUL)
def test_the_seed_check_comes_before_the_continuation_check(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    run = seeded(ctx.run(predecessor_run_id="run-never-started"), "1")
    start_rejected(store, ctx, run, SeedNotFoundError, "seed_not_found")


@pytest.mark.parametrize("kind", KINDS)
def test_the_seed_check_comes_before_the_retry_path(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    changed = replace(run, labels={"changed": "yes"}, seed_end_id="2")
    start_rejected(store, ctx, changed, SeedConflictError, "seed_conflict")


@pytest.mark.parametrize("kind", ENGINE_KINDS)
def test_the_seed_check_comes_before_the_digest_comparison(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run, digest=DIGEST)
    changed = replace(run, seed_end_id="2")
    start_rejected(store, ctx, changed, SeedConflictError, "seed_conflict", digest=OTHER_DIGEST)


@pytest.mark.parametrize("kind", KINDS)
def test_the_seed_check_comes_before_the_run_conflict_of_an_existing_run(
    store: Backend, kind: str
) -> None:
    """A run ID taken by an unseeded run of another session: its seed is not found first."""
    ctx = context(store, kind)
    other = start_root(store, new_session(store).id).run
    run = seeded(ctx.run(other.run_id), "1")
    start_rejected(store, ctx, run, SeedNotFoundError, "seed_not_found")


# --- retries --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_an_exact_retry_of_a_seeded_start_answers_the_original(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    first = send(store, ctx, run)
    meta = store.load_run(run.run_id)
    retry = send(store, ctx, run)
    assert type(retry) is type(first)
    assert appended(retry) == [replace(a, inserted=False) for a in appended(first)]
    assert all(a.inserted for a in appended(first))
    assert store.load_run(run.run_id) == meta


@pytest.mark.parametrize("kind", KINDS)
def test_a_retry_leaving_out_the_seed_is_run_conflict(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    start_rejected(store, ctx, replace(run, seed_end_id=""), RunConflictError, "run_conflict")


@pytest.mark.parametrize("kind", KINDS)
def test_a_retry_naming_a_seed_for_a_run_started_without_one_is_seed_not_found(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    run = ctx.run()
    send(store, ctx, run)
    start_rejected(store, ctx, seeded(run, "1"), SeedNotFoundError, "seed_not_found")


@pytest.mark.parametrize("kind", ENGINE_KINDS)
def test_an_exact_retry_with_the_digest_passes_the_seed_check(store: Backend, kind: str) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    first = send(store, ctx, run, digest=DIGEST)
    assert type(send(store, ctx, run, digest=DIGEST)) is type(first)
    assert store.load_run(run.run_id).seed_end_id == prepared.seed_end_id


def test_a_closed_run_replay_with_the_stored_digest_passes_the_seed_check(
    store: Backend,
) -> None:
    ctx = context(store, "root")
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    first = send(store, ctx, run, digest=DIGEST)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    replay = replace(run, started_at=at(500))
    result = send(store, ctx, replay, digest=DIGEST)
    assert result.outcome == first.outcome
    assert result.run_status is RunStatus.COMPLETED
    assert result.started.id == first.started.id
    assert result.started.inserted is False


def test_a_closed_run_replay_leaving_out_the_seed_is_run_conflict(store: Backend) -> None:
    ctx = context(store, "root")
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run, digest=DIGEST)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    replay = replace(run, started_at=at(500), seed_end_id="")
    start_rejected(store, ctx, replay, RunConflictError, "run_conflict", digest=DIGEST)


def test_an_unseeded_retry_of_an_unseeded_run_is_as_before(store: Backend) -> None:
    ctx = context(store, "root")
    run = ctx.run()
    first = send(store, ctx, run)
    assert send(store, ctx, run).started == replace(first.started, inserted=False)


# --- the stop path, lists and search --------------------------------------------------------------


def test_the_stop_path_of_an_ended_session_stores_the_seed(store: Backend) -> None:
    session = new_session(store)
    store.end_session(session.id, at(1))
    ctx = Ctx("root", session.id, None)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    result = send(store, ctx, run)
    assert result.outcome is RunStartOutcome.STOP
    meta = store.load_run(run.run_id)
    assert (meta.status, meta.seed_end_id) == (RunStatus.CANCELED, prepared.seed_end_id)


def test_the_stop_path_of_a_child_stores_the_seed(store: Backend) -> None:
    ctx = context(store, "child")
    prepared = prepared_for(store, ctx)
    store.end_session(ctx.session_id, at(1))
    run = seeded(ctx.run(prepared.run_id), prepared)
    assert send(store, ctx, run).outcome is RunStartOutcome.STOP
    assert store.load_run(run.run_id).seed_end_id == prepared.seed_end_id


def test_seed_end_id_appears_in_the_session_run_list(store: Backend) -> None:
    ctx = context(store, "root")
    prepared = prepared_for(store, ctx)
    seeded_run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, seeded_run)
    plain = ctx.run()
    send(store, ctx, plain)
    runs = {m.run_id: m for m in store.list_session_runs(ctx.session_id).runs}
    assert runs[seeded_run.run_id].seed_end_id == prepared.seed_end_id
    assert runs[plain.run_id].seed_end_id == ""
    assert runs[seeded_run.run_id] == store.load_run(seeded_run.run_id)


def test_seed_end_id_appears_in_search_results(store: Backend) -> None:
    ctx = context(store, "one_shot")
    prepared = prepare(store, literal(agent_id="agent-searched"))
    run = seeded(ctx.run(prepared.run_id, agent_id="agent-searched"), prepared)
    send(store, ctx, run)
    found = store.search_runs(agent_id="agent-searched").runs
    assert [(m.run_id, m.seed_end_id) for m in found] == [(run.run_id, prepared.seed_end_id)]


def test_a_seeded_runs_records_stay_out_of_the_session_list(store: Backend) -> None:
    from tests.contract.builders import all_session_records

    ctx = context(store, "root")
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    assert [(r.run_id, r.type) for r in all_session_records(store, ctx.session_id)] == [
        (run.run_id, "run_started")
    ]


def test_a_seeded_run_keeps_its_seed_through_its_life(store: Backend) -> None:
    ctx = context(store, "root")
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    meta = store.load_run(run.run_id)
    assert meta.seed_end_id == prepared.seed_end_id
    assert store.load_run_seed(run.run_id, meta.seed_end_id) == prepared.preparation.seed


# --- next_turn and continuation seeds -------------------------------------------------------------


def test_a_next_turn_seed_attaches_to_a_root_start(store: Backend) -> None:
    session = new_session(store)
    source = completed_source(store, session.id)
    prepared = prepare(store, next_turn(source))
    run = seeded(run_start(run_id=prepared.run_id, session_id=session.id), prepared)
    assert send(store, Ctx("root", session.id, None), run).outcome is RunStartOutcome.PROCEED


def _continuation_setup(store: Backend) -> tuple[str, RunStart, Prepared]:
    session = new_session(store)
    predecessor = suspended_source(store, session.id)
    prepared = prepare(store, continuation(predecessor, "3"))
    return session.id, predecessor, prepared


def test_a_continuation_seed_attaches_to_the_continuation_of_its_source(store: Backend) -> None:
    session_id, predecessor, prepared = _continuation_setup(store)
    run = seeded(
        run_start(
            run_id=prepared.run_id, session_id=session_id, predecessor_run_id=predecessor.run_id
        ),
        prepared,
    )
    send(store, Ctx("root", session_id, None), run)
    assert store.load_run(run.run_id).seed_end_id == prepared.seed_end_id
    assert store.load_run(predecessor.run_id).successor_run_id == run.run_id


def test_a_continuation_seed_on_a_start_without_predecessor_is_seed_conflict(
    store: Backend,
) -> None:
    session_id, _, prepared = _continuation_setup(store)
    ctx = Ctx("root", session_id, None)
    run = seeded(ctx.run(prepared.run_id), prepared)
    start_rejected(store, ctx, run, SeedConflictError, "seed_conflict")


def test_a_continuation_start_with_a_seed_that_is_not_a_continuation_is_seed_conflict(
    store: Backend,
) -> None:
    session = new_session(store)
    predecessor = suspended_source(store, session.id)
    ctx = Ctx("root", session.id, None)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id, predecessor_run_id=predecessor.run_id), prepared)
    start_rejected(store, ctx, run, SeedConflictError, "seed_conflict")


def test_a_continuation_start_of_a_next_turn_seed_is_seed_conflict(store: Backend) -> None:
    session = new_session(store)
    predecessor = suspended_source(store, session.id)
    prepared = prepare(store, next_turn(completed_source(store, session.id)))
    ctx = Ctx("root", session.id, None)
    run = seeded(ctx.run(prepared.run_id, predecessor_run_id=predecessor.run_id), prepared)
    start_rejected(store, ctx, run, SeedConflictError, "seed_conflict")


def test_a_continuation_seed_of_another_source_than_the_predecessor_is_seed_conflict(
    store: Backend,
) -> None:
    session_id, _, prepared = _continuation_setup(store)
    other = suspended_source(store, session_id)
    ctx = Ctx("root", session_id, None)
    run = seeded(ctx.run(prepared.run_id, predecessor_run_id=other.run_id), prepared)
    start_rejected(store, ctx, run, SeedConflictError, "seed_conflict")


def test_continuation_starts_still_admit_one_successor_per_predecessor(store: Backend) -> None:
    session_id, predecessor, first = _continuation_setup(store)
    second = prepare(store, continuation(predecessor, "2"))
    ctx = Ctx("root", session_id, None)
    winner = seeded(ctx.run(first.run_id, predecessor_run_id=predecessor.run_id), first)
    send(store, ctx, winner)
    loser = seeded(ctx.run(second.run_id, predecessor_run_id=predecessor.run_id), second)
    start_rejected(store, ctx, loser, RunConflictError, "run_conflict")


def test_a_child_continuation_attaches_its_continuation_seed(store: Backend) -> None:
    ctx = context(store, "child")
    assert ctx.parent is not None
    predecessor = ctx.run()
    send(store, ctx, predecessor)
    store.record_run_suspension(predecessor.run_id, checkpoint(), suspended_record(predecessor))
    prepared = prepare(store, continuation(predecessor, "1"))
    run = seeded(ctx.run(prepared.run_id, predecessor_run_id=predecessor.run_id), prepared)
    link = link_record(ctx.parent, run, event_key=f"link-{run.run_id}")
    store.start_child_run(run, link, started_record(run), canceled_record(run))
    assert store.load_run(run.run_id).seed_end_id == prepared.seed_end_id


# --- a seed is published before its run's first start ---------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_begin_after_the_seeded_start_never_changes_the_attached_seed(
    store: Backend, kind: str
) -> None:
    ctx = context(store, kind)
    prepared = prepared_for(store, ctx)
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(store, ctx, run)
    with pytest.raises(SeedConflictError):
        store.begin_run_seed(attempt_of(prepared.declaration))
    assert store.load_run(run.run_id).seed_end_id == prepared.seed_end_id


# --- RUNTIME_STORE_REQUIRE_SEEDS ------------------------------------------------------------------


@pytest.fixture
def strict(engine: Engine) -> tuple[SqlStore, SqlStore]:
    """A store requiring seeds and one that does not, over the same clean database."""
    return SqlStore(engine, require_seeds=True), SqlStore(engine)


@pytest.mark.parametrize("kind", KINDS)
def test_with_seeds_required_a_new_start_without_seed_is_seed_not_found(
    strict: tuple[SqlStore, SqlStore], kind: str
) -> None:
    required, plain = strict
    ctx = context(plain, kind)
    start_rejected(required, ctx, ctx.run(), SeedNotFoundError, "seed_not_found")


@pytest.mark.parametrize("kind", KINDS)
def test_with_seeds_required_a_retry_without_seed_is_seed_not_found(
    strict: tuple[SqlStore, SqlStore], kind: str
) -> None:
    required, plain = strict
    ctx = context(plain, kind)
    run = ctx.run()
    send(plain, ctx, run)
    start_rejected(required, ctx, run, SeedNotFoundError, "seed_not_found")


@pytest.mark.parametrize("kind", KINDS)
def test_with_seeds_required_a_seeded_start_proceeds(
    strict: tuple[SqlStore, SqlStore], kind: str
) -> None:
    required, _ = strict
    ctx = context(required, kind) if kind in ("root", "synchronous", "one_shot") else None
    if ctx is None:
        # the parent itself needs a seed where seeds are required
        ctx = _seeded_parent_context(required, kind)
    prepared = prepare(required, ctx.declaration())
    run = seeded(ctx.run(prepared.run_id), prepared)
    send(required, ctx, run)
    assert required.load_run(run.run_id).seed_end_id == prepared.seed_end_id


def _seeded_parent_context(store: SqlStore, kind: str) -> Ctx:
    session_id = new_session(store).id if kind == "child" else ""
    prepared = prepare(store, literal(session_id=session_id, agent_id="agent-parent"))
    parent = seeded(
        run_start(run_id=prepared.run_id, agent_id="agent-parent", session_id=session_id),
        prepared,
    )
    if kind == "child":
        store.start_root_run(parent, started_record(parent), canceled_record(parent))
    else:
        store.start_one_shot_run(parent, started_record(parent))
    return Ctx(kind, session_id, parent)
