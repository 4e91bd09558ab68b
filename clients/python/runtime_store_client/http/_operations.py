"""The call table: each contract operation of ``HttpStore`` and ``AsyncHttpStore``, once.

A function per operation, named and documented as the stores' method and taking its
arguments: it refuses what cannot be sent (the error the server would answer) and returns
the ``Call``: the generated endpoint (its method and path), the request, and the
conversion of the answer. The stores send it (``_call.Operation``, ``AsyncOperation``);
every error answer becomes the contract error of its code (``_problems``).
Webhooks and waits are in ``_webhooks``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from .._generated.api.memory import append_memory_events as append_memory_api
from .._generated.api.memory import load_memory as load_memory_api
from .._generated.api.records import append_run_record as append_api
from .._generated.api.records import append_run_records as append_batch_api
from .._generated.api.records import count_records as count_records_api
from .._generated.api.records import list_run_records as run_records_api
from .._generated.api.records import list_run_transcript_records as transcript_records_api
from .._generated.api.records import list_session_run_records as session_records_api
from .._generated.api.records import load_run_record as record_api
from .._generated.api.records import load_transcript as transcript_api
from .._generated.api.runs import count_runs as count_runs_api
from .._generated.api.runs import load_run as run_api
from .._generated.api.runs import load_run_suspension as suspension_api
from .._generated.api.runs import record_run_cancellation as cancellation_api
from .._generated.api.runs import record_run_suspension as suspend_api
from .._generated.api.runs import record_run_terminal as terminal_api
from .._generated.api.runs import repair_run_suspension as repair_suspension_api
from .._generated.api.runs import repair_run_terminal as repair_terminal_api
from .._generated.api.runs import search_runs as search_api
from .._generated.api.runs import start_child_run as child_api
from .._generated.api.runs import start_one_shot_child_run as one_shot_child_api
from .._generated.api.runs import start_one_shot_run as one_shot_api
from .._generated.api.runs import start_root_run as root_api
from .._generated.api.runs import start_synchronous_run as synchronous_api
from .._generated.api.sessions import count_sessions as count_sessions_api
from .._generated.api.sessions import create_session as create_session_api
from .._generated.api.sessions import end_session as end_session_api
from .._generated.api.sessions import list_session_runs as session_runs_api
from .._generated.api.sessions import list_sessions as sessions_api
from .._generated.api.sessions import load_session as session_api
from .._generated.api.sessions import load_session_status as session_status_api
from .._generated.api.sessions import purge_session as purge_api
from .._generated.api.tokens import whoami as whoami_api
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
from .._generated.types import UNSET
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
    RecordCounts,
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
    StatusCounts,
    Whoami,
)
from . import _convert as c
from . import _requests as r
from ._call import Call, none

# --- starts (3.3-3.6, 12.1, 12.2) ------------------------------------------------------


def start_root_run(
    run: RunStart, started: Record, canceled: Record, *, request_digest: bytes | None = None
) -> Call[RootRunStartResult]:
    """Start a root run of a session (CONTRACT.md 3.3, 12.1)."""
    body = RootRunStartRequest(
        run=r.session_run_start_body(run),
        started=r.record_body(started, "started"),
        canceled=r.record_body(canceled, "canceled"),
        request_digest=r.digest_text(request_digest),
    )
    return Call(root_api, {"body": body}, c.root_start)


def start_child_run(
    run: RunStart,
    parent_linked: Record,
    started: Record,
    canceled: Record,
    *,
    request_digest: bytes | None = None,
) -> Call[ChildRunStartResult]:
    """Start a child run linked from a running parent (3.4, 12.1, 12.4)."""
    body = ChildRunStartRequest(
        run=r.session_run_start_body(run),
        parent_linked=r.record_body(parent_linked, "parent_linked"),
        started=r.record_body(started, "started"),
        canceled=r.record_body(canceled, "canceled"),
        request_digest=r.digest_text(request_digest),
    )
    return Call(child_api, {"body": body}, c.child_start)


def start_one_shot_run(
    run: RunStart, started: Record, *, request_digest: bytes | None = None
) -> Call[OneShotRunStartResult]:
    """Start a sessionless run (3.5, 12.1)."""
    body = OneShotRunStartRequest(
        run=r.run_start_body(run),
        started=r.record_body(started, "started"),
        request_digest=r.digest_text(request_digest),
    )
    return Call(one_shot_api, {"body": body}, c.one_shot_start)


def start_one_shot_child_run(
    run: RunStart, parent_linked: Record, started: Record, *, request_digest: bytes | None = None
) -> Call[OneShotChildRunStartResult]:
    """Start a sessionless child run (3.6, 12.1)."""
    body = OneShotChildRunStartRequest(
        run=r.run_start_body(run),
        parent_linked=r.record_body(parent_linked, "parent_linked"),
        started=r.record_body(started, "started"),
        request_digest=r.digest_text(request_digest),
    )
    return Call(one_shot_child_api, {"body": body}, c.one_shot_child_start)


def start_synchronous_run(
    run: RunStart, started: Record, *, request_digest: bytes | None = None
) -> Call[OneShotRunStartResult]:
    """Start a run no workflow engine accepted (12.2); it takes no request digest."""
    if request_digest is not None:
        raise InvalidArgumentError("a synchronous start takes no request_digest")
    body = SynchronousRunStartRequest(
        run=r.run_start_body(run), started=r.record_body(started, "started")
    )
    return Call(synchronous_api, {"body": body}, c.one_shot_start)


# --- records and run commands (3.7-3.11, 11.2) -----------------------------------------


def append_run_record(record: Record) -> Call[AppendResult]:
    """Append an ordinary record (3.7)."""
    body = AppendRecordRequest(record=r.record_body(record))
    return Call(
        append_api,
        {"run_id": r.path_id(record.run_id, "record.run_id"), "body": body},
        c.append_result,
    )


def append_run_records(run_id: str, records: Sequence[Record]) -> Call[list[AppendResult]]:
    """Append 1 to 1,000 ordinary records of one run, all or nothing, in order (11.2)."""
    if isinstance(records, Record | str | bytes) or not isinstance(records, Sequence):
        raise InvalidArgumentError("records must be a list of records")
    body = AppendRecordsRequest(
        records=[r.record_body(record, f"records[{i}]") for i, record in enumerate(records)]
    )
    return Call(
        append_batch_api, {"run_id": r.path_id(run_id, "run_id"), "body": body}, c.append_results
    )


def record_run_cancellation(run_id: str, reason: str, record: Record) -> Call[AppendResult]:
    """Store the first cancellation reason (3.8)."""
    body = CancellationRequest(reason=reason, record=r.record_body(record))
    return Call(
        cancellation_api, {"run_id": r.path_id(run_id, "run_id"), "body": body}, c.append_result
    )


def record_run_suspension(
    run_id: str, checkpoint: Checkpoint, record: Record
) -> Call[AppendResult]:
    """Suspend a run with its checkpoint (3.9)."""
    body = SuspensionRequest(checkpoint=r.checkpoint_body(checkpoint), record=r.record_body(record))
    return Call(suspend_api, {"run_id": r.path_id(run_id, "run_id"), "body": body}, c.append_result)


def record_run_terminal(run_id: str, status: RunStatus, record: Record) -> Call[AppendResult]:
    """Finish a run (3.10)."""
    body = TerminalRequest(status=r.wire_run_status(status), record=r.record_body(record))
    return Call(
        terminal_api, {"run_id": r.path_id(run_id, "run_id"), "body": body}, c.append_result
    )


def repair_run_suspension(
    run_id: str, checkpoint: Checkpoint, record: Record
) -> Call[RepairResult]:
    """Make sure a suspension is stored (3.11)."""
    body = SuspensionRequest(checkpoint=r.checkpoint_body(checkpoint), record=r.record_body(record))
    return Call(
        repair_suspension_api,
        {"run_id": r.path_id(run_id, "run_id"), "body": body},
        c.repair_result,
    )


def repair_run_terminal(run_id: str, status: RunStatus, record: Record) -> Call[RepairResult]:
    """Make sure a terminal status is stored (3.11)."""
    body = TerminalRequest(status=r.wire_run_status(status), record=r.record_body(record))
    return Call(
        repair_terminal_api,
        {"run_id": r.path_id(run_id, "run_id"), "body": body},
        c.repair_result,
    )


# --- reads of a run (3.12, section 4, 12.3, 12.5) ----------------------------------------


def load_run(run_id: str) -> Call[RunMeta]:
    """The run's meta (3.12)."""
    return Call(run_api, {"run_id": r.path_id(run_id, "run_id")}, c.run_meta)


