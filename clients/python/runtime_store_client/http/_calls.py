"""Each contract operation as a ``Call``: one generated endpoint, its arguments, and the
conversion of its result. ``HttpStore`` runs calls synchronously, ``AsyncHttpStore`` with
asyncio; both share this one description of the wire.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from types import ModuleType
from typing import Any, Generic, TypeVar

import httpx

from .._generated.api.memory import append_memory_events, load_memory
from .._generated.api.records import (
    append_run_record,
    append_run_records,
    list_run_records,
    list_run_transcript_records,
    list_session_run_records,
    load_run_record,
    load_transcript,
)
from .._generated.api.runs import (
    load_run,
    load_run_suspension,
    record_run_cancellation,
    record_run_suspension,
    record_run_terminal,
    repair_run_suspension,
    repair_run_terminal,
    search_runs,
    start_child_run,
    start_one_shot_child_run,
    start_one_shot_run,
    start_root_run,
    start_synchronous_run,
)
from .._generated.api.sessions import (
    create_session,
    end_session,
    list_session_runs,
    list_sessions,
    load_session,
    load_session_status,
    purge_session,
)
from .._generated.client import AuthenticatedClient, Client
from .._generated.models import (
    AppendMemoryRequest,
    AppendRecordRequest,
    AppendRecordsRequest,
    CancellationRequest,
    ChildRunStartRequest,
    CreateSessionRequest,
    EndSessionRequest,
    OneShotChildRunStartRequest,
    OneShotRunStartRequest,
    RootRunStartRequest,
    SuspensionRequest,
    SynchronousRunStartRequest,
    TerminalRequest,
    TranscriptCheck,
)
from .._generated.models import RunStatus as WireRunStatus
from .._generated.models import SessionStatus as WireSessionStatus
from .._generated.types import UNSET, Response
from ..errors import InvalidArgumentError, InvalidTranscriptPositionError
from ..transcript import Message
from ..types import (
    AppendResult,
    Checkpoint,
    ChildRunStartResult,
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
)
from . import _convert as c

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request: how to send it (sync or async) and how to read its 2xx body.

    ``fast``, when set, reads a 200 body's JSON straight into the result (record pages:
    up to 1,000 records, where the generated models' two layers cost more than the rest
    of the call). The request is still the generated endpoint's (its ``_get_kwargs``);
    when ``fast`` fails on a body, the generated models read it as they always do, so
    their errors are unchanged. ``tests/client/test_fast_decode.py`` checks that both
    readings agree.
    """

    endpoint: ModuleType
    kwargs: dict[str, Any]
    convert: Callable[[Any], T]
    fast: Callable[[Any], T] | None = None

    def send(self, client: Client | AuthenticatedClient) -> Response[Any]:
        response: Response[Any] = self.endpoint.sync_detailed(client=client, **self.kwargs)
        return response

    def send_async(self, client: Client | AuthenticatedClient) -> Awaitable[Response[Any]]:
        awaitable: Awaitable[Response[Any]] = self.endpoint.asyncio_detailed(
            client=client, **self.kwargs
        )
        return awaitable

    def run(self, client: Client | AuthenticatedClient) -> T:
        """Send the request and read its result."""
        if self.fast is None:
            return self.convert(self.send(client).parsed)
        response = client.get_httpx_client().request(**self.endpoint._get_kwargs(**self.kwargs))
        return self._read(client, response)

    async def run_async(self, client: Client | AuthenticatedClient) -> T:
        """Send the request and read its result, on asyncio."""
        if self.fast is None:
            return self.convert((await self.send_async(client)).parsed)
        response = await client.get_async_httpx_client().request(
            **self.endpoint._get_kwargs(**self.kwargs)
        )
        return self._read(client, response)

    def _read(self, client: Client | AuthenticatedClient, response: httpx.Response) -> T:
        assert self.fast is not None
        if response.status_code == HTTPStatus.OK:
            try:
                return self.fast(response.json())
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
                pass  # the generated models read it, and raise as they always did
        built: Response[Any] = self.endpoint._build_response(client=client, response=response)
        return self.convert(built.parsed)


def _none(_: Any) -> None:
    return None


