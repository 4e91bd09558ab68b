"""The OpenAI Agents SDK session on a live service, over SQLite and over PostgreSQL.

- A hypothesis state machine drives ``RuntimeStoreSession`` and the SDK's own
  ``SQLiteSession`` (in memory) side by side: every read must agree. Two adapter instances
  share the runtime-store session, one of them through a store that sends every write
  twice (an answer lost, the request retried): each item is still stored once.
- Parallel callers, each with its own client and event loop, pop one session empty: every
  item is returned exactly once.
- A real ``Runner`` turn (a fake model: no network) keeps its conversation in the session.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

import pytest
from agents import Agent, Runner, SQLiteSession
from agents.items import ModelResponse, TResponseInputItem
from agents.models.interface import Model
from agents.usage import Usage
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from runtime_store_client import AsyncHttpStore
from runtime_store_client.openai_agents import RuntimeStoreSession
from tests.conftest import LiveServer

T = TypeVar("T")


class RetriedWrites:
    """An ``AsyncHttpStore`` whose every append is sent twice, as after a lost answer: the
    second answer (an exact retry) is the one the caller sees."""

    def __init__(self, store: AsyncHttpStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if not name.startswith("append_run_record"):
            return method

        async def twice(*args: Any, **kwargs: Any) -> Any:
            await method(*args, **kwargs)
            return await method(*args, **kwargs)

        return twice


def message(text: str) -> TResponseInputItem:
    return {"role": "user", "content": text}


texts = st.text(st.characters(codec="utf-8"), max_size=12)


class SessionMachine(RuleBasedStateMachine):
    """The adapter (two instances, one retrying every write) beside ``SQLiteSession``."""

    base_url = ""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.store = self.run(self._store())
        session_id = uuid.uuid4().hex
        self.plain = RuntimeStoreSession(session_id, self.store)
        self.retried = RuntimeStoreSession(session_id, RetriedWrites(self.store))
        self.oracle = SQLiteSession(session_id)
        self.size = 0

    async def _store(self) -> AsyncHttpStore:
        return AsyncHttpStore(self.base_url)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def pick(self, retried: bool) -> RuntimeStoreSession:
        return self.retried if retried else self.plain

    @rule(items=st.lists(texts, min_size=1, max_size=4), retried=st.booleans())
    def add_items(self, items: list[str], retried: bool) -> None:
        batch = [message(text) for text in items]
        self.run(self.pick(retried).add_items(batch))
        self.run(self.oracle.add_items(batch))
        self.size += len(batch)

    @rule(retried=st.booleans())
    def pop_item(self, retried: bool) -> None:
        got = self.run(self.pick(retried).pop_item())
        assert got == self.run(self.oracle.pop_item())
        self.size = max(0, self.size - 1)

    @precondition(lambda self: self.size > 0)
    @rule(retried=st.booleans())
    def clear_session(self, retried: bool) -> None:
        self.run(self.pick(retried).clear_session())
        self.run(self.oracle.clear_session())
        self.size = 0

    @rule(limit=st.one_of(st.none(), st.integers(0, 6)), retried=st.booleans())
    def get_items(self, limit: int | None, retried: bool) -> None:
        got = self.run(self.pick(retried).get_items(limit))
        assert got == self.run(self.oracle.get_items(limit))

    @invariant()
    def both_instances_agree(self) -> None:
        expected = self.run(self.oracle.get_items())
        assert self.run(self.plain.get_items()) == expected
        assert self.run(self.retried.get_items()) == expected

    def teardown(self) -> None:
        self.run(self.store.aclose())
        self.oracle.close()
        self.loop.close()


def test_the_session_behaves_as_the_sdks_own(live_server: LiveServer) -> None:
    SessionMachine.base_url = live_server.base_url
    SessionMachine.TestCase.settings = settings(
        max_examples=40, stateful_step_count=15, deadline=None
    )
    SessionMachine.TestCase().runTest()


def test_parallel_pops_never_return_one_item_twice(live_server: LiveServer) -> None:
    session_id = uuid.uuid4().hex
    items = [message(f"item {n}") for n in range(40)]

    async def fill() -> None:
        async with AsyncHttpStore(live_server.base_url) as store:
            await RuntimeStoreSession(session_id, store).add_items(items)

    asyncio.run(fill())
    popped: list[list[TResponseInputItem]] = [[] for _ in range(6)]
    start = threading.Barrier(len(popped))

    def caller(mine: list[TResponseInputItem]) -> None:
        async def pop_all() -> None:
            async with AsyncHttpStore(live_server.base_url) as store:
                session = RuntimeStoreSession(session_id, store)
                await session.get_items()  # warm: every caller has read the full list
                start.wait()
                while (item := await session.pop_item()) is not None:
                    mine.append(item)

        asyncio.run(pop_all())

    threads = [threading.Thread(target=caller, args=(mine,)) for mine in popped]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [item for mine in popped for item in mine]
    assert sorted(everything, key=str) == sorted(items, key=str)  # each exactly once
    assert sum(1 for mine in popped if mine) > 1, "the callers did not overlap"

    async def left() -> list[TResponseInputItem]:
        async with AsyncHttpStore(live_server.base_url) as store:
            return await RuntimeStoreSession(session_id, store).get_items()

    assert asyncio.run(left()) == []


class EchoModel(Model):
    """A model that answers with the number of user messages it was given."""

    def __init__(self) -> None:
        self.inputs: list[list[Any]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        given = args[1] if len(args) > 1 else kwargs["input"]
        items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
        self.inputs.append(items)
        users = sum(1 for item in items if item.get("role") == "user")
        text = ResponseOutputText(type="output_text", text=f"{users} user messages", annotations=[])
        output = ResponseOutputMessage(
            id=f"msg_{len(self.inputs)}",
            type="message",
            role="assistant",
            status="completed",
            content=[text],
        )
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def test_a_runner_turn_keeps_its_conversation(live_server: LiveServer) -> None:
    model = EchoModel()
    agent = Agent(name="echo", instructions="Count.", model=model)
    session_id = uuid.uuid4().hex

    async def turns() -> list[Any]:
        async with AsyncHttpStore(live_server.base_url) as store:
            first = await Runner.run(agent, "hello", session=RuntimeStoreSession(session_id, store))
            assert first.final_output == "1 user messages"
        # Another client (another worker) continues the conversation.
        async with AsyncHttpStore(live_server.base_url) as store:
            session = RuntimeStoreSession(session_id, store)
            second = await Runner.run(agent, "again", session=session)
            assert second.final_output == "2 user messages"
            return list(await session.get_items())

    items = asyncio.run(turns())
    assert [item.get("role") for item in items] == ["user", "assistant", "user", "assistant"]
    assert items[0]["content"] == "hello"
    assert items[2]["content"] == "again"
    assert [item.get("role") for item in model.inputs[1]] == ["user", "assistant", "user"]


@pytest.fixture(autouse=True)
def _no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No trace export (it would try the network)."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
