"""LangGraph checkpointers on runtime-store (``pip install 'runtime-store-client[langgraph]'``).

``RuntimeStoreSaver(HttpStore(...))`` and ``AsyncRuntimeStoreSaver(AsyncHttpStore(...))``
implement LangGraph's ``BaseCheckpointSaver``. A thread is a runtime-store session with one
long-lived run; each checkpoint, each channel value (blob) and each pending write is a
record whose event key names it, so a retried ``put`` is an exact retry and an ordinary
write's first value wins by the store's own key rule; the special channels (errors,
interrupts, resumes, scheduled) keep their newest value. ``delete_thread`` and
``prune`` retire the thread's session (ended, purged) and go on in the next one;
``copy_thread`` copies the records. ``delete_for_runs`` is refused: docs/frameworks.md.

The bare client never imports this module, nor LangGraph.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.base.id import UUID as UUID6
from langgraph.checkpoint.serde.base import SerializerProtocol

from ._adapters import (
    Entry,
    Generation,
    LogSpace,
    LogView,
    Steps,
    adrive,
    drive,
    event_key,
    json_bytes,
    now_ms,
    to_ms,
)
from .types import Record

__all__ = ["AsyncRuntimeStoreSaver", "RuntimeStoreSaver"]

CHECKPOINT = "langgraph.checkpoint"
BLOB = "langgraph.blob"
WRITE = "langgraph.write"
_TYPES = frozenset({CHECKPOINT, BLOB, WRITE})

#: 100-ns intervals from the Gregorian reform (a UUID's epoch) to the Unix epoch.
_UUID_EPOCH_OFFSET = 0x01B21DD213814000
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Typed = tuple[str, bytes]


def _typed_json(value: Typed) -> list[str]:
    return [value[0], base64.b64encode(value[1]).decode("ascii")]


def _typed(value: list[str]) -> Typed:
    return (value[0], base64.b64decode(value[1]))


@dataclass(frozen=True)
class _Saved:
    checkpoint: Typed
    metadata: Typed
    parent: str | None
    versions: dict[str, str]


@dataclass(frozen=True)
class _Write:
    task_id: str
    channel: str
    value: Typed
    task_path: str
    idx: int


class ThreadView(LogView):
    """A thread as read so far: checkpoints, channel values and writes by namespace."""

    def __init__(self) -> None:
        self.checkpoints: dict[str, dict[str, _Saved]] = {}
        self.blobs: dict[tuple[str, str, str], Typed] = {}
        self.writes: dict[tuple[str, str], dict[tuple[str, int], _Write]] = {}

    def apply(self, record: Record) -> None:
        if record.type not in _TYPES:
            return
        p = json.loads(record.payload)
        ns = p["ns"]
        if record.type == CHECKPOINT:
            saved = _Saved(
                _typed(p["checkpoint"]), _typed(p["metadata"]), p["parent"], p["versions"]
            )
            self.checkpoints.setdefault(ns, {}).setdefault(p["id"], saved)
        elif record.type == BLOB:
            self.blobs.setdefault((ns, p["channel"], p["version"]), _typed(p["value"]))
        else:
            slot = (p["task"], p["idx"])
            write = _Write(p["task"], p["channel"], _typed(p["value"]), p["path"], p["idx"])
            writes = self.writes.setdefault((ns, p["checkpoint"]), {})
            if p["idx"] < 0 or slot not in writes:  # special channels: the newest wins
                writes[slot] = write

    @staticmethod
    def keep(records: Sequence[Record], mode: str) -> list[Record]:
        """``latest``: per namespace the newest checkpoint, its channel values and writes."""
        if mode == "none":
            return []
        if mode != "latest":
            raise ValueError(f"unknown retirement mode {mode!r}")
        parsed = [(r, json.loads(r.payload)) for r in records if r.type in _TYPES]
        latest: dict[str, dict[str, Any]] = {}
        for record, p in parsed:
            if record.type == CHECKPOINT and p["id"] > latest.get(p["ns"], {"id": ""})["id"]:
                latest[p["ns"]] = p
        kept: list[Record] = []
        for record, p in parsed:
            head = latest.get(p["ns"])
            if head is None:
                continue
            if (
                (record.type == CHECKPOINT and p["id"] == head["id"])
                or (record.type == BLOB and head["versions"].get(p["channel"]) == p["version"])
                or (record.type == WRITE and p["checkpoint"] == head["id"])
            ):
                kept.append(record)
        return kept


def _time_of(checkpoint_id: str) -> datetime:
    """The time inside a LangGraph checkpoint ID (a UUID v6), so that the records of a
    repeated call are the same records; now for an ID that holds none."""
    try:
        uuid = UUID6(checkpoint_id)
    except ValueError:
        return now_ms()
    if uuid.version not in (1, 6):
        return now_ms()
    return to_ms(_UNIX_EPOCH + timedelta(microseconds=(uuid.time - _UUID_EPOCH_OFFSET) // 10))


def _checkpoint_time(checkpoint: Checkpoint) -> datetime:
    try:
        return to_ms(datetime.fromisoformat(checkpoint["ts"]))
    except (KeyError, TypeError, ValueError):
        return _time_of(checkpoint["id"])


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


class _Saver(BaseCheckpointSaver[str]):
    """The logic of both savers, as steps (``_adapters``)."""

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        prefix: str = "langgraph/",
        agent_id: str = "langgraph",
        max_cached_threads: int = 256,
    ) -> None:
        super().__init__(serde=serde)
        self.threads: LogSpace[ThreadView] = LogSpace(
            framework="langgraph",
            prefix=prefix,
            agent_id=agent_id,
            view_type=ThreadView,
            max_cached=max_cached_threads,
        )

    # -- writing ------------------------------------------------------------------------------

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Steps[RunnableConfig]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        parent = configurable.get("checkpoint_id")
        copy = checkpoint.copy()
        values: dict[str, Any] = copy.pop("channel_values")  # type: ignore[misc]
        at = _checkpoint_time(checkpoint)
        entries = [
            Entry(
                event_key("blob", ns, channel, str(version)),
                BLOB,
                json_bytes(
                    {
                        "ns": ns,
                        "channel": channel,
                        "version": str(version),
                        "value": _typed_json(
                            self.serde.dumps_typed(values[channel])
                            if channel in values
                            else ("empty", b"")
                        ),
                    }
                ),
                at,
            )
            for channel, version in new_versions.items()
        ]
        entries.append(
            Entry(
                event_key("cp", ns, checkpoint["id"]),
                CHECKPOINT,
                json_bytes(
                    {
                        "ns": ns,
                        "id": checkpoint["id"],
                        "parent": parent,
                        "versions": {
                            channel: str(version)
                            for channel, version in checkpoint["channel_versions"].items()
                        },
                        "checkpoint": _typed_json(self.serde.dumps_typed(copy)),
                        "metadata": _typed_json(
                            self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))
                        ),
                    }
                ),
                at,
            )
        )
        yield from self.threads.log(thread_id).append(entries)
        return _config(thread_id, ns, checkpoint["id"])

    def _put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> Steps[None]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = configurable["checkpoint_id"]
        at = _time_of(checkpoint_id)
        entries = []
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            typed = self.serde.dumps_typed(value)
            parts: list[object] = ["w", ns, checkpoint_id, task_id, idx]
            if idx < 0:  # the newest wins: each value its own record (docs/frameworks.md)
                parts.append(hashlib.sha256(typed[0].encode() + b"\0" + typed[1]).hexdigest()[:32])
            payload = {
                "ns": ns,
                "checkpoint": checkpoint_id,
                "task": task_id,
                "idx": idx,
                "channel": channel,
                "value": _typed_json(typed),
                "path": task_path,
            }
            entries.append(Entry(event_key(*parts), WRITE, json_bytes(payload), at))
        yield from self.threads.log(thread_id).append(entries)

    # -- reading ------------------------------------------------------------------------------

    def _tuple(
        self, thread_id: str, ns: str, checkpoint_id: str, view: ThreadView
    ) -> CheckpointTuple:
        saved = view.checkpoints[ns][checkpoint_id]
        checkpoint: Checkpoint = self.serde.loads_typed(saved.checkpoint)
        values: dict[str, Any] = {}
        for channel, version in saved.versions.items():
            blob = view.blobs.get((ns, channel, version))
            if blob is not None and blob[0] != "empty":
                values[channel] = self.serde.loads_typed(blob)
        stored = view.writes.get((ns, checkpoint_id), {})
        ordered = sorted(
            stored.values(), key=lambda w: writes_sort_key(w.task_path, w.task_id, w.idx)
        )
        pending: list[PendingWrite] = [
            (w.task_id, w.channel, self.serde.loads_typed(w.value)) for w in ordered
        ]
        return CheckpointTuple(
            config=_config(thread_id, ns, checkpoint_id),
            checkpoint={**checkpoint, "channel_values": values},
            metadata=cast(CheckpointMetadata, self.serde.loads_typed(saved.metadata)),
            parent_config=_config(thread_id, ns, saved.parent) if saved.parent else None,
            pending_writes=pending,
        )

    def _read(self, thread_id: str) -> Steps[ThreadView]:
        gen: Generation[ThreadView] = yield from self.threads.log(thread_id).catch_up()
        return gen.view

    def _get_tuple(self, config: RunnableConfig) -> Steps[CheckpointTuple | None]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        ns = configurable.get("checkpoint_ns", "")
        view = yield from self._read(thread_id)
        checkpoints = view.checkpoints.get(ns)
        if not checkpoints:
            return None
        checkpoint_id = get_checkpoint_id(config) or max(checkpoints)
        if checkpoint_id not in checkpoints:
            return None
        return self._tuple(thread_id, ns, checkpoint_id, view)

    def _list(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Steps[list[CheckpointTuple]]:
        if config is None:
            raise ValueError(
                "RuntimeStoreSaver lists the checkpoints of one thread: "
                "the config must name a thread_id"
            )
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        only_ns = configurable.get("checkpoint_ns")
        only_id = get_checkpoint_id(config)
        before_id = get_checkpoint_id(before) if before else None
        view = yield from self._read(thread_id)
        found: list[CheckpointTuple] = []
        for ns, checkpoints in view.checkpoints.items():
            if only_ns is not None and ns != only_ns:
                continue
            for checkpoint_id in sorted(checkpoints, reverse=True):
                if limit is not None and len(found) >= limit:
                    return found
                if (only_id and checkpoint_id != only_id) or (
                    before_id and checkpoint_id >= before_id
                ):
                    continue
                if filter:
                    metadata = self.serde.loads_typed(checkpoints[checkpoint_id].metadata)
                    if not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                found.append(self._tuple(thread_id, ns, checkpoint_id, view))
        return found[:limit] if limit is not None else found

    # -- threads ------------------------------------------------------------------------------

    def _delete_thread(self, thread_id: str) -> Steps[None]:
        yield from self.threads.log(str(thread_id)).retire("none")

    def _copy_thread(self, source: str, target: str) -> Steps[None]:
        log = self.threads.log(str(source))
        gen: Generation[ThreadView] = yield from log.catch_up()
        records = yield from log.read_all(gen)
        entries = [
            Entry(r.event_key, r.type, r.payload, r.timestamp)
            for r in records or ()
            if r.type in _TYPES
        ]
        if entries:
            yield from self.threads.log(str(target)).append(entries)

    def _prune(self, thread_ids: Sequence[str], strategy: str) -> Steps[None]:
        modes = {"keep_latest": "latest", "delete": "none"}
        if strategy not in modes:
            raise ValueError(f"unknown prune strategy {strategy!r}: keep_latest or delete")
        for thread_id in thread_ids:
            yield from self.threads.log(str(thread_id)).retire(modes[strategy])

    def get_next_version(self, current: str | None, channel: None) -> str:
        """As ``InMemorySaver``: increasing, and unique (a random fraction), so that a
        channel value's key is never reused for another value."""
        del channel  # deprecated by LangGraph
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"


