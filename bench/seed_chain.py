"""``python -m bench.seed_chain``: a conversation of N turns, each run seeded from the last.

The agent runtime's newest store starts every turn of a conversation with a ``next_turn``
seed (CONTRACT.md 15): the new run inherits the whole history of the previous, completed
run by one reference, and stores only its fresh records. This drives that chain through
``runtime-store serve`` as a user starts it (SQLite, its defaults, tokens required unless
``--auth open``; ``--postgres-url`` adds a PostgreSQL database) with the real ``HttpStore``
(a worker's token; the session is made with the admin's):

* each turn: ``begin_run_seed`` (next_turn from the previous run; the first is a literal
  with a system prompt), a ``prefix`` record (the reference), the new user message, the
  compiled start, ``publish_run_seed``, the start with ``seed_end_id``, the assistant's
  answer as a transcript record, the run's completion;
* stored bytes per turn, read in the database: the seed records' data and the run's
  record payloads of that turn (flat across the chain: nothing is copied);
* at the last turn, ``build_messages_from_run_log`` of the last run: its requests (every
  store call it makes) and its time (median of 5 reads), with the messages it composed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from app.storage import create_engine
from app.storage.database.tables import run_records, seed_records
from runtime_store_client import (
    HttpStore,
    Message,
    PreparationOperation,
    Role,
    RunStatus,
    SeedDeclaration,
    SeedKind,
    SeedRecord,
    TextPart,
    build_messages_from_run_log,
    encode_messages,
)
from tests.contract.builders import (
    canceled_record,
    new_session,
    record,
    run_start,
    started_record,
    terminal_record,
)

from . import auth
from .auth import Auth
from .servers import create_postgres_database, drop_postgres_database, start_service, stop_service

#: Roughly a chat turn: a 300-character question, a 1,200-character answer.
QUESTION = "How does the store keep a seeded history without copying it? " * 5
ANSWER = "It stores one prefix record that names the earlier run and its end. " * 18
COMPILED = b"compiled start request " * 40


class Counting:
    """The store a reader is given: every call it makes is counted."""

    def __init__(self, store: HttpStore) -> None:
        self._store = store
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return attribute(*args, **kwargs)

        return counted


def _messages(*messages: Message) -> bytes:
    return encode_messages(list(messages))


def _turn(store: HttpStore, session_id: str, turn: int, previous: str) -> str:
    """One turn: prepare, publish, start, answer, complete; the new run's ID."""
    run = run_start(session_id=session_id)
    attempt = f"attempt-{turn}"
    kind = SeedKind.NEXT_TURN if previous else SeedKind.LITERAL
    seed = store.begin_run_seed(
        SeedDeclaration(
            agent_id=run.agent_id,
            run_id=run.run_id,
            session_id=session_id,
            command_id=f"turn-{turn}",
            attempt_id=attempt,
            kind=kind,
            source_run_id=previous,
        )
    )
    history: list[SeedRecord] = []
    if seed.source is not None:
        history.append(SeedRecord(key="prefix", previous_id="0", prefix=seed.source))
    else:
        system = Message(role=Role.SYSTEM, parts=[TextPart(text="You are a careful agent.")])
        history.append(SeedRecord(key="system", previous_id="0", messages=_messages(system)))
    user = Message(role=Role.USER, parts=[TextPart(text=f"{turn}: {QUESTION}")])
    history.append(SeedRecord(key="user", previous_id="", messages=_messages(user)))
    chain = [*history, SeedRecord(key="compiled", previous_id="", prepared=COMPILED)]
    end = "0"
    for position, item in enumerate(chain, start=1):
        store.append_run_seed(run.run_id, attempt, replace(item, previous_id=str(position - 1)))
        end = str(position)
    seed_end = str(len(history))
    store.publish_run_seed(run.run_id, attempt, seed_end, end, len(COMPILED))
    operation = PreparationOperation(
        agent_id=run.agent_id, run_id=run.run_id, session_id=session_id, command_id=f"turn-{turn}"
    )
    assert store.find_run_preparation(operation) is not None
    seeded = replace(run, seed_end_id=seed_end)
    store.start_root_run(seeded, started_record(seeded), canceled_record(seeded))
    answer = Message(role=Role.ASSISTANT, parts=[TextPart(text=ANSWER)])
    store.append_run_record(
        record(seeded, type="transcript_messages_appended", payload=_messages(answer))
    )
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(seeded, RunStatus.COMPLETED)
    )
    return run.run_id


