"""A real LangGraph ``StateGraph`` on the savers, on a live service over SQLite and over
PostgreSQL: an interrupt, its resume, time travel (a fork from the checkpoint that waited
for the answer), and a thread interrupted before a service restart resumed after it, by a
new client and saver.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from runtime_store_client import AsyncHttpStore, HttpStore
from runtime_store_client.langgraph import AsyncRuntimeStoreSaver, RuntimeStoreSaver
from tests.conftest import LiveServer, start_server, stop_server


class State(TypedDict, total=False):
    topic: str
    name: str
    greeting: str


def ask(state: State) -> State:
    return {"name": interrupt(f"who asks about {state['topic']}?")}


def greet(state: State) -> State:
    return {"greeting": f"hello {state['name']}, about {state['topic']}"}


def graph(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_node("greet", greet)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "greet")
    builder.add_edge("greet", END)
    return builder.compile(checkpointer=saver)


def thread() -> RunnableConfig:
    return {"configurable": {"thread_id": f"thread-{uuid.uuid4().hex[:8]}"}}


def test_interrupt_resume_and_time_travel(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        app = graph(RuntimeStoreSaver(store))
        config = thread()
        first = app.invoke({"topic": "tides"}, config)
        assert first["__interrupt__"][0].value == "who asks about tides?"
        assert app.get_state(config).next == ("ask",)

        done = app.invoke(Command(resume="Ada"), config)
        assert done["greeting"] == "hello Ada, about tides"
        assert app.get_state(config).next == ()

        # Time travel: back to the checkpoint that waited for the answer, fork it there
        # with another topic, and answer the new question.
        history = list(app.get_state_history(config))
        waiting = next(s for s in history if s.next == ("ask",) and s.tasks[0].interrupts)
        fork = app.update_state(waiting.config, {"topic": "stars"})
        again = app.invoke(None, fork)
        assert again["__interrupt__"][0].value == "who asks about stars?"
        forked = app.invoke(Command(resume="Bob"), config)
        assert forked["greeting"] == "hello Bob, about stars"
        assert app.get_state(config).values["greeting"] == "hello Bob, about stars"
        # Both branches stay in the history; the original one is unchanged.
        after = list(app.get_state_history(config))
        assert len(after) == len(history) + 3  # the fork, its answer, its greeting
        assert app.get_state(history[0].config).values["greeting"] == "hello Ada, about tides"


def test_a_thread_resumes_after_a_service_restart(live_server: LiveServer, tmp_path: Path) -> None:
    server = start_server(live_server.database_url, tmp_path / "first.log")
    config = thread()
    try:
        with HttpStore(server.base_url) as store:
            app = graph(RuntimeStoreSaver(store))
            app.invoke({"topic": "comets"}, config)
            assert app.get_state(config).next == ("ask",)
    finally:
        stop_server(server)

    server = start_server(live_server.database_url, tmp_path / "second.log")
    try:

        async def resume() -> tuple[dict[str, Any], int]:
            async with AsyncHttpStore(server.base_url) as store:
                app = graph(AsyncRuntimeStoreSaver(store))
                state = await app.aget_state(config)
                assert state.next == ("ask",)
                assert state.tasks[0].interrupts[0].value == "who asks about comets?"
                result = await app.ainvoke(Command(resume="Cy"), config)
                history = [s async for s in app.aget_state_history(config)]
                return result, len(history)

        result, checkpoints = asyncio.run(resume())
        assert result["greeting"] == "hello Cy, about comets"
        assert checkpoints == 4  # input, ask (interrupted), ask done, greet
    finally:
        stop_server(server)
