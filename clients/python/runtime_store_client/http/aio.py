"""``AsyncHttpStore``: the async twins of ``Store``, ``SessionAdmin`` and ``MemoryStore``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import httpx
from httpx_aiohttp import AiohttpTransport

from ..protocols import BinaryReader, BinaryWriter
from ..transcript import Message
from ..types import (
    Record,
    RunMeta,
    Session,
    WaitUntil,
)
from . import _operations as ops
from . import _seeds, _transfer, _webhooks
from ._call import AsyncOperation, Call
from ._positions import Positions
from ._problems import problem_error
from ._requests import path_id, session_path_id
from ._retry import FAILURES, Attempts, RetryPolicy
from ._tail import AsyncRecordTail, run_stream_path, session_stream_path
from ._tls import with_default_tls
from .sync import make_client

T = TypeVar("T")


async def _raise_problem(response: httpx.Response) -> None:
    if response.status_code >= 400:
        await response.aread()
        raise problem_error(response)


#: ``httpx.AsyncClient`` arguments that belong to its transport.
_TRANSPORT_ARGS = ("verify", "cert", "trust_env", "limits", "proxy")


def _with_aiohttp(httpx_args: dict[str, Any] | None) -> dict[str, Any]:
    args = dict(httpx_args or {})
    if "transport" in args:
        return args
    args = with_default_tls(args)
    options = {name: args.pop(name) for name in _TRANSPORT_ARGS if name in args}
    args["transport"] = AiohttpTransport(**options)
    return args


class AsyncHttpStore:
    """A runtime-store over HTTP for asyncio; an async context manager."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 10.0,
        retries: int = 3,
        deadline: float = 30.0,
        httpx_args: dict[str, Any] | None = None,
        position: str | None = None,
    ) -> None:
        """As ``HttpStore``; ``httpx_args`` go to ``httpx.AsyncClient``.

        Requests go through aiohttp's connection pool (``httpx-aiohttp``) unless
        ``httpx_args`` names a ``transport``: httpcore's pool rescans every connection for
        every queued request, which at 16 concurrent calls cost more CPU than the rest of
        the client together (docs/performance.md). ``verify``, ``cert``, ``trust_env``,
        ``limits`` and ``proxy`` in ``httpx_args`` configure that transport; it does not
        read proxies from the environment (``HTTP_PROXY``…): pass ``proxy`` instead.
        """
        self._positions = Positions(position)
        self._client = make_client(
            base_url,
            token,
            timeout,
            _with_aiohttp(httpx_args),
            _raise_problem,
            self._positions,
            asynchronous=True,
        )
        self._policy = RetryPolicy(retries=retries, deadline=deadline)

    async def __aenter__(self) -> AsyncHttpStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.get_async_httpx_client().aclose()

    @property
    def position(self) -> str | None:
        """As ``HttpStore.position``."""
        return self._positions.current

    async def _run(self, call: Call[T]) -> T:
        attempts = Attempts(self._policy)
        while True:
            try:
                return await call.run_async(self._client)
            except FAILURES as exc:
                await asyncio.sleep(attempts.after(exc))

    # --- one request each: the call table (``_operations``, ``_webhooks``, ``_seeds``) ------

    start_root_run = AsyncOperation(ops.start_root_run)
    start_child_run = AsyncOperation(ops.start_child_run)
    start_one_shot_run = AsyncOperation(ops.start_one_shot_run)
    start_one_shot_child_run = AsyncOperation(ops.start_one_shot_child_run)
    start_synchronous_run = AsyncOperation(ops.start_synchronous_run)
    append_run_record = AsyncOperation(ops.append_run_record)
    append_run_records = AsyncOperation(ops.append_run_records)
    record_run_cancellation = AsyncOperation(ops.record_run_cancellation)
    record_run_suspension = AsyncOperation(ops.record_run_suspension)
    record_run_terminal = AsyncOperation(ops.record_run_terminal)
    repair_run_suspension = AsyncOperation(ops.repair_run_suspension)
    repair_run_terminal = AsyncOperation(ops.repair_run_terminal)
    load_run = AsyncOperation(ops.load_run)
    load_session_status = AsyncOperation(ops.load_session_status)
    load_run_suspension = AsyncOperation(ops.load_run_suspension)
    list_run_records = AsyncOperation(ops.list_run_records)
    list_session_run_records = AsyncOperation(ops.list_session_run_records)
    list_run_transcript_records = AsyncOperation(ops.list_run_transcript_records)
    load_run_record = AsyncOperation(ops.load_run_record)
    create_session = AsyncOperation(ops.create_session)
    load_session = AsyncOperation(ops.load_session)
    end_session = AsyncOperation(ops.end_session)
    purge_session = AsyncOperation(ops.purge_session)
    list_session_runs = AsyncOperation(ops.list_session_runs)
    list_sessions = AsyncOperation(ops.list_sessions)
    search_runs = AsyncOperation(ops.search_runs)
    count_sessions = AsyncOperation(ops.count_sessions)
    count_runs = AsyncOperation(ops.count_runs)
    count_records = AsyncOperation(ops.count_records)
    load_memory = AsyncOperation(ops.load_memory)
    append_memory_events = AsyncOperation(ops.append_memory_events)
    whoami = AsyncOperation(ops.whoami)
    create_webhook = AsyncOperation(_webhooks.create_webhook)
    list_webhooks = AsyncOperation(_webhooks.list_webhooks)
    delete_webhook = AsyncOperation(_webhooks.delete_webhook)
    list_webhook_deliveries = AsyncOperation(_webhooks.list_webhook_deliveries)
    retry_webhook_delivery = AsyncOperation(_webhooks.retry_webhook_delivery)
    begin_run_seed = AsyncOperation(_seeds.begin_run_seed)
    append_run_seed = AsyncOperation(_seeds.append_run_seed)
    publish_run_seed = AsyncOperation(_seeds.publish_run_seed)
    find_run_preparation = AsyncOperation(_seeds.find_run_preparation)
    settle_run_preparation = AsyncOperation(_seeds.settle_run_preparation)
    load_run_seed = AsyncOperation(_seeds.load_run_seed)
    list_run_seed_records = AsyncOperation(_seeds.list_run_seed_records)
    list_run_preparation_records = AsyncOperation(_seeds.list_run_preparation_records)

    # --- more than one request ------------------------------------------------------------

    def tail_run_records(self, run_id: str, cursor: str = "") -> AsyncRecordTail:
        """The run's records after ``cursor``, then each one as it commits (11.3); ends
        once the run is completed, failed or canceled and its last record was read, or
        when its session is purged. Reconnects and resumes on a dropped connection."""
        path = run_stream_path(path_id(run_id, "run_id"))
        return AsyncRecordTail(self._client.get_async_httpx_client(), path, cursor, self._policy)

    def tail_session_run_records(self, session_id: str, cursor: str = "") -> AsyncRecordTail:
        """The session's records after ``cursor`` in commit order, then each one as it
        commits (11.3); ends when the session is purged."""
        path = session_stream_path(session_path_id(session_id))
        return AsyncRecordTail(self._client.get_async_httpx_client(), path, cursor, self._policy)

    async def load_transcript(
        self, run_id: str, *, validate: str | None = None, thinking: bool = False
    ) -> list[Message]:
        """The run's transcript, page by page (section 10); ``validate`` is ``planner`` or
        ``bedrock`` (with ``thinking``) and raises ``InvalidTranscriptError`` with every
        violation when the transcript breaks a rule."""
        messages: list[Message] = []
        cursor = ""
        while True:
            page, cursor = await self._run(
                ops.transcript_page(run_id, cursor, None if cursor else validate, thinking)
            )
            messages.extend(page)
            if not cursor:
                return messages

    async def iter_run_records(
        self, run_id: str, *, after: str = "", limit: int = 100
    ) -> AsyncIterator[Record]:
        """Every record of a run after the record ID ``after``, page by page."""
        cursor = after
        while True:
            page = await self.list_run_records(run_id, cursor, limit)
            for record in page.records:
                yield record
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def iter_sessions(self, *, limit: int = 100, **filters: Any) -> AsyncIterator[Session]:
        """Every session ``list_sessions`` finds with these filters, page by page."""
        cursor = ""
        while True:
            page = await self.list_sessions(cursor=cursor, limit=limit, **filters)
            for session in page.sessions:
                yield session
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def iter_runs(self, *, limit: int = 100, **filters: Any) -> AsyncIterator[RunMeta]:
        """Every run ``search_runs`` finds with these filters, page by page."""
        cursor = ""
        while True:
            page = await self.search_runs(cursor=cursor, limit=limit, **filters)
            for run in page.runs:
                yield run
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def iter_session_run_records(
        self, session_id: str, *, limit: int = 100
    ) -> AsyncIterator[Record]:
        """Every record of a session in commit order, page by page."""
        cursor = ""
        while True:
            page = await self.list_session_run_records(session_id, cursor, limit)
            for record in page.records:
                yield record
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def export_session(self, session_id: str, file: BinaryWriter) -> None:
        """Write the session's NDJSON export, read in one snapshot, to a binary file
        (11.4); ``UnavailableError`` if it was cut short."""
        await _transfer.export_session_async(
            self._client.get_async_httpx_client(), self._policy, session_id, file
        )

    async def import_session(self, file: BinaryReader) -> Session:
        """Recreate an exported session from a binary file in one transaction (11.4);
        never retried (see ``http/_transfer.py``)."""
        return await _transfer.import_session_async(self._client.get_async_httpx_client(), file)

    async def wait_for_run(
        self, run_id: str, until: WaitUntil | str = WaitUntil.FINISHED, timeout: float = 30.0
    ) -> RunMeta:
        """The run's meta once it reaches ``until`` (``finished``, or ``stopped``: also
        suspended), waiting at most ``timeout`` seconds (13.4): a wait the server ended at
        its own bound is asked again; at ``timeout`` the current meta is returned."""
        _webhooks.check_wait(until, timeout)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            meta, timed_out = await self._run(
                _webhooks.wait(run_id, until, deadline - asyncio.get_running_loop().time())
            )
            if not timed_out or asyncio.get_running_loop().time() >= deadline:
                return meta