def _stored_bytes(database_url: str, run_id: str) -> int:
    """The bytes a turn stored: its seed records' data and its run's record payloads."""
    engine = create_engine(database_url, pool_size=1)
    try:
        with engine.connect() as conn:
            seed = conn.execute(
                sa.select(
                    sa.func.coalesce(sa.func.sum(sa.func.length(seed_records.c.data)), 0)
                ).where(seed_records.c.run_id == run_id)
            ).scalar_one()
            run = conn.execute(
                sa.select(
                    sa.func.coalesce(sa.func.sum(sa.func.length(run_records.c.payload)), 0)
                ).where(run_records.c.run_id == run_id)
            ).scalar_one()
    finally:
        engine.dispose()
    return int(seed) + int(run)


def measure(name: str, database_url: str, turns: int, log_dir: Path, mode: str) -> dict[str, float]:
    service = start_service(name, database_url, log_dir, auth=Auth.of(mode))
    try:
        with HttpStore(service.base_url, token=service.tokens.admin) as admin:
            session_id = new_session(admin).id  # an admin-only call
        with HttpStore(service.base_url, token=service.tokens.worker) as store:
            run_ids: list[str] = []
            started = time.perf_counter()
            for turn in range(1, turns + 1):
                run_ids.append(_turn(store, session_id, turn, run_ids[-1] if run_ids else ""))
            chain_seconds = time.perf_counter() - started
            sizes = [_stored_bytes(database_url, run_id) for run_id in run_ids]
            counting = Counting(store)
            messages = build_messages_from_run_log(counting, run_ids[-1])
            requests = counting.calls
            times = []
            for _ in range(5):
                began = time.perf_counter()
                build_messages_from_run_log(store, run_ids[-1])
                times.append(time.perf_counter() - began)
    finally:
        stop_service(service)
    return {
        "turns": turns,
        "turn seconds": chain_seconds / turns,
        "bytes turn 2": sizes[1] if len(sizes) > 1 else sizes[0],
        "bytes last turn": sizes[-1],
        "bytes per turn": statistics.mean(sizes[1:] or sizes),
        "messages": len(messages),
        "requests": requests,
        "read ms": statistics.median(times) * 1000,
    }


def _print(name: str, mode: str, figures: dict[str, float]) -> None:
    print(
        f"{name}, auth {mode}: {int(figures['turns'])} turns, "
        f"{figures['turn seconds'] * 1000:.1f} ms per turn (11 requests); stored bytes per "
        f"turn {figures['bytes per turn']:.0f} (turn 2: {figures['bytes turn 2']:.0f}, "
        f"last: {figures['bytes last turn']:.0f}); full composed read of the last run: "
        f"{int(figures['messages'])} messages, {int(figures['requests'])} requests, "
        f"{figures['read ms']:.1f} ms (median of 5)"
    )


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(prog="python -m bench.seed_chain", description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument(
        "--postgres-url", default="", help="also measure on a scratch database of this server"
    )
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="rs-seed-chain-") as tmp:
        log_dir = Path(tmp)
        sqlite_url = f"sqlite:///{log_dir / 'chain.db'}"
        results["sqlite"] = measure("sqlite", sqlite_url, args.turns, log_dir, args.auth)
        _print("sqlite", args.auth, results["sqlite"])
        admin = args.postgres_url or ""
        if admin:
            database = create_postgres_database(admin)
            try:
                results["postgres"] = measure("postgres", database, args.turns, log_dir, args.auth)
            finally:
                drop_postgres_database(admin, database)
            _print("postgres", args.auth, results["postgres"])
    return results


if __name__ == "__main__":
    main()
