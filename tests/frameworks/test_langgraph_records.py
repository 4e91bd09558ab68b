"""What the LangGraph savers promise beyond the conformance suite, on a live service over
SQLite and over PostgreSQL: a retried ``put`` is an exact retry, ordinary writes keep their
first value and the special channels their newest, a deleted thread's ID starts afresh,
and the bare client imports no framework."""

from __future__ import annotations

import subprocess
import sys
import uuid
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.types import INTERRUPT

from runtime_store_client import HttpStore, SessionStatus
from runtime_store_client.langgraph import RuntimeStoreSaver
from tests.conftest import LiveServer


class RetriedWrites:
    """An ``HttpStore`` whose every append is sent twice, as after a lost answer; it keeps
    the second answers."""

    def __init__(self, store: HttpStore) -> None:
        self._store = store
        self.retries: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if name != "append_run_records":
            return method

        def twice(*args: Any, **kwargs: Any) -> Any:
            method(*args, **kwargs)
            answer = method(*args, **kwargs)
            self.retries.extend(answer)
            return answer

        return twice


def config(thread_id: str, checkpoint_id: str | None = None) -> Any:
    configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def test_a_retried_put_is_an_exact_retry(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        retried = RetriedWrites(store)
        saver = RuntimeStoreSaver(retried)
        thread = uuid.uuid4().hex
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": ["hi"]}
        checkpoint["channel_versions"] = {"messages": saver.get_next_version(None, None)}
        stored = saver.put(config(thread), checkpoint, {"step": 0}, checkpoint["channel_versions"])
        saver.put_writes(stored, [("messages", "more")], "task-1")
        assert retried.retries, "no write was retried"
        assert not any(result.inserted for result in retried.retries)
        # And the same put again, by the caller: nothing new.
        saver.put(config(thread), checkpoint, {"step": 0}, checkpoint["channel_versions"])
        records = store.list_run_records(store_run(saver, thread), limit=100).records
        assert sorted(r.type for r in records) == [
            "langgraph.blob",
            "langgraph.checkpoint",
            "langgraph.write",
            "run_started",
        ]
        found = saver.get_tuple(config(thread))
        assert found is not None
        assert found.checkpoint["channel_values"] == {"messages": ["hi"]}


def store_run(saver: RuntimeStoreSaver, thread: str) -> str:
    return saver.threads.log(thread).gen.run_id


def test_first_write_wins_and_special_channels_keep_the_newest(live_server: LiveServer) -> None:
    with HttpStore(live_server.base_url) as store:
        saver = RuntimeStoreSaver(store)
        thread = uuid.uuid4().hex
        stored = saver.put(config(thread), empty_checkpoint(), {}, {})
        saver.put_writes(stored, [("answer", "first"), (INTERRUPT, "ask once")], "task")
        saver.put_writes(stored, [("answer", "second"), (INTERRUPT, "ask again")], "task")
        # Another process's saver reads the same.
        for reader in (saver, RuntimeStoreSaver(store)):
            found = reader.get_tuple(stored)
            assert found is not None
            assert sorted(found.pending_writes or []) == [
                ("task", "__interrupt__", "ask again"),
                ("task", "answer", "first"),
            ]


def test_a_deleted_thread_starts_afresh_and_prune_keeps_the_latest(
    live_server: LiveServer,
) -> None:
    with HttpStore(live_server.base_url) as store:
        saver = RuntimeStoreSaver(store)
        thread = uuid.uuid4().hex
        first = saver.put(config(thread), empty_checkpoint(), {"step": 0}, {})
        saver.delete_thread(thread)
        assert saver.get_tuple(config(thread)) is None
        # Another process that knew the thread sees it gone, then sees the new one.
        other = RuntimeStoreSaver(store)
        second = saver.put(config(thread), empty_checkpoint(), {"step": 1}, {})
        found = other.get_tuple(config(thread))
        assert found is not None
        assert (
            found.config["configurable"]["checkpoint_id"]
            == (second["configurable"]["checkpoint_id"])
        )
        assert first != second
        parent = second
        for step in range(2, 5):
            parent = saver.put(
                config(thread, parent["configurable"]["checkpoint_id"]),
                empty_checkpoint(),
                {"step": step},
                {},
            )
        other.prune([thread])
        listed = list(saver.list(config(thread)))
        assert [t.metadata["step"] for t in listed] == [4]
        names = [saver.threads.session_id(thread, n) for n in range(3)]
        assert store.load_session_status(names[2]) == SessionStatus.ACTIVE
        saver.put(
            config(thread, listed[0].config["configurable"]["checkpoint_id"]),
            empty_checkpoint(),
            {"step": 5},
            {},
        )
        assert [t.metadata["step"] for t in other.list(config(thread))] == [5, 4]


def test_the_bare_client_imports_no_framework() -> None:
    script = (
        "import sys, runtime_store_client, runtime_store_client.http\n"
        "from runtime_store_client import HttpStore, AsyncHttpStore\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "assert not loaded & {'langgraph', 'langchain_core', 'agents', 'openai'}, loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