def load_session_status(session_id: str) -> Call[SessionStatus]:
    """``active`` or ``ended`` (3.2)."""
    return Call(
        session_status_api,
        {"session_id": r.session_path_id(session_id)},
        lambda body: SessionStatus(body.status.value),
    )


def load_run_suspension(run_id: str) -> Call[Checkpoint]:
    """The checkpoint of a suspended run (3.12)."""
    return Call(suspension_api, {"run_id": r.path_id(run_id, "run_id")}, c.checkpoint)


def list_run_records(run_id: str, cursor: str = "", limit: int = 100) -> Call[Page]:
    """A page of one run's records, oldest first (section 4)."""
    return Call(
        run_records_api,
        {"run_id": r.path_id(run_id, "run_id"), **r.page_args(cursor, limit)},
        c.record_page,
        c.record_page_json,
    )


def list_session_run_records(session_id: str, cursor: str = "", limit: int = 100) -> Call[Page]:
    """A page of a session's records in commit order (section 4)."""
    return Call(
        session_records_api,
        {"session_id": r.session_path_id(session_id), **r.page_args(cursor, limit)},
        c.record_page,
        c.record_page_json,
    )


def list_run_transcript_records(
    run_id: str, through: str, after: str = "", limit: int = 100
) -> Call[Page]:
    """The run's transcript records after ``after`` up to and including the record
    ``through``, in record order (12.3); the same arguments, the same page."""
    # A position that cannot even be sent is refused as the server would refuse it.
    if not isinstance(through, str) or not isinstance(after, str):
        raise InvalidTranscriptPositionError("through and after must be record IDs (strings)")
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidTranscriptPositionError(f"limit must be an integer of at least 1: {limit!r}")
    return Call(
        transcript_records_api,
        {"run_id": r.path_id(run_id, "run_id"), "through": through, "after": after, "limit": limit},
        c.record_page,
        c.record_page_json,
    )