def start_root(
    run: RunStart, started: Record, canceled: Record, digest: bytes | None
) -> Call[RootRunStartResult]:
    body = RootRunStartRequest(
        run=c.run_start_body(run),
        started=c.record_body(started, "started"),
        canceled=c.record_body(canceled, "canceled"),
        request_digest=c.digest_text(digest),
    )
    return Call(start_root_run, {"body": body}, c.root_start)


def start_child(
    run: RunStart, parent_linked: Record, started: Record, canceled: Record, digest: bytes | None
) -> Call[ChildRunStartResult]:
    body = ChildRunStartRequest(
        run=c.run_start_body(run),
        parent_linked=c.record_body(parent_linked, "parent_linked"),
        started=c.record_body(started, "started"),
        canceled=c.record_body(canceled, "canceled"),
        request_digest=c.digest_text(digest),
    )
    return Call(start_child_run, {"body": body}, c.child_start)


def start_one_shot(
    run: RunStart, started: Record, digest: bytes | None
) -> Call[OneShotRunStartResult]:
    body = OneShotRunStartRequest(
        run=c.run_start_body(run),
        started=c.record_body(started, "started"),
        request_digest=c.digest_text(digest),
    )
    return Call(start_one_shot_run, {"body": body}, c.one_shot_start)


def start_one_shot_child(
    run: RunStart, parent_linked: Record, started: Record, digest: bytes | None
) -> Call[OneShotChildRunStartResult]:
    body = OneShotChildRunStartRequest(
        run=c.run_start_body(run),
        parent_linked=c.record_body(parent_linked, "parent_linked"),
        started=c.record_body(started, "started"),
        request_digest=c.digest_text(digest),
    )
    return Call(start_one_shot_child_run, {"body": body}, c.one_shot_child_start)


def start_synchronous(
    run: RunStart, started: Record, digest: bytes | None
) -> Call[OneShotRunStartResult]:
    if digest is not None:
        raise InvalidArgumentError("a synchronous start takes no request_digest")
    body = SynchronousRunStartRequest(
        run=c.run_start_body(run), started=c.record_body(started, "started")
    )
    return Call(start_synchronous_run, {"body": body}, c.one_shot_start)


def append(record: Record) -> Call[AppendResult]:
    body = AppendRecordRequest(record=c.record_body(record))
    return Call(
        append_run_record,
        {"run_id": c.path_id(record.run_id, "record.run_id"), "body": body},
        c.append_result,
    )


def append_batch(run_id: str, records: Sequence[Record]) -> Call[list[AppendResult]]:
    if isinstance(records, Record | str | bytes) or not isinstance(records, Sequence):
        raise InvalidArgumentError("records must be a list of records")
    body = AppendRecordsRequest(
        records=[c.record_body(record, f"records[{i}]") for i, record in enumerate(records)]
    )
    return Call(
        append_run_records,
        {"run_id": c.path_id(run_id, "run_id"), "body": body},
        c.append_results,
    )


def cancellation(run_id: str, reason: str, record: Record) -> Call[AppendResult]:
    body = CancellationRequest(reason=reason, record=c.record_body(record))
    return Call(
        record_run_cancellation,
        {"run_id": c.path_id(run_id, "run_id"), "body": body},
        c.append_result,
    )


def suspension(run_id: str, checkpoint: Checkpoint, record: Record) -> Call[AppendResult]:
    body = SuspensionRequest(checkpoint=c.checkpoint_body(checkpoint), record=c.record_body(record))
    return Call(
        record_run_suspension,
        {"run_id": c.path_id(run_id, "run_id"), "body": body},
        c.append_result,
    )


def terminal(run_id: str, status: RunStatus, record: Record) -> Call[AppendResult]:
    body = TerminalRequest(status=c.wire_run_status(status), record=c.record_body(record))
    return Call(
        record_run_terminal,
        {"run_id": c.path_id(run_id, "run_id"), "body": body},
        c.append_result,
    )


def repair_suspension(run_id: str, checkpoint: Checkpoint, record: Record) -> Call[RepairResult]:
    body = SuspensionRequest(checkpoint=c.checkpoint_body(checkpoint), record=c.record_body(record))
    return Call(
        repair_run_suspension,
        {"run_id": c.path_id(run_id, "run_id"), "body": body},
        c.repair_result,
    )


