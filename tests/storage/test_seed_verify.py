"""``db verify`` knows the seed facts (CONTRACT.md 15): a database written through
``SqlStore`` verifies clean, and each corruption (made with direct SQL) is reported under
its invariant: seed chains, declarations, publication, attachment, dangling rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage import verify as v
from tests.contract.builders import run_start, started_record
from tests.storage.seed_world import (
    SeedWorld,
    build_seed_world,
    declaration,
    end,
    publish_literal,
    seeded_start,
)


@dataclass(frozen=True)
class Seeds:
    world: SeedWorld
    #: A sessionless run started with a seed; a sessionless seed never started.
    one_shot: str
    unstarted: str
    #: An unseeded sessionless run.
    plain: str


@pytest.fixture
def seeds(engine: Engine) -> Seeds:
    store = SqlStore(engine)
    world = build_seed_world(store)
    publish_literal(store, "one-shot-seeded", "")
    start = seeded_start("one-shot-seeded", "", "3")
    store.start_one_shot_run(start, started_record(start))
    store.begin_run_seed(declaration("unstarted", "att-1", ""))
    plain = run_start(run_id="plain")
    store.start_one_shot_run(plain, started_record(plain))
    # A purged session whose seeds left only tombstones.
    build_seed_world(store, "purged-session", tag="-purged")
    end(store, "purged-session")
    store.purge_session("purged-session")
    return Seeds(world, "one-shot-seeded", "unstarted", "plain")


def execute(engine: Engine, sql: str, **params: Any) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(sql), params)


def found(engine: Engine) -> set[tuple[str, str]]:
    report = v.verify_database(engine, page_size=2)
    return {(item.invariant, item.run_id) for item in report.violations}


@pytest.mark.parametrize("page_size", [1, 2, 1000])
def test_seeds_written_through_the_store_verify_clean(
    engine: Engine, seeds: Seeds, page_size: int
) -> None:
    report = v.verify_database(engine, page_size=page_size)

    assert report.violations == []
    assert report.seeds_checked == 7
    assert "7 seed operations" in report.summary()
    assert report.purge_pending_seed_records == 0


# --- one corruption per fact ----------------------------------------------------------------

LIT = "seed-z-literal"
NEXT = "seed-\u00e9-next"


def _attempt(run_id: str, attempt_id: str) -> str:
    return f"run_id = '{run_id}' AND attempt_id = '{attempt_id}'"


def _record(run_id: str, attempt_id: str, record_id: int) -> str:
    return f"run_id = '{run_id}' AND attempt_id = '{attempt_id}' AND id = {record_id}"


CORRUPTIONS: dict[str, tuple[list[str], set[tuple[str, str]]]] = {
    "a record missing from a chain": (
        [f"DELETE FROM seed_records WHERE {_record(LIT, 'att-a', 2)}"],
        {(v.SEED_CHAINS, LIT)},
    ),
    "a history end that is not the chain's": (
        [f"UPDATE seed_attempts SET history_end = 2 WHERE {_attempt(LIT, 'att-a')}"],
        {(v.SEED_CHAINS, LIT), (v.SEED_ATTACHMENT, LIT)},
    ),
    "prepared bytes that are not the chain's": (
        [f"UPDATE seed_attempts SET prepared_bytes = 1 WHERE {_attempt(LIT, 'att-a')}"],
        {(v.SEED_CHAINS, LIT)},
    ),
    "history after the compiled start": (
        [
            f"UPDATE seed_records SET variant = 'messages' WHERE {_record(LIT, 'att-a', 5)}",
        ],
        {(v.SEED_CHAINS, LIT)},
    ),
    "an open literal forgotten": (
        ["UPDATE seed_attempts SET literal_open = false WHERE run_id = 'seed-a-open'"],
        {(v.SEED_CHAINS, "seed-a-open")},
    ),
    "a final flag on a prepared record": (
        [f"UPDATE seed_records SET final = true WHERE {_record(LIT, 'att-a', 5)}"],
        {(v.SEED_CHAINS, LIT)},
    ),
    "a prefix that is not the source": (
        [
            "UPDATE seed_attempts SET source = replace(source, 'true', 'false')"
            f" WHERE run_id = '{NEXT}'"
        ],
        {(v.SEED_CHAINS, NEXT)},
    ),
    "a second prefix": (
        [
            f"UPDATE seed_records SET variant = 'prefix', data = (SELECT data FROM seed_records"
            f" WHERE {_record(NEXT, 'att-1', 1)}) WHERE {_record(NEXT, 'att-1', 2)}"
        ],
        {(v.SEED_CHAINS, NEXT)},
    ),
    "a tombstone with a record": (
        [
            "INSERT INTO seed_records (run_id, attempt_id, id, key, variant, data, final,"
            " wire_size) VALUES ('seed-b-settled', 'lost', 1, 'k', 'prepared', :data, NULL, 40)"
        ],
        {(v.SEED_CHAINS, "seed-b-settled")},
    ),
    "a declaration of another command": (
        [
            "UPDATE seed_attempts SET declaration = replace(declaration, 'cmd-seed-a-open',"
            " 'other') WHERE run_id = 'seed-a-open'"
        ],
        {(v.SEED_DECLARATIONS, "seed-a-open")},
    ),
    "attempts without their operation": (
        ["DELETE FROM seed_operations WHERE run_id = 'unstarted'"],
        {(v.SEED_DECLARATIONS, "unstarted")},
    ),
    "records without their attempt": (
        ["DELETE FROM seed_attempts WHERE run_id = 'seed-a-open'"],
        {(v.DANGLING_ROWS, "seed-a-open")},
    ),
    "a second published attempt": (
        [f"UPDATE seed_attempts SET state = 'published' WHERE {_attempt(LIT, 'att-Z')}"],
        {(v.SEED_PUBLICATION, LIT)},
    ),
    "a published attempt its operation does not name": (
        [f"UPDATE seed_operations SET published_attempt_id = NULL WHERE run_id = '{LIT}'"],
        {(v.SEED_PUBLICATION, LIT), (v.SEED_ATTACHMENT, LIT)},
    ),
    "a published attempt without its compiled start": (
        [
            f"DELETE FROM seed_records WHERE run_id = '{LIT}' AND attempt_id = 'att-a' AND id > 3",
            f"UPDATE seed_attempts SET body_end = 3, prepared_bytes = 0 WHERE run_id = '{LIT}'"
            " AND attempt_id = 'att-a'",
        ],
        {(v.SEED_PUBLICATION, LIT)},
    ),
    "the seed of a reserved run ID": (
        ["INSERT INTO run_tombstones (run_id, session_id) VALUES ('unstarted', NULL)"],
        {(v.SEED_PUBLICATION, "unstarted")},
    ),
    "a run attaching another history end": (
        [f"UPDATE runs SET seed_end_id = '2' WHERE run_id = '{LIT}'"],
        {(v.SEED_ATTACHMENT, LIT)},
    ),
    "a run attaching a seed its run ID does not have": (
        ["UPDATE runs SET seed_end_id = '1' WHERE run_id = 'plain'"],
        {(v.SEED_ATTACHMENT, "plain")},
    ),
    "a run attaching a seed prepared for another agent": (
        ["UPDATE runs SET agent_id = 'intruder' WHERE run_id = 'one-shot-seeded'"],
        {(v.SEED_ATTACHMENT, "one-shot-seeded"), (v.RECORD_OWNER, "one-shot-seeded")},
    ),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS), ids=list(CORRUPTIONS))
def test_a_broken_seed_fact_is_reported(engine: Engine, seeds: Seeds, corruption: str) -> None:
    statements, expected = CORRUPTIONS[corruption]
    for statement in statements:
        params = {"data": b"x"} if ":data" in statement else {}
        execute(engine, statement, **params)

    assert found(engine) == expected


def test_seed_records_of_a_purged_seed_are_pending_not_dangling(
    engine: Engine, seeds: Seeds
) -> None:
    execute(
        engine,
        "INSERT INTO seed_records (run_id, attempt_id, id, key, variant, data, final, wire_size)"
        " VALUES ('seed-a-open', 'gone', 1, 'k', 'prepared', :data, NULL, 40)",
        data=b"x",
    )
    assert found(engine) == {(v.DANGLING_ROWS, "seed-a-open")}
    # The same records under a run ID a purge reserved: pending its batched deletion.
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE seed_records SET run_id = (SELECT min(run_id) FROM run_tombstones"
                " WHERE session_id = 'purged-session') WHERE attempt_id = 'gone'"
            )
        )

    report = v.verify_database(engine)

    assert report.ok, report.violations
    assert report.purge_pending_seed_records == 1