def load_run_record(run_id: str, event_key: str) -> Call[Record]:
    """The record stored under ``event_key`` in the run (12.5)."""
    return Call(
        record_api,
        {"run_id": r.path_id(run_id, "run_id"), "event_key": r.path_id(event_key, "event_key")},
        c.record,
    )


def transcript_page(
    run_id: str, cursor: str, validate: str | None, thinking: bool
) -> Call[tuple[list[Message], str]]:
    """One page of a run's transcript (``load_transcript`` follows the pages);
    ``validate`` is ``planner`` or ``bedrock``."""
    try:
        check = UNSET if validate is None else TranscriptCheck(validate)
    except ValueError:
        raise InvalidArgumentError(
            f"validate must be planner or bedrock, not {validate!r}"
        ) from None
    return Call(
        transcript_api,
        {
            "run_id": r.path_id(run_id, "run_id"),
            "cursor": cursor,
            "validate": check,
            "thinking": thinking,
        },
        c.transcript_page,
        c.transcript_page_json,
    )


# --- sessions (3.1, 3.2, 11.1) ---------------------------------------------------------


def create_session(session_id: str, created_at: datetime) -> Call[Session]:
    """Create a session, or return the active one (3.1)."""
    body = CreateSessionRequest(
        session_id=r.path_id(session_id, "session_id"),
        created_at=r.wire_time(created_at, "created_at"),
    )
    return Call(create_session_api, {"body": body}, c.session)


def load_session(session_id: str) -> Call[Session]:
    """The session (3.1)."""
    return Call(session_api, {"session_id": r.session_path_id(session_id)}, c.session)


def end_session(session_id: str, ended_at: datetime) -> Call[Session]:
    """End a session (3.1)."""
    body = EndSessionRequest(ended_at=r.wire_time(ended_at, "ended_at"))
    return Call(
        end_session_api,
        {"session_id": r.path_id(session_id, "session_id"), "body": body},
        c.session,
    )


def purge_session(session_id: str) -> Call[None]:
    """Purge an ended session; its IDs stay reserved (3.1)."""
    return Call(purge_api, {"session_id": r.path_id(session_id, "session_id")}, none)


def list_session_runs(
    session_id: str, statuses: Sequence[RunStatus] = (), cursor: str = "", limit: int = 100
) -> Call[RunPage]:
    """A page of a session's runs (3.1)."""
    wanted: list[WireRunStatus] = [r.wire_run_status(status) for status in statuses]
    return Call(
        session_runs_api,
        {
            "session_id": r.session_path_id(session_id),
            "status": wanted,
            **r.page_args(cursor, limit),
        },
        c.run_page,
    )


def list_sessions(
    statuses: Sequence[SessionStatus] = (),
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    cursor: str = "",
    limit: int = 100,
) -> Call[SessionPage]:
    """Sessions, newest ``created_at`` first, ties by ID; purged ones never (11.1)."""
    try:
        wanted = [WireSessionStatus(str(status)) for status in statuses]
    except ValueError:
        raise InvalidArgumentError(f"unknown session status in {list(statuses)!r}") from None
    return Call(
        sessions_api,
        {
            "status": wanted,
            **r.time_args("created", created_after, created_before),
            **r.page_args(cursor, limit),
        },
        c.session_page,
    )