class RuntimeStoreSaver(_Saver):
    """A LangGraph checkpointer on a ``HttpStore`` (synchronous; its async methods run the
    synchronous ones in a worker thread)."""

    def __init__(self, store: Any, **options: Any) -> None:
        super().__init__(**options)
        self.store = store

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return drive(self.store, self._put(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        drive(self.store, self._put_writes(config, writes, task_id, task_path))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return drive(self.store, self._get_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return iter(drive(self.store, self._list(config, filter, before, limit)))

    def delete_thread(self, thread_id: str) -> None:
        drive(self.store, self._delete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        drive(self.store, self._copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        drive(self.store, self._prune(thread_ids, strategy))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        steps = self._list(config, filter, before, limit)
        for item in await asyncio.to_thread(drive, self.store, steps):
            yield item

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


class AsyncRuntimeStoreSaver(_Saver):
    """A LangGraph checkpointer on an ``AsyncHttpStore``. Its synchronous methods may be
    called from other threads while the event loop it was made on runs (as LangGraph's
    own async savers)."""

    def __init__(self, store: Any, **options: Any) -> None:
        super().__init__(**options)
        self.store = store
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    def _sync(self, steps: Steps[Any]) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self.loop is None or running is self.loop:
            raise RuntimeError(
                "AsyncRuntimeStoreSaver's synchronous methods run only from another thread "
                "while its event loop runs: use the async methods (ainvoke, astream), or "
                "RuntimeStoreSaver with an HttpStore"
            )
        return asyncio.run_coroutine_threadsafe(adrive(self.store, steps), self.loop).result()

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await adrive(self.store, self._put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await adrive(self.store, self._put_writes(config, writes, task_id, task_path))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await adrive(self.store, self._get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in await adrive(self.store, self._list(config, filter, before, limit)):
            yield item

    async def adelete_thread(self, thread_id: str) -> None:
        await adrive(self.store, self._delete_thread(thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await adrive(self.store, self._copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await adrive(self.store, self._prune(thread_ids, strategy))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        result: RunnableConfig = self._sync(self._put(config, checkpoint, metadata, new_versions))
        return result

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._sync(self._put_writes(config, writes, task_id, task_path))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        result: CheckpointTuple | None = self._sync(self._get_tuple(config))
        return result

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        found: list[CheckpointTuple] = self._sync(self._list(config, filter, before, limit))
        return iter(found)

    def delete_thread(self, thread_id: str) -> None:
        self._sync(self._delete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync(self._copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._sync(self._prune(thread_ids, strategy))
