"""``AsyncHttpStore``: the async twins of ``Store``, ``SessionAdmin`` and ``MemoryStore``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx
from httpx_aiohttp import AiohttpTransport

from ..errors import StoreError
from ..protocols import BinaryReader, BinaryWriter
from ..transcript import Message
from ..types import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
    CreatedWebhook,
    DeliveryPage,
    MemoryEvent,
    OneShotChildRunStartResult,
    OneShotRunStartResult,
    Page,
    Record,
    RepairResult,
    RootRunStartResult,
    RunMeta,
    RunPage,
    RunStart,
    RunStatus,
    Session,
    SessionPage,
    SessionStatus,
    Snapshot,
    WaitUntil,
    Webhook,
    WebhookDelivery,
)
from . import _calls as calls
from . import _transfer, _webhooks
from ._convert import path_id, problem_error, session_path_id
from ._positions import Positions
from ._retry import Attempts, RetryPolicy, transport_error, unencodable_text, unsendable
from ._tail import AsyncRecordTail, run_stream_path, session_stream_path
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

    async def _run(self, call: calls.Call[T]) -> T:
        attempts = Attempts(self._policy)
        while True:
            try:
                return await call.run_async(self._client)
            except UnicodeEncodeError as exc:
                raise unencodable_text(exc) from None
            except httpx.InvalidURL as exc:
                raise unsendable(exc) from None
            except httpx.TransportError as exc:
                error: StoreError = transport_error(exc)
                cause: BaseException = exc
            except StoreError as exc:
                error, cause = exc, exc
            delay = attempts.next_delay(error)
            if delay is None:
                if error is cause:
                    raise error
                raise error from cause
            await asyncio.sleep(delay)

    async def start_root_run(
        self,
        run: RunStart,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> RootRunStartResult:
        """Start a root run of a session (CONTRACT.md 3.3, 12.1)."""
        return await self._run(calls.start_root(run, started, canceled, request_digest))

    async def start_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> ChildRunStartResult:
        """Start a child run linked from a running parent (3.4, 12.1, 12.4)."""
        return await self._run(
            calls.start_child(run, parent_linked, started, canceled, request_digest)
        )

    async def start_one_shot_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult:
        """Start a sessionless run (3.5, 12.1)."""
        return await self._run(calls.start_one_shot(run, started, request_digest))

    async def start_one_shot_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        *,
        request_digest: bytes | None = None,
    ) -> OneShotChildRunStartResult:
        """Start a sessionless child run (3.6, 12.1)."""
        return await self._run(
            calls.start_one_shot_child(run, parent_linked, started, request_digest)
        )

    async def start_synchronous_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult:
        """Start a run no workflow engine accepted (12.2); it takes no request digest."""
        return await self._run(calls.start_synchronous(run, started, request_digest))

    async def append_run_record(self, record: Record) -> AppendResult:
        """Append an ordinary record (3.7)."""
        return await self._run(calls.append(record))

    async def append_run_records(
        self, run_id: str, records: Sequence[Record]
    ) -> list[AppendResult]:
        """Append 1 to 1,000 ordinary records of one run, all or nothing, in order (11.2)."""
        return await self._run(calls.append_batch(run_id, records))

    async def record_run_cancellation(
        self, run_id: str, reason: str, record: Record
    ) -> AppendResult:
        """Store the first cancellation reason (3.8)."""
        return await self._run(calls.cancellation(run_id, reason, record))

    async def record_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> AppendResult:
        """Suspend a run with its checkpoint (3.9)."""
        return await self._run(calls.suspension(run_id, checkpoint, record))

    async def record_run_terminal(
        self, run_id: str, status: RunStatus, record: Record
    ) -> AppendResult:
        """Finish a run (3.10)."""
        return await self._run(calls.terminal(run_id, status, record))

    async def repair_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> RepairResult:
        """Make sure a suspension is stored (3.11)."""
        return await self._run(calls.repair_suspension(run_id, checkpoint, record))

    async def repair_run_terminal(
        self, run_id: str, status: RunStatus, record: Record
    ) -> RepairResult:
        """Make sure a terminal status is stored (3.11)."""
        return await self._run(calls.repair_terminal(run_id, status, record))

    async def load_run(self, run_id: str) -> RunMeta:
        """The run's meta (3.12)."""
        return await self._run(calls.get_run(run_id))

    async def load_session_status(self, session_id: str) -> SessionStatus:
        """``active`` or ``ended`` (3.2)."""
        return await self._run(calls.get_session_status(session_id))

    async def load_run_suspension(self, run_id: str) -> Checkpoint:
        """The checkpoint of a suspended run (3.12)."""
        return await self._run(calls.get_run_suspension(run_id))

    async def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of one run's records, oldest first (section 4)."""
        return await self._run(calls.run_records(run_id, cursor, limit))

    async def list_session_run_records(
        self, session_id: str, cursor: str = "", limit: int = 100
    ) -> Page:
        """A page of a session's records in commit order (section 4)."""
        return await self._run(calls.session_records(session_id, cursor, limit))

    async def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        """The run's transcript records after ``after`` up to and including the record
        ``through``, in record order (12.3); the same arguments, the same page."""
        return await self._run(calls.transcript_records(run_id, through, after, limit))

    async def load_run_record(self, run_id: str, event_key: str) -> Record:
        """The record stored under ``event_key`` in the run (12.5)."""
        return await self._run(calls.record_by_key(run_id, event_key))

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

    async def create_session(self, session_id: str, created_at: datetime) -> Session:
        """Create a session, or return the active one (3.1)."""
        return await self._run(calls.new_session(session_id, created_at))

    async def load_session(self, session_id: str) -> Session:
        """The session (3.1)."""
        return await self._run(calls.get_session(session_id))

    async def end_session(self, session_id: str, ended_at: datetime) -> Session:
        """End a session (3.1)."""
        return await self._run(calls.finish_session(session_id, ended_at))

    async def purge_session(self, session_id: str) -> None:
        """Purge an ended session; its IDs stay reserved (3.1)."""
        return await self._run(calls.purge(session_id))

    async def list_session_runs(
        self,
        session_id: str,
        statuses: Sequence[RunStatus] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage:
        """A page of a session's runs (3.1)."""
        return await self._run(calls.session_runs(session_id, statuses, cursor, limit))

    async def list_sessions(
        self,
        statuses: Sequence[SessionStatus] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> SessionPage:
        """Sessions, newest ``created_at`` first, ties by ID; purged ones never (11.1)."""
        return await self._run(
            calls.sessions_list(statuses, created_after, created_before, cursor, limit)
        )

    async def search_runs(  # noqa: PLR0913, PLR0917 (the contract's signature, 11.1)
        self,
        statuses: Sequence[RunStatus] = (),
        agent_id: str = "",
        session_id: str = "",
        parent_run_id: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage:
        """Runs across sessions, newest ``started_at`` first, ties by run ID (11.1)."""
        return await self._run(
            calls.runs_search(
                statuses,
                agent_id,
                session_id,
                parent_run_id,
                labels,
                started_after,
                started_before,
                cursor,
                limit,
            )
        )

    async def load_memory(self, agent_id: str, run_id: str) -> Snapshot:
        """The memory events of an agent's run (section 9)."""
        return await self._run(calls.get_memory(agent_id, run_id))

    async def append_memory_events(
        self, agent_id: str, run_id: str, events: Sequence[MemoryEvent]
    ) -> None:
        """Append memory events atomically (section 9)."""
        return await self._run(calls.add_memory(agent_id, run_id, events))

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
                calls.transcript_page(run_id, cursor, None if cursor else validate, thinking)
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

    # --- webhooks and waiting (13) --------------------------------------------------------

    async def create_webhook(self, url: str, events: Sequence[str]) -> CreatedWebhook:
        """Subscribe ``url`` to event types (13.1); the answer's ``secret`` is shown once."""
        return await self._run(_webhooks.new_webhook(url, events))

    async def list_webhooks(self) -> list[Webhook]:
        """Every subscription, without secrets."""
        return await self._run(_webhooks.webhooks())

    async def delete_webhook(self, webhook_id: str) -> None:
        """Delete a subscription (``WebhookNotFoundError`` if unknown)."""
        await self._run(_webhooks.remove_webhook(webhook_id))

    async def list_webhook_deliveries(
        self, webhook_id: str, statuses: Sequence[str] = (), cursor: str = "", limit: int = 100
    ) -> DeliveryPage:
        """A page of a subscription's deliveries, in commit order (13.3)."""
        return await self._run(_webhooks.deliveries(webhook_id, statuses, cursor, limit))

    async def retry_webhook_delivery(self, webhook_id: str, event_id: str) -> WebhookDelivery:
        """Queue a failed delivery again (13.3)."""
        return await self._run(_webhooks.retry_delivery(webhook_id, event_id))

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