def repair_terminal(run_id: str, status: RunStatus, record: Record) -> Call[RepairResult]:
    body = TerminalRequest(status=c.wire_run_status(status), record=c.record_body(record))
    return Call(
        repair_run_terminal,
        {"run_id": c.path_id(run_id, "run_id"), "body": body},
        c.repair_result,
    )


def get_run(run_id: str) -> Call[RunMeta]:
    return Call(load_run, {"run_id": c.path_id(run_id, "run_id")}, c.run_meta)


def get_session_status(session_id: str) -> Call[SessionStatus]:
    return Call(
        load_session_status,
        {"session_id": c.session_path_id(session_id)},
        lambda body: SessionStatus(body.status.value),
    )


def get_run_suspension(run_id: str) -> Call[Checkpoint]:
    return Call(load_run_suspension, {"run_id": c.path_id(run_id, "run_id")}, c.checkpoint)


def _page_args(cursor: str, limit: int) -> dict[str, Any]:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidArgumentError("limit must be a positive integer")
    if not isinstance(cursor, str):
        raise InvalidArgumentError("cursor must be a string")
    return {"cursor": cursor, "limit": limit}


def run_records(run_id: str, cursor: str, limit: int) -> Call[Page]:
    return Call(
        list_run_records,
        {"run_id": c.path_id(run_id, "run_id"), **_page_args(cursor, limit)},
        c.record_page,
        c.record_page_json,
    )


def transcript_records(run_id: str, through: str, after: str, limit: int) -> Call[Page]:
    """A transcript prefix page (12.3): a position that cannot even be sent is refused
    here as the server would refuse it (``invalid_transcript_position``)."""
    if not isinstance(through, str) or not isinstance(after, str):
        raise InvalidTranscriptPositionError("through and after must be record IDs (strings)")
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidTranscriptPositionError(f"limit must be an integer of at least 1: {limit!r}")
    return Call(
        list_run_transcript_records,
        {"run_id": c.path_id(run_id, "run_id"), "through": through, "after": after, "limit": limit},
        c.record_page,
        c.record_page_json,
    )


def record_by_key(run_id: str, event_key: str) -> Call[Record]:
    """The record stored under a key (12.5); an empty key is refused as the server would."""
    return Call(
        load_run_record,
        {"run_id": c.path_id(run_id, "run_id"), "event_key": c.path_id(event_key, "event_key")},
        c.record,
    )


def session_records(session_id: str, cursor: str, limit: int) -> Call[Page]:
    return Call(
        list_session_run_records,
        {"session_id": c.session_path_id(session_id), **_page_args(cursor, limit)},
        c.record_page,
        c.record_page_json,
    )


def new_session(session_id: str, created_at: Any) -> Call[Session]:
    body = CreateSessionRequest(
        session_id=c.path_id(session_id, "session_id"),
        created_at=c.wire_time(created_at, "created_at"),
    )
    return Call(create_session, {"body": body}, c.session)


def get_session(session_id: str) -> Call[Session]:
    return Call(load_session, {"session_id": c.session_path_id(session_id)}, c.session)


def finish_session(session_id: str, ended_at: Any) -> Call[Session]:
    body = EndSessionRequest(ended_at=c.wire_time(ended_at, "ended_at"))
    return Call(
        end_session, {"session_id": c.path_id(session_id, "session_id"), "body": body}, c.session
    )


def purge(session_id: str) -> Call[None]:
    return Call(purge_session, {"session_id": c.path_id(session_id, "session_id")}, _none)


def session_runs(
    session_id: str, statuses: Sequence[RunStatus], cursor: str, limit: int
) -> Call[RunPage]:
    wanted: list[WireRunStatus] = [c.wire_run_status(status) for status in statuses]
    return Call(
        list_session_runs,
        {
            "session_id": c.session_path_id(session_id),
            "status": wanted,
            **_page_args(cursor, limit),
        },
        c.run_page,
    )


def _optional_time(value: datetime | None, what: str) -> datetime | None:
    return None if value is None else c.wire_time(value, what)


def _time_args(prefix: str, after: datetime | None, before: datetime | None) -> dict[str, Any]:
    """Only the bounds given: an absent query parameter, never ``null``."""
    args: dict[str, Any] = {}
    if after is not None:
        args[f"{prefix}_after"] = _optional_time(after, f"{prefix}_after")
    if before is not None:
        args[f"{prefix}_before"] = _optional_time(before, f"{prefix}_before")
    return args


