"""Seeds under purge and retention (CONTRACT.md 15.7): a purge deletes every seed of the
session and keeps their run IDs reserved (``session_purged`` for every seed operation and
start naming one), sessionless seeds are untouched by it, open attempts do not block it;
retention purges ended sessions the same way, deletes a sessionless run's seed with it,
and deletes a sessionless seed whose run never started once its last seed write is older
than the sessionless runs' age."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.retention import RetentionPolicy
from app.domain.times import now_millis
from app.storage import SqlStore
from app.storage.database.tables import run_tombstones
from app.storage.sessions.purge import tombstone_session
from app.storage.verify import verify_database
from runtime_store_client import (
    RunStatus,
    SessionHasActiveRunsError,
    StoreError,
)
from tests.contract.builders import (
    canceled_record,
    new_session,
    run_start,
    start_root,
    started_record,
    terminal_record,
)
from tests.lifecycle.test_refusals import rows
from tests.storage.seed_world import (
    build_seed_world,
    declaration,
    end,
    messages,
    operation,
    prepared,
    publish_literal,
    seeded_start,
)

DAY_MS = 86_400_000
RUNS = RetentionPolicy(sessionless_runs=timedelta(days=1))
SESSIONS = RetentionPolicy(ended_sessions=timedelta(hours=1))
SEED_TABLES = ("seed_operations", "seed_attempts", "seed_records")


def _seed_rows(engine: Engine) -> tuple[int, ...]:
    counted = rows(engine)
    return tuple(counted[name] for name in SEED_TABLES)


def _tombstones(engine: Engine) -> dict[str, str | None]:
    with engine.connect() as conn:
        return dict(
            conn.execute(sa.select(run_tombstones.c.run_id, run_tombstones.c.session_id)).all()
        )


def _code(call: Callable[[], Any]) -> str:
    try:
        call()
    except StoreError as exc:
        return exc.code
    return "ok"


def _every_use(store: SqlStore, run_id: str, session_id: str) -> dict[str, str]:
    """Every seed operation and start naming the run ID, from another session and
    sessionless: their error codes."""
    other = new_session(store).id
    sessionless = run_start(run_id=run_id)
    in_other = run_start(run_id=run_id, session_id=other)
    seeded = seeded_start(run_id, "", "3")
    return {
        "begin here": _code(lambda: store.begin_run_seed(declaration(run_id, "new", session_id))),
        "begin elsewhere": _code(lambda: store.begin_run_seed(declaration(run_id, "new", other))),
        "begin sessionless": _code(lambda: store.begin_run_seed(declaration(run_id, "new", ""))),
        "append": _code(
            lambda: store.append_run_seed(run_id, "att-1", replace(messages("k"), previous_id="0"))
        ),
        "publish": _code(lambda: store.publish_run_seed(run_id, "att-1", "1", "2", 1)),
        "find": _code(lambda: store.find_run_preparation(operation(run_id, session_id))),
        "find sessionless": _code(lambda: store.find_run_preparation(operation(run_id, ""))),
        "settle": _code(lambda: store.settle_run_preparation(operation(run_id, ""), "x")),
        "load": _code(lambda: store.load_run_seed(run_id, "3")),
        "list": _code(lambda: store.list_run_seed_records(run_id, "3")),
        "list prepared": _code(lambda: store.list_run_preparation_records(run_id, "5")),
        "start sessionless": _code(
            lambda: store.start_one_shot_run(sessionless, started_record(sessionless))
        ),
        "start seeded": _code(lambda: store.start_one_shot_run(seeded, started_record(seeded))),
        "start elsewhere": _code(
            lambda: store.start_root_run(
                in_other, started_record(in_other), canceled_record(in_other)
            )
        ),
    }


def _purged_everywhere(store: SqlStore, run_id: str, session_id: str) -> None:
    answers = _every_use(store, run_id, session_id)
    assert answers == dict.fromkeys(answers, "session_purged"), answers


def _sessionless_seed(store: SqlStore, run_id: str) -> None:
    store.begin_run_seed(declaration(run_id, "att-1", ""))
    store.append_run_seed(run_id, "att-1", replace(messages("m"), previous_id="0"))
    store.append_run_seed(run_id, "att-1", replace(prepared("c", b"x"), previous_id="1"))


# --- purge ----------------------------------------------------------------------------------


def test_a_purge_deletes_the_sessions_seeds_and_reserves_their_run_ids(engine: Engine) -> None:
    store = SqlStore(engine, purge_batch=3)
    world = build_seed_world(store)
    _sessionless_seed(store, "sessionless-seed")
    kept = _seed_rows(engine)
    end(store, world.session_id)

    store.purge_session(world.session_id)  # an open attempt does not block it

    assert _seed_rows(engine) == (1, 1, 2)  # the sessionless seed alone
    assert kept != (1, 1, 2)
    tombstones = _tombstones(engine)
    assert {run_id: tombstones.get(run_id) for run_id in world.seeded} == dict.fromkeys(
        world.seeded, world.session_id
    )
    for run_id in world.seeded:
        _purged_everywhere(store, run_id, world.session_id)
    assert store.begin_run_seed(declaration("sessionless-seed", "att-1", "")).end_id == "1"
    report = verify_database(engine)
    assert report.ok, report.violations
    assert report.purge_pending_seed_records == 0


def test_a_running_run_still_blocks_a_purge_and_the_seeds_stay(engine: Engine) -> None:
    store = SqlStore(engine)
    world = build_seed_world(store)
    start_root(store, world.session_id)
    end(store, world.session_id)
    before = _seed_rows(engine)

    with pytest.raises(SessionHasActiveRunsError):
        store.purge_session(world.session_id)

    assert _seed_rows(engine) == before
    assert store.find_run_preparation(operation(world.literal, world.session_id)) is not None


def test_a_purge_cut_short_leaves_seed_records_pending_until_the_next_purge(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    world = build_seed_world(store)
    end(store, world.session_id)
    tombstone_session(store._ctx, world.session_id)  # the purge's first transaction alone

    assert _seed_rows(engine) == (0, 0, 13)
    for run_id in (world.open, world.literal):
        _purged_everywhere(store, run_id, world.session_id)
    report = verify_database(engine)
    assert report.ok, report.violations
    assert report.purge_pending_seed_records == 13
    assert "13 seed records" in report.summary()

    store.purge_session(world.session_id)

    assert _seed_rows(engine) == (0, 0, 0)
    assert verify_database(engine).purge_pending_seed_records == 0


# --- retention ------------------------------------------------------------------------------


def _past(engine: Engine, days: int) -> SqlStore:
    """A store whose clock reads ``days`` days ago (seed writes' and runs' times)."""
    return SqlStore(engine, clock=lambda: now_millis() - days * DAY_MS)


def test_retention_purges_an_ended_sessions_seeds_as_a_purge_does(engine: Engine) -> None:
    store = SqlStore(engine)
    world = build_seed_world(store)
    end(store, world.session_id)

    done = store.retention_sweep(SESSIONS)

    assert done.sessions == 1
    assert _seed_rows(engine) == (0, 0, 0)
    for run_id in world.seeded:
        _purged_everywhere(store, run_id, world.session_id)
    assert verify_database(engine).ok


def _seeded_one_shot(store: SqlStore, run_id: str) -> None:
    """A sessionless run started with a published literal seed, completed."""
    publish_literal(store, run_id, "")
    start = seeded_start(run_id, "", "3")
    store.start_one_shot_run(start, started_record(start))
    store.record_run_terminal(
        run_id, RunStatus.COMPLETED, terminal_record(start, RunStatus.COMPLETED)
    )


def test_a_sessionless_run_deleted_by_retention_takes_its_seed(engine: Engine) -> None:
    old, store = _past(engine, 3), SqlStore(engine)
    _seeded_one_shot(old, "old-seeded")
    _seeded_one_shot(store, "young-seeded")

    done = store.retention_sweep(RUNS)

    assert (done.runs, done.seeds) == (1, 0)
    assert _seed_rows(engine) == (1, 1, 5)  # the young run's seed
    assert _tombstones(engine) == {"old-seeded": None}
    _purged_everywhere(store, "old-seeded", "")
    assert store.load_run_seed("young-seeded", "3").end_id == "3"
    report = verify_database(engine)
    assert report.ok, report.violations
    assert report.purge_pending_seed_records == 0


def test_a_sessionless_seed_whose_run_never_started_goes_once_its_last_write_is_old(
    engine: Engine,
) -> None:
    old, store = _past(engine, 3), SqlStore(engine)
    _sessionless_seed(old, "old-unstarted")
    old.settle_run_preparation(operation("old-settled", ""), "lost")
    _sessionless_seed(old, "old-but-touched")
    store.append_run_seed(
        "old-but-touched", "att-1", replace(prepared("c2", b"y"), previous_id="2")
    )  # a recent seed write keeps it
    _sessionless_seed(store, "young-unstarted")
    session_id = new_session(old).id
    old.begin_run_seed(declaration("in-a-session", "att-1", session_id))
    before = rows(engine)

    plan = store.retention_sweep(RUNS, dry_run=True)

    assert (plan.seeds, plan.seed_records, plan.items) == (2, 2, 2)
    assert "2 seeds of sessionless runs that never started (2 records)" in plan.summary()
    assert rows(engine) == before

    done = store.retention_sweep(RUNS)

    assert (done.seeds, done.seed_records, done.runs) == (2, 2, 0)
    assert _tombstones(engine) == {"old-unstarted": None, "old-settled": None}
    for run_id in ("old-unstarted", "old-settled"):
        _purged_everywhere(store, run_id, "")
    for run_id in ("old-but-touched", "young-unstarted"):
        assert store.begin_run_seed(declaration(run_id, "att-1", "")).end_id in ("1", "2")
    assert store.begin_run_seed(declaration("in-a-session", "att-1", session_id)).end_id == "0"
    report = verify_database(engine)
    assert report.ok, report.violations
    assert report.purge_pending_seed_records == 0


def test_a_seed_whose_run_started_is_not_taken_as_never_started(engine: Engine) -> None:
    """An old seed whose (young, or running) run exists stays: it goes with its run."""
    old, store = _past(engine, 3), SqlStore(engine)
    publish_literal(old, "started-later", "")
    start = seeded_start("started-later", "", "3")
    store.start_one_shot_run(start, started_record(start))  # running, and young

    done = store.retention_sweep(RUNS)

    assert (done.runs, done.seeds) == (0, 0)
    assert store.load_run_seed("started-later", "3").end_id == "3"


def test_seed_records_left_by_a_sweep_cut_short_go_with_the_next_sweep(engine: Engine) -> None:
    from app.storage.retention.runs import tombstone_seeds

    old, store = _past(engine, 3), SqlStore(engine)
    _sessionless_seed(old, "old-unstarted")
    cutoff = RUNS.run_cutoff_ms(now_millis())
    assert cutoff is not None
    store._ctx.uow.write(lambda tx: tombstone_seeds(tx, ["old-unstarted"], cutoff))
    assert verify_database(engine).purge_pending_seed_records == 2

    store.retention_sweep(RUNS)

    assert _seed_rows(engine) == (0, 0, 0)
    report = verify_database(engine)
    assert report.ok, report.violations
    assert report.purge_pending_seed_records == 0
