"""The framework adapters beside the frameworks' own PostgreSQL backends, same sitting.

``python -m bench.frameworks [--iterations N]`` (in the frameworks' venv:
./scripts/venv-frameworks.sh) measures, on the local PostgreSQL server:

- LangGraph: a checkpoint ``aput`` then ``aget_tuple`` of the latest, one thread, against
  ``AsyncPostgresSaver`` (``langgraph-checkpoint-postgres``, straight to the database);
- OpenAI Agents: ``add_items`` (two items) then ``get_items(100)``, one session, against
  the SDK's ``SQLAlchemySession`` (asynchronous psycopg, straight to the database);

each adapter both through a ``runtime-store serve`` (one worker, ``AsyncHttpStore``; tokens
required unless ``--auth open``) and in process (``SqlStore`` on its own database, no
HTTP). Printed as a table: the mean and the median time of one pair, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, empty_checkpoint
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from sqlalchemy.engine import make_url

from app.storage import SqlStore, create_engine, upgrade_schema
from bench import auth
from bench.auth import Auth
from bench.config import postgres_admin_url
from bench.servers import (
    create_postgres_database,
    drop_postgres_database,
    start_service,
    stop_service,
)
from runtime_store_client import AsyncHttpStore
from runtime_store_client.langgraph import AsyncRuntimeStoreSaver
from runtime_store_client.openai_agents import RuntimeStoreSession

Pair = Callable[[int], Awaitable[None]]


class InProcess:
    """``SqlStore`` with the asynchronous store's method names (each call in a thread)."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        return call


async def measure(pair: Pair, iterations: int) -> list[float]:
    await pair(-1)  # warm: the thread or session exists, connections are open
    times = []
    for step in range(iterations):
        started = time.perf_counter()
        await pair(step)
        times.append((time.perf_counter() - started) * 1000)
    return times


def checkpoint_pair(saver: BaseCheckpointSaver[Any]) -> Pair:
    thread: RunnableConfig = {"configurable": {"thread_id": uuid.uuid4().hex, "checkpoint_ns": ""}}
    state: dict[str, Any] = {"parent": None, "version": None}

    async def pair(step: int) -> None:
        checkpoint: Checkpoint = empty_checkpoint()
        version = saver.get_next_version(state["version"], None)
        checkpoint["channel_values"] = {"messages": [f"message {step}"] * 4, "step": step}
        checkpoint["channel_versions"] = {"messages": version, "step": version}
        config: RunnableConfig = {"configurable": dict(thread["configurable"])}
        if state["parent"]:
            config["configurable"]["checkpoint_id"] = state["parent"]
        stored = await saver.aput(
            config, checkpoint, {"step": step}, checkpoint["channel_versions"]
        )
        state["parent"], state["version"] = stored["configurable"]["checkpoint_id"], version
        found = await saver.aget_tuple(thread)
        assert found is not None
        assert found.checkpoint["id"] == checkpoint["id"]

    return pair


def items_pair(session: Any) -> Pair:
    async def pair(step: int) -> None:
        await session.add_items(
            [
                {"role": "user", "content": f"question {step}"},
                {"role": "assistant", "content": f"answer {step}"},
            ]
        )
        items = await session.get_items(100)
        assert items[-1]["content"] == f"answer {step}"

    return pair


def row(name: str, times: list[float]) -> str:
    return f"{name:68s} {statistics.fmean(times):8.2f} {statistics.median(times):8.2f}"


async def sitting(iterations: int, log_dir: Path, mode: str) -> list[str]:
    admin = postgres_admin_url()
    peers_url = create_postgres_database(admin)
    served_url = create_postgres_database(admin)
    local_url = create_postgres_database(admin)
    service = None
    lines: list[str] = []
    try:
        upgrade_schema(local_url)
        service = start_service("frameworks", served_url, log_dir, workers=1, auth=Auth.of(mode))
        libpq = make_url(peers_url).set(drivername="postgresql").render_as_string(False)
        engine = create_engine(local_url)
        local = InProcess(SqlStore(engine))
        async with (
            # The adapters create, end and purge their sessions: admin-only calls.
            AsyncHttpStore(service.base_url, token=service.tokens.admin) as http,
            AsyncPostgresSaver.from_conn_string(libpq) as postgres_saver,
        ):
            await postgres_saver.setup()
            peer_session = SQLAlchemySession.from_url(
                uuid.uuid4().hex,
                url=make_url(peers_url)
                .set(drivername="postgresql+psycopg")
                .render_as_string(False),
                create_tables=True,
            )
            runs: list[tuple[str, Pair]] = [
                ("LangGraph put + get_tuple: AsyncPostgresSaver", checkpoint_pair(postgres_saver)),
                (
                    "LangGraph put + get_tuple: AsyncRuntimeStoreSaver (service)",
                    checkpoint_pair(AsyncRuntimeStoreSaver(http)),
                ),
                (
                    "LangGraph put + get_tuple: AsyncRuntimeStoreSaver (in process)",
                    checkpoint_pair(AsyncRuntimeStoreSaver(local)),
                ),
                ("Agents add_items + get_items(100): SQLAlchemySession", items_pair(peer_session)),
                (
                    "Agents add_items + get_items(100): RuntimeStoreSession (service)",
                    items_pair(RuntimeStoreSession(uuid.uuid4().hex, http)),
                ),
                (
                    "Agents add_items + get_items(100): RuntimeStoreSession (in process)",
                    items_pair(RuntimeStoreSession(uuid.uuid4().hex, local)),
                ),
            ]
            lines.append(
                f"{f'one pair, ms ({iterations} pairs, auth {mode})':68s} {'mean':>8s} "
                f"{'median':>8s}"
            )
            for name, pair in runs:
                lines.append(row(name, await measure(pair, iterations)))
            await peer_session.engine.dispose()
        engine.dispose()
    finally:
        if service is not None:
            stop_service(service)
        for url in (peers_url, served_url, local_url):
            drop_postgres_database(admin, url)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.frameworks", description=__doc__)
    parser.add_argument("--iterations", type=int, default=300)
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as log_dir:
        for line in asyncio.run(sitting(args.iterations, Path(log_dir), args.auth)):
            print(line)


if __name__ == "__main__":
    main()