def sessions_list(
    statuses: Sequence[SessionStatus],
    created_after: datetime | None,
    created_before: datetime | None,
    cursor: str,
    limit: int,
) -> Call[SessionPage]:
    try:
        wanted = [WireSessionStatus(str(status)) for status in statuses]
    except ValueError:
        raise InvalidArgumentError(f"unknown session status in {list(statuses)!r}") from None
    return Call(
        list_sessions,
        {
            "status": wanted,
            **_time_args("created", created_after, created_before),
            **_page_args(cursor, limit),
        },
        c.session_page,
    )


#: Most label filters one search takes (CONTRACT.md 2.10).
MAX_LABEL_FILTERS = 64


def _label_args(labels: Mapping[str, str] | None) -> list[str]:
    """``key:value`` query values; the key ends at the first ``:``, so it cannot hold one."""
    if labels is None:
        return []
    if not isinstance(labels, Mapping):
        raise InvalidArgumentError("labels must be a map of strings")
    if len(labels) > MAX_LABEL_FILTERS:  # the service refuses more (CONTRACT.md 2.10)
        raise InvalidArgumentError(
            f"labels: a search takes at most {MAX_LABEL_FILTERS} label filters, not {len(labels)}"
        )
    args = []
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError("labels must map strings to strings")
        if not key or ":" in key:
            raise InvalidArgumentError(
                f"label key {key!r} cannot be searched: it must be non-empty, without ':'"
            )
        args.append(f"{key}:{value}")
    return args


def runs_search(  # noqa: PLR0913, PLR0917 - one argument per filter of CONTRACT.md 11.1
    statuses: Sequence[RunStatus],
    agent_id: str,
    session_id: str,
    parent_run_id: str,
    labels: Mapping[str, str] | None,
    started_after: datetime | None,
    started_before: datetime | None,
    cursor: str,
    limit: int,
) -> Call[RunPage]:
    for value, what in (
        (agent_id, "agent_id"),
        (session_id, "session_id"),
        (parent_run_id, "parent_run_id"),
    ):
        if not isinstance(value, str):
            raise InvalidArgumentError(f"{what} must be a string")
    return Call(
        search_runs,
        {
            "status": [c.wire_run_status(status) for status in statuses],
            "agent_id": agent_id,
            "session_id": session_id,
            "parent_run_id": parent_run_id,
            "label": _label_args(labels),
            **_time_args("started", started_after, started_before),
            **_page_args(cursor, limit),
        },
        c.run_page,
    )


def get_memory(agent_id: str, run_id: str) -> Call[Snapshot]:
    return Call(
        load_memory,
        {"agent_id": c.path_id(agent_id, "agent_id"), "run_id": c.path_id(run_id, "run_id")},
        c.snapshot,
    )


def add_memory(agent_id: str, run_id: str, events: Sequence[MemoryEvent]) -> Call[None]:
    body = AppendMemoryRequest(
        events=[c.memory_event_body(event, f"events[{i}]") for i, event in enumerate(events)]
    )
    return Call(
        append_memory_events,
        {
            "agent_id": c.path_id(agent_id, "agent_id"),
            "run_id": c.path_id(run_id, "run_id"),
            "body": body,
            # One key per call, kept across its retries: a retry after a lost answer is a
            # no-op on the server instead of a second copy of the events.
            "idempotency_key": uuid.uuid4().hex,
        },
        _none,
    )


def transcript_page(
    run_id: str, cursor: str, validate: str | None, thinking: bool
) -> Call[tuple[list[Message], str]]:
    """One page of a run's transcript; ``validate`` is ``planner`` or ``bedrock``."""
    try:
        check = UNSET if validate is None else TranscriptCheck(validate)
    except ValueError:
        raise InvalidArgumentError(
            f"validate must be planner or bedrock, not {validate!r}"
        ) from None
    return Call(
        load_transcript,
        {
            "run_id": c.path_id(run_id, "run_id"),
            "cursor": cursor,
            "validate": check,
            "thinking": thinking,
        },
        c.transcript_page,
    )