def search_runs(  # noqa: PLR0913, PLR0917 (the contract's signature, 11.1)
    statuses: Sequence[RunStatus] = (),
    agent_id: str = "",
    session_id: str = "",
    parent_run_id: str = "",
    labels: Mapping[str, str] | None = None,
    started_after: datetime | None = None,
    started_before: datetime | None = None,
    cursor: str = "",
    limit: int = 100,
) -> Call[RunPage]:
    """Runs across sessions, newest ``started_at`` first, ties by run ID (11.1)."""
    for value, what in (
        (agent_id, "agent_id"),
        (session_id, "session_id"),
        (parent_run_id, "parent_run_id"),
    ):
        if not isinstance(value, str):
            raise InvalidArgumentError(f"{what} must be a string")
    return Call(
        search_api,
        {
            "status": [r.wire_run_status(status) for status in statuses],
            "agent_id": agent_id,
            "session_id": session_id,
            "parent_run_id": parent_run_id,
            "label": r.label_args(labels),
            **r.time_args("started", started_after, started_before),
            **r.page_args(cursor, limit),
        },
        c.run_page,
    )


# --- counts for the operator's lists (issue 33) ------------------------------------------

#: The largest status count one call asks for (the server's bound).
MAX_COUNT_LIMIT = 10_000
#: The most IDs one ``count_records`` call names, runs and sessions together.
MAX_RECORD_COUNT_IDS = 100


def _count_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_COUNT_LIMIT:
        raise InvalidArgumentError(f"limit must be an integer from 1 to {MAX_COUNT_LIMIT}")
    return limit


def count_sessions(
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    limit: int = MAX_COUNT_LIMIT,
) -> Call[StatusCounts]:
    """Sessions per status ``list_sessions`` would list, each at most ``limit``; a count
    equal to ``limit`` means at least that many."""
    return Call(
        count_sessions_api,
        {**r.time_args("created", created_after, created_before), "limit": _count_limit(limit)},
        c.status_counts,
    )


def count_runs(
    agent_id: str = "",
    session_id: str = "",
    parent_run_id: str = "",
    labels: Mapping[str, str] | None = None,
    started_after: datetime | None = None,
    started_before: datetime | None = None,
    limit: int = MAX_COUNT_LIMIT,
) -> Call[StatusCounts]:
    """Runs per status ``search_runs`` would find with these filters, each at most
    ``limit``; a count equal to ``limit`` means at least that many."""
    for value, what in (
        (agent_id, "agent_id"),
        (session_id, "session_id"),
        (parent_run_id, "parent_run_id"),
    ):
        if not isinstance(value, str):
            raise InvalidArgumentError(f"{what} must be a string")
    return Call(
        count_runs_api,
        {
            "agent_id": agent_id,
            "session_id": session_id,
            "parent_run_id": parent_run_id,
            "label": r.label_args(labels),
            **r.time_args("started", started_after, started_before),
            "limit": _count_limit(limit),
        },
        c.status_counts,
    )


def count_records(
    run_ids: Sequence[str] = (), session_ids: Sequence[str] = ()
) -> Call[RecordCounts]:
    """The number of records of each run and session named (at most 100 IDs together);
    unknown and purged ones are left out."""
    wanted = {"run_id": list(run_ids), "session_id": list(session_ids)}
    for what, ids in wanted.items():
        if isinstance(ids, str) or not all(isinstance(value, str) for value in ids):
            raise InvalidArgumentError(f"{what}s must be a sequence of strings")
    if len(wanted["run_id"]) + len(wanted["session_id"]) > MAX_RECORD_COUNT_IDS:
        raise InvalidArgumentError(f"at most {MAX_RECORD_COUNT_IDS} IDs per call")
    return Call(count_records_api, dict(wanted), c.record_counts)


# --- memory (section 9) ----------------------------------------------------------------


def load_memory(agent_id: str, run_id: str) -> Call[Snapshot]:
    """The memory events of an agent's run (section 9)."""
    return Call(
        load_memory_api,
        {"agent_id": r.path_id(agent_id, "agent_id"), "run_id": r.path_id(run_id, "run_id")},
        c.snapshot,
    )


def append_memory_events(agent_id: str, run_id: str, events: Sequence[MemoryEvent]) -> Call[None]:
    """Append memory events atomically (section 9)."""
    body = AppendMemoryRequest(
        events=[r.memory_event_body(event, f"events[{i}]") for i, event in enumerate(events)]
    )
    return Call(
        append_memory_api,
        {
            "agent_id": r.path_id(agent_id, "agent_id"),
            "run_id": r.path_id(run_id, "run_id"),
            "body": body,
            # One key per call, kept across its retries: a retry after a lost answer is a
            # no-op on the server instead of a second copy of the events.
            "idempotency_key": uuid.uuid4().hex,
        },
        none,
    )


# --- the caller ------------------------------------------------------------------------


def whoami() -> Call[Whoami]:
    """The caller's token name, role and permissions, or the open mode."""
    return Call(
        whoami_api,
        {},
        lambda body: Whoami(
            mode=body.mode.value,
            name=body.name,
            role=body.role.value,
            permissions=tuple(item.value for item in body.permissions),
        ),
    )
