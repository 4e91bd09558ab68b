"""``HttpStore``: the ``Store``, ``SessionAdmin`` and ``MemoryStore`` protocols over HTTP.

Use it exactly as the in-process store::

    with HttpStore("http://127.0.0.1:8000") as store:
        store.create_session("chat-1", datetime.now(UTC).replace(microsecond=0))

Every problem body becomes the contract error of its ``code``; only ``UnavailableError``
is retried (see ``_retry``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, TypeVar

import httpx

from .._generated.client import AuthenticatedClient, Client
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
from ._call import Call, Operation
from ._lean import LeanAsyncClient, LeanClient
from ._positions import Positions
from ._problems import problem_error
from ._requests import path_id, session_path_id
from ._retry import FAILURES, Attempts, RetryPolicy
from ._tail import RecordTail, run_stream_path, session_stream_path
from ._tls import with_default_tls

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
    """The generated client over a lean httpx client (``_lean``), raising contract errors
    from an httpx response hook and keeping the positions of writes for later reads
    (``_positions``)."""
    args = with_default_tls(dict(httpx_args or {}))
    hooks = dict(args.pop("event_hooks", {}))
    on_request: Any = positions.on_request_async if asynchronous else positions.on_request
    on_response: Any = positions.on_response_async if asynchronous else positions.on_response
    # The position first: the caller's own request hooks see the request as it is sent.
    hooks["request"] = [on_request, *hooks.get("request", [])]
    # Positions first: a write's answer carries one even when the hook raises for it.
    hooks["response"] = [*hooks.get("response", []), on_response, hook]
    lean: dict[str, Any] = {
        **args,
        "event_hooks": hooks,
        "base_url": base_url.rstrip("/"),
        "timeout": httpx.Timeout(timeout),
        "verify": args.get("verify", True),
        "follow_redirects": False,
        # As the generated ``AuthenticatedClient`` would set it.
        "headers": {"Authorization": f"Bearer {token}"} if token else {},
    }
    options: dict[str, Any] = {"base_url": lean["base_url"], "raise_on_unexpected_status": False}
    client = AuthenticatedClient(token=token, **options) if token else Client(**options)
    if asynchronous:
        client.set_async_httpx_client(LeanAsyncClient(**lean))
    else:
        client.set_httpx_client(LeanClient(**lean))
    return client


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

    def _run(self, call: Call[T]) -> T:
        attempts = Attempts(self._policy)
        while True:
            try:
                return call.run(self._client)
            except FAILURES as exc:
                time.sleep(attempts.after(exc))

    # --- one request each: the call table (``_operations``, ``_webhooks``, ``_seeds``) ------

    start_root_run = Operation(ops.start_root_run)
    start_child_run = Operation(ops.start_child_run)
    start_one_shot_run = Operation(ops.start_one_shot_run)
    start_one_shot_child_run = Operation(ops.start_one_shot_child_run)
    start_synchronous_run = Operation(ops.start_synchronous_run)
    append_run_record = Operation(ops.append_run_record)
    append_run_records = Operation(ops.append_run_records)
    record_run_cancellation = Operation(ops.record_run_cancellation)
    record_run_suspension = Operation(ops.record_run_suspension)
    record_run_terminal = Operation(ops.record_run_terminal)
    repair_run_suspension = Operation(ops.repair_run_suspension)
    repair_run_terminal = Operation(ops.repair_run_terminal)
    load_run = Operation(ops.load_run)
    load_session_status = Operation(ops.load_session_status)
    load_run_suspension = Operation(ops.load_run_suspension)
    list_run_records = Operation(ops.list_run_records)
    list_session_run_records = Operation(ops.list_session_run_records)
    list_run_transcript_records = Operation(ops.list_run_transcript_records)
    load_run_record = Operation(ops.load_run_record)
    create_session = Operation(ops.create_session)
    load_session = Operation(ops.load_session)
    end_session = Operation(ops.end_session)
    purge_session = Operation(ops.purge_session)
    list_session_runs = Operation(ops.list_session_runs)
    list_sessions = Operation(ops.list_sessions)
    search_runs = Operation(ops.search_runs)
    count_sessions = Operation(ops.count_sessions)
    count_runs = Operation(ops.count_runs)
    count_records = Operation(ops.count_records)
    load_memory = Operation(ops.load_memory)
    append_memory_events = Operation(ops.append_memory_events)
    whoami = Operation(ops.whoami)
    create_webhook = Operation(_webhooks.create_webhook)
    list_webhooks = Operation(_webhooks.list_webhooks)
    delete_webhook = Operation(_webhooks.delete_webhook)
    list_webhook_deliveries = Operation(_webhooks.list_webhook_deliveries)
    retry_webhook_delivery = Operation(_webhooks.retry_webhook_delivery)
    begin_run_seed = Operation(_seeds.begin_run_seed)
    append_run_seed = Operation(_seeds.append_run_seed)
    publish_run_seed = Operation(_seeds.publish_run_seed)
    find_run_preparation = Operation(_seeds.find_run_preparation)
    settle_run_preparation = Operation(_seeds.settle_run_preparation)
    load_run_seed = Operation(_seeds.load_run_seed)
    list_run_seed_records = Operation(_seeds.list_run_seed_records)
    list_run_preparation_records = Operation(_seeds.list_run_preparation_records)

    # --- more than one request ------------------------------------------------------------

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
                ops.transcript_page(run_id, cursor, None if cursor else validate, thinking)
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
