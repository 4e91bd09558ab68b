"""``HttpStore``: the ``Store``, ``SessionAdmin`` and ``MemoryStore`` protocols over HTTP.

Use it exactly as the in-process store::

    with HttpStore("http://127.0.0.1:8000") as store:
        store.create_session("chat-1", datetime.now(UTC).replace(microsecond=0))

Every problem body becomes the contract error of its ``code``; only ``UnavailableError``
is retried (see ``_retry``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx

from .._generated.client import AuthenticatedClient, Client
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
from ._tail import RecordTail, run_stream_path, session_stream_path

T = TypeVar("T")


def _raise_problem(response: httpx.Response) -> None:
    if response.status_code >= 400:
        response.read()
        raise problem_error(response)


def make_client(
    base_url: str,
    token: str | None,
    timeout: float,
    httpx_args: dict[str, Any] | None,
    hook: Any,
    positions: Positions,
    *,
    asynchronous: bool = False,
) -> Client | AuthenticatedClient:
    """The generated client, raising contract errors from an httpx response hook and
    keeping the positions of writes for later reads (``_positions``)."""
    args = dict(httpx_args or {})
    hooks = dict(args.pop("event_hooks", {}))
    on_request: Any = positions.on_request_async if asynchronous else positions.on_request
    on_response: Any = positions.on_response_async if asynchronous else positions.on_response
    # The position first: the caller's own request hooks see the request as it is sent.
    hooks["request"] = [on_request, *hooks.get("request", [])]
    # Positions first: a write's answer carries one even when the hook raises for it.
    hooks["response"] = [*hooks.get("response", []), on_response, hook]
    options: dict[str, Any] = {
        "base_url": base_url.rstrip("/"),
        "timeout": httpx.Timeout(timeout),
        "httpx_args": {**args, "event_hooks": hooks},
        "raise_on_unexpected_status": False,
    }
    if token:
        return AuthenticatedClient(token=token, **options)
    return Client(**options)


class HttpStore:
    """A runtime-store over HTTP; a context manager that closes its connections."""

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
        """``retries`` bounds the retries of one call and ``deadline`` its total seconds;
        ``httpx_args`` go to ``httpx.Client`` (a transport, a proxy, TLS settings);
        ``position``: a write position another client saw, that this one's reads must
        see as well (read replicas: ``position``)."""
        self._positions = Positions(position)
        self._client = make_client(
            base_url, token, timeout, httpx_args, _raise_problem, self._positions
        )
        self._policy = RetryPolicy(retries=retries, deadline=deadline)

    def __enter__(self) -> HttpStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.get_httpx_client().close()

    @property
    def position(self) -> str | None:
        """The highest ``Runtime-Store-Position`` this store's writes were answered with
        (``None`` before any, or without read replicas); its reads send it so that a read
        replica serves them only once it holds those writes."""
        return self._positions.current

    def _run(self, call: calls.Call[T]) -> T:
        attempts = Attempts(self._policy)
        while True:
            try:
                return call.run(self._client)
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
            time.sleep(delay)

    def start_root_run(
        self,
        run: RunStart,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> RootRunStartResult:
        """Start a root run of a session (CONTRACT.md 3.3, 12.1)."""
        return self._run(calls.start_root(run, started, canceled, request_digest))

    def start_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        canceled: Record,
        *,
        request_digest: bytes | None = None,
    ) -> ChildRunStartResult:
        """Start a child run linked from a running parent (3.4, 12.1, 12.4)."""
        return self._run(calls.start_child(run, parent_linked, started, canceled, request_digest))

    def start_one_shot_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult:
        """Start a sessionless run (3.5, 12.1)."""
        return self._run(calls.start_one_shot(run, started, request_digest))

    def start_one_shot_child_run(
        self,
        run: RunStart,
        parent_linked: Record,
        started: Record,
        *,
        request_digest: bytes | None = None,
    ) -> OneShotChildRunStartResult:
        """Start a sessionless child run (3.6, 12.1)."""
        return self._run(calls.start_one_shot_child(run, parent_linked, started, request_digest))

    def start_synchronous_run(
        self, run: RunStart, started: Record, *, request_digest: bytes | None = None
    ) -> OneShotRunStartResult:
        """Start a run no workflow engine accepted (12.2); it takes no request digest."""
        return self._run(calls.start_synchronous(run, started, request_digest))

    def append_run_record(self, record: Record) -> AppendResult:
        """Append an ordinary record (3.7)."""
        return self._run(calls.append(record))

    def append_run_records(self, run_id: str, records: Sequence[Record]) -> list[AppendResult]:
        """Append 1 to 1,000 ordinary records of one run, all or nothing, in order (11.2)."""
        return self._run(calls.append_batch(run_id, records))

    def record_run_cancellation(self, run_id: str, reason: str, record: Record) -> AppendResult:
        """Store the first cancellation reason (3.8)."""
        return self._run(calls.cancellation(run_id, reason, record))

    def record_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> AppendResult:
        """Suspend a run with its checkpoint (3.9)."""
        return self._run(calls.suspension(run_id, checkpoint, record))

    def record_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> AppendResult:
        """Finish a run (3.10)."""
        return self._run(calls.terminal(run_id, status, record))

    def repair_run_suspension(
        self, run_id: str, checkpoint: Checkpoint, record: Record
    ) -> RepairResult:
        """Make sure a suspension is stored (3.11)."""
        return self._run(calls.repair_suspension(run_id, checkpoint, record))

    def repair_run_terminal(self, run_id: str, status: RunStatus, record: Record) -> RepairResult:
        """Make sure a terminal status is stored (3.11)."""
        return self._run(calls.repair_terminal(run_id, status, record))

    def load_run(self, run_id: str) -> RunMeta:
        """The run's meta (3.12)."""
        return self._run(calls.get_run(run_id))

    def load_session_status(self, session_id: str) -> SessionStatus:
        """``active`` or ``ended`` (3.2)."""
        return self._run(calls.get_session_status(session_id))

    def load_run_suspension(self, run_id: str) -> Checkpoint:
        """The checkpoint of a suspended run (3.12)."""
        return self._run(calls.get_run_suspension(run_id))

    def list_run_records(self, run_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of one run's records, oldest first (section 4)."""
        return self._run(calls.run_records(run_id, cursor, limit))

    def list_session_run_records(self, session_id: str, cursor: str = "", limit: int = 100) -> Page:
        """A page of a session's records in commit order (section 4)."""
        return self._run(calls.session_records(session_id, cursor, limit))

    def list_run_transcript_records(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> Page:
        """The run's transcript records after ``after`` up to and including the record
        ``through``, in record order (12.3); the same arguments, the same page."""
        return self._run(calls.transcript_records(run_id, through, after, limit))

    def load_run_record(self, run_id: str, event_key: str) -> Record:
        """The record stored under ``event_key`` in the run (12.5)."""
        return self._run(calls.record_by_key(run_id, event_key))

    def tail_run_records(self, run_id: str, cursor: str = "") -> RecordTail:
        """The run's records after ``cursor``, then each one as it commits (11.3); ends
        once the run is completed, failed or canceled and its last record was read, or
        when its session is purged. Reconnects and resumes on a dropped connection."""
        path = run_stream_path(path_id(run_id, "run_id"))
        return RecordTail(self._client.get_httpx_client(), path, cursor, self._policy)

    def tail_session_run_records(self, session_id: str, cursor: str = "") -> RecordTail:
        """The session's records after ``cursor`` in commit order, then each one as it
        commits (11.3); ends when the session is purged."""
        path = session_stream_path(session_path_id(session_id))
        return RecordTail(self._client.get_httpx_client(), path, cursor, self._policy)

    def create_session(self, session_id: str, created_at: datetime) -> Session:
        """Create a session, or return the active one (3.1)."""
        return self._run(calls.new_session(session_id, created_at))

    def load_session(self, session_id: str) -> Session:
        """The session (3.1)."""
        return self._run(calls.get_session(session_id))

    def end_session(self, session_id: str, ended_at: datetime) -> Session:
        """End a session (3.1)."""
        return self._run(calls.finish_session(session_id, ended_at))

    def purge_session(self, session_id: str) -> None:
        """Purge an ended session; its IDs stay reserved (3.1)."""
        return self._run(calls.purge(session_id))

    def list_session_runs(
        self,
        session_id: str,
        statuses: Sequence[RunStatus] = (),
        cursor: str = "",
        limit: int = 100,
    ) -> RunPage:
        """A page of a session's runs (3.1)."""
        return self._run(calls.session_runs(session_id, statuses, cursor, limit))

    def list_sessions(
        self,
        statuses: Sequence[SessionStatus] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        cursor: str = "",
        limit: int = 100,
    ) -> SessionPage:
        """Sessions, newest ``created_at`` first, ties by ID; purged ones never (11.1)."""
        return self._run(
            calls.sessions_list(statuses, created_after, created_before, cursor, limit)
        )

    def search_runs(  # noqa: PLR0913, PLR0917 (the contract's signature, 11.1)
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
        return self._run(
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

    def load_memory(self, agent_id: str, run_id: str) -> Snapshot:
        """The memory events of an agent's run (section 9)."""
        return self._run(calls.get_memory(agent_id, run_id))

    def append_memory_events(
        self, agent_id: str, run_id: str, events: Sequence[MemoryEvent]
    ) -> None:
        """Append memory events atomically (section 9)."""
        return self._run(calls.add_memory(agent_id, run_id, events))

    def load_transcript(
        self, run_id: str, *, validate: str | None = None, thinking: bool = False
    ) -> list[Message]:
        """The run's transcript, page by page (section 10); ``validate`` is ``planner`` or
        ``bedrock`` (with ``thinking``) and raises ``InvalidTranscriptError`` with every
        violation when the transcript breaks a rule."""
        messages: list[Message] = []
        cursor = ""
        while True:
            page, cursor = self._run(
                calls.transcript_page(run_id, cursor, None if cursor else validate, thinking)
            )
            messages.extend(page)
            if not cursor:
                return messages

    def iter_run_records(
        self, run_id: str, *, after: str = "", limit: int = 100
    ) -> Iterator[Record]:
        """Every record of a run after the record ID ``after``, page by page."""
        cursor = after
        while True:
            page = self.list_run_records(run_id, cursor, limit)
            yield from page.records
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def iter_sessions(self, *, limit: int = 100, **filters: Any) -> Iterator[Session]:
        """Every session ``list_sessions`` finds with these filters, page by page."""
        cursor = ""
        while True:
            page = self.list_sessions(cursor=cursor, limit=limit, **filters)
            yield from page.sessions
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def iter_runs(self, *, limit: int = 100, **filters: Any) -> Iterator[RunMeta]:
        """Every run ``search_runs`` finds with these filters, page by page."""
        cursor = ""
        while True:
            page = self.search_runs(cursor=cursor, limit=limit, **filters)
            yield from page.runs
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def iter_session_run_records(self, session_id: str, *, limit: int = 100) -> Iterator[Record]:
        """Every record of a session in commit order, page by page."""
        cursor = ""
        while True:
            page = self.list_session_run_records(session_id, cursor, limit)
            yield from page.records
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def export_session(self, session_id: str, file: BinaryWriter) -> None:
        """Write the session's NDJSON export, read in one snapshot, to a binary file
        (11.4); ``UnavailableError`` if it was cut short."""
        _transfer.export_session(self._client.get_httpx_client(), self._policy, session_id, file)

    def import_session(self, file: BinaryReader) -> Session:
        """Recreate an exported session from a binary file in one transaction (11.4);
        never retried (see ``http/_transfer.py``)."""
        return _transfer.import_session(self._client.get_httpx_client(), file)

    # --- webhooks and waiting (13) --------------------------------------------------------

    def create_webhook(self, url: str, events: Sequence[str]) -> CreatedWebhook:
        """Subscribe ``url`` to event types (13.1); the answer's ``secret`` is shown once."""
        return self._run(_webhooks.new_webhook(url, events))

    def list_webhooks(self) -> list[Webhook]:
        """Every subscription, without secrets."""
        return self._run(_webhooks.webhooks())

    def delete_webhook(self, webhook_id: str) -> None:
        """Delete a subscription (``WebhookNotFoundError`` if unknown)."""
        self._run(_webhooks.remove_webhook(webhook_id))

    def list_webhook_deliveries(
        self, webhook_id: str, statuses: Sequence[str] = (), cursor: str = "", limit: int = 100
    ) -> DeliveryPage:
        """A page of a subscription's deliveries, in commit order (13.3)."""
        return self._run(_webhooks.deliveries(webhook_id, statuses, cursor, limit))

    def retry_webhook_delivery(self, webhook_id: str, event_id: str) -> WebhookDelivery:
        """Queue a failed delivery again (13.3)."""
        return self._run(_webhooks.retry_delivery(webhook_id, event_id))

    def wait_for_run(
        self, run_id: str, until: WaitUntil | str = WaitUntil.FINISHED, timeout: float = 30.0
    ) -> RunMeta:
        """The run's meta once it reaches ``until`` (``finished``, or ``stopped``: also
        suspended), waiting at most ``timeout`` seconds (13.4): a wait the server ended at
        its own bound is asked again; at ``timeout`` the current meta is returned."""
        _webhooks.check_wait(until, timeout)
        deadline = time.monotonic() + timeout
        while True:
            meta, timed_out = self._run(_webhooks.wait(run_id, until, deadline - time.monotonic()))
            if not timed_out or time.monotonic() >= deadline:
                return meta
