"""The calls of the fast path's SQL functions (``__init__`` says what they may do).

Each function is called with named arguments (``p_run_id => …``), so a parameter added,
removed or renamed in its ``.sql`` file fails loudly instead of shifting the others; its
answer's ``outcome`` is an ``Outcome``, the one spelling SQL and Python share.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import sqlalchemy as sa

from app.domain.commands import accepted_cancellation_reasons
from app.domain.payloads import RunCompletedPayload
from app.domain.validation import NewRecord, NewRun, labels_json
from app.storage.database.raw_statements import DriverStatement
from app.storage.database.row_mapping import NEW_RECORD_FIELDS, label_text, values_of
from app.storage.fast_path import sources
from runtime_store_client import AppendResult, RunStatus, SessionStatus, WebhookEventType

if TYPE_CHECKING:
    from app.storage.unit_of_work.transactions import Tx


class Outcome(enum.StrEnum):
    """What a fast-path function answered (its ``outcome`` column)."""

    #: Nothing written: the Python path must decide.
    REFUSED = "refused"
    #: The same record was already stored (an exact retry): its original ID.
    STORED = "stored"
    #: Written.
    INSERTED = "inserted"
    #: A batch: every record either inserted or already stored (``inserted`` says which).
    DONE = "done"


@dataclass(frozen=True, slots=True)
class SqlFunction:
    """One function of this folder: its name, its input parameters (SQL ``p_<name>``, bound
    as ``<name>``) with their SQL types, its output columns, and the inputs psycopg sends
    in binary (arrays and ``bytea``)."""

    name: str
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[str, ...]
    binary: tuple[str, ...] = ()

    def source(self) -> str:
        """The function's current source: its latest version (sources.py)."""
        return sources.source(self.name)

    def statement(self) -> DriverStatement:
        arguments = ", ".join(
            f"p_{name} => CAST(:{name} AS {sql_type})" for name, sql_type in self.inputs
        )
        call = sa.text(f"{self.name}({arguments})")
        columns: list[sa.ColumnClause[Any]] = [sa.column(name) for name in self.outputs]
        return DriverStatement(sa.select(*columns).select_from(call), binary=self.binary)


_RECORD_INPUTS: Final = (
    ("event_key", "text"),
    ("agent_id", "text"),
    ("session_id", "text"),
    ("turn_id", "text"),
    ("type", "text"),
    ("payload", "bytea"),
    ("timestamp_ms", "bigint"),
)
APPEND_RECORD: Final = SqlFunction(
    "runtime_store_append_record",
    (("run_id", "text"), *_RECORD_INPUTS),
    ("outcome", "record_id", "session_status"),
    binary=("payload",),
)
APPEND_RECORDS: Final = SqlFunction(
    "runtime_store_append_records",
    (
        ("run_id", "text"),
        ("agent_id", "text"),
        ("session_id", "text"),
        ("event_keys", "text[]"),
        ("turn_ids", "text[]"),
        ("types", "text[]"),
        ("payloads", "bytea[]"),
        ("timestamps_ms", "bigint[]"),
    ),
    ("outcome", "record_ids", "inserted", "session_status"),
    binary=("event_keys", "turn_ids", "types", "payloads", "timestamps_ms"),
)
START_RUN: Final = SqlFunction(
    "runtime_store_start_run",
    (
        ("run_id", "text"),
        ("agent_id", "text"),
        ("session_id", "text"),
        ("parent_run_id", "text"),
        ("started_at_ms", "bigint"),
        ("labels", "text"),
        ("label_keys", "text[]"),
        ("label_values", "text[]"),
        ("now_ms", "bigint"),
        ("event_key", "text"),
        ("turn_id", "text"),
        ("type", "text"),
        ("payload", "bytea"),
        ("timestamp_ms", "bigint"),
        ("link_key", "text"),
        ("link_agent_id", "text"),
        ("link_turn_id", "text"),
        ("link_type", "text"),
        ("link_payload", "bytea"),
        ("link_timestamp_ms", "bigint"),
    ),
    ("outcome", "link_record_id", "session_status"),
    binary=("label_keys", "label_values", "payload", "link_payload"),
)
FINISH_RUN: Final = SqlFunction(
    "runtime_store_finish_run",
    (
        ("run_id", "text"),
        ("status", "text"),
        ("labels", "text"),
        ("cancellation_reasons", "text[]"),
        ("now_ms", "bigint"),
        *_RECORD_INPUTS,
        ("event_type", "text"),
    ),
    ("outcome", "record_id", "session_status"),
    binary=("payload",),
)
#: Every function of the fast path.
FUNCTIONS: Final = (APPEND_RECORD, APPEND_RECORDS, START_RUN, FINISH_RUN)


def _group_statement() -> DriverStatement:
    """``runtime_store_append_record`` once per element of the group's arrays, in array
    order (a lateral call per row of ``unnest … WITH ORDINALITY``), its answers in the same
    order: one statement, so in autocommit one transaction for the whole group. Each call
    is a volatile function's, so it sees what the calls before it wrote (a run's second
    record gets the next ID; an exact retry of an earlier record of the group is answered
    ``stored``)."""
    inputs = APPEND_RECORD.inputs
    arrays = ", ".join(f"CAST(:{name}s AS {sql_type}[])" for name, sql_type in inputs)
    names = ", ".join(name for name, _ in inputs)
    arguments = ", ".join(f"p_{name} => g.{name}" for name, _ in inputs)
    source = sa.text(
        f"unnest({arrays}) WITH ORDINALITY AS g({names}, n) "
        f"CROSS JOIN LATERAL {APPEND_RECORD.name}({arguments}) AS f"
    )
    columns: list[sa.ColumnClause[Any]] = [sa.column(name) for name in APPEND_RECORD.outputs]
    select = sa.select(*columns).select_from(source).order_by(sa.literal_column("g.n"))
    return DriverStatement(select, binary=tuple(f"{name}s" for name, _ in inputs))


_APPEND_RECORD = APPEND_RECORD.statement()
_APPEND_RECORDS = APPEND_RECORDS.statement()
_START_RUN = START_RUN.statement()
_FINISH_RUN = FINISH_RUN.statement()
_APPEND_GROUP = _group_statement()


@dataclass(frozen=True, slots=True)
class _GroupRow:
    """One answer of the group statement, read as a one-record function's row."""

    outcome: str
    record_id: int | None
    session_status: str | None


@dataclass(frozen=True, slots=True)
class StartResults:
    """What a start in one statement stored: the ``run_started`` record, and a child's
    ``child_run_linked`` record on its parent."""

    started: AppendResult
    linked: AppendResult | None = None


def _status(value: str | None) -> SessionStatus | None:
    return None if value is None else SessionStatus(value)


def record_answer(row: Any) -> AppendResult | None:
    """The answer of a one-record function (alone or in a group): ``None`` when it
    refused."""
    if row is None or row.outcome == Outcome.REFUSED:
        return None
    return AppendResult(
        id=str(row.record_id),
        inserted=row.outcome == Outcome.INSERTED,
        session_status=_status(row.session_status),
    )


def _one_record(tx: Tx, record: NewRecord, row: Any) -> AppendResult | None:
    """``record_answer``, noting what was written for the live tail's wake-ups."""
    answer = record_answer(row)
    if answer is not None and answer.inserted:
        tx.written.add((record.session_id, record.run_id))
    return answer


def one_params(record: NewRecord) -> dict[str, Any]:
    return values_of(record, NEW_RECORD_FIELDS)


def group_params(records: Sequence[NewRecord]) -> dict[str, Any]:
    values = [values_of(record, NEW_RECORD_FIELDS) for record in records]
    return {f"{name}s": [value[name] for value in values] for name, _ in APPEND_RECORD.inputs}


def group_answers(records: Sequence[NewRecord], rows: Sequence[Any]) -> list[AppendResult | None]:
    """Each record's answer from the group statement's rows (in the records' order)."""
    if len(rows) != len(records):
        raise RuntimeError(f"a group of {len(records)} appends answered {len(rows)} rows")
    return [record_answer(_GroupRow(*row)) for row in rows]


def append_one(tx: Tx, record: NewRecord) -> AppendResult | None:
    """An ordinary append (3.7) or its exact retry, in one round trip."""
    return _one_record(tx, record, _APPEND_RECORD.first(tx.conn, one_params(record)))


def append_group(tx: Tx, records: Sequence[NewRecord]) -> list[AppendResult | None]:
    """Ordinary appends of any runs (3.7) in one round trip and one transaction
    (``group_commit.py``): each record's answer as ``append_one`` gives it alone."""
    answers = group_answers(records, _APPEND_GROUP.all(tx.conn, group_params(records)))
    for record, answer in zip(records, answers, strict=True):
        if answer is not None and answer.inserted:
            tx.written.add((record.session_id, record.run_id))
    return answers


def many_params(run_id: str, records: Sequence[NewRecord]) -> dict[str, Any] | None:
    """The batch statement's parameters; ``None`` unless every record carries the first
    one's agent and session (the statement takes them once)."""
    first = records[0]
    if any(rec.agent_id != first.agent_id or rec.session_id != first.session_id for rec in records):
        return None
    return {
        "run_id": run_id,
        "agent_id": first.agent_id,
        "session_id": first.session_id or None,
        "event_keys": [rec.event_key for rec in records],
        "turn_ids": [rec.turn_id for rec in records],
        "types": [rec.type for rec in records],
        "payloads": [rec.payload for rec in records],
        "timestamps_ms": [rec.timestamp_ms for rec in records],
    }


def many_answers(row: Any) -> list[AppendResult] | None:
    """Each record's answer from the batch statement's row; ``None`` when it refused."""
    if row is None or row.outcome != Outcome.DONE:
        return None
    status = _status(row.session_status)
    return [
        AppendResult(id=str(record_id), inserted=inserted, session_status=status)
        for record_id, inserted in zip(row.record_ids, row.inserted, strict=True)
    ]


def append_many(tx: Tx, run_id: str, records: Sequence[NewRecord]) -> list[AppendResult] | None:
    """A batch of one run's records with distinct event keys (11.2), in one round trip;
    every record must carry the first one's agent and session (else ``None``)."""
    params = many_params(run_id, records)
    if params is None:
        return None
    answers = many_answers(_APPEND_RECORDS.first(tx.conn, params))
    if answers is not None and any(answer.inserted for answer in answers):
        tx.written.add((records[0].session_id, run_id))
    return answers


def start_run(
    tx: Tx, new: NewRun, started: NewRecord, link: NewRecord | None = None
) -> StartResults | None:
    """A new run (a child with its ``link`` on its parent) in an active session or none
    (3.3-3.6, never a continuation), in one round trip."""
    labels = sorted(new.labels.items())
    row = _START_RUN.first(
        tx.conn,
        {
            "run_id": new.run_id,
            "agent_id": new.agent_id,
            "session_id": new.session_id or None,
            "parent_run_id": new.parent_run_id,
            "started_at_ms": new.started_at_ms,
            "labels": new.labels_json,
            "label_keys": [label_text(key) for key, _ in labels],
            "label_values": [label_text(value) for _, value in labels],
            "now_ms": tx.now_ms,
            "event_key": started.event_key,
            "turn_id": started.turn_id,
            "type": started.type,
            "payload": started.payload,
            "timestamp_ms": started.timestamp_ms,
            "link_key": link and link.event_key,
            "link_agent_id": link and link.agent_id,
            "link_turn_id": link and link.turn_id,
            "link_type": link and link.type,
            "link_payload": link and link.payload,
            "link_timestamp_ms": link and link.timestamp_ms,
        },
    )
    if row is None or row.outcome != Outcome.INSERTED:
        return None
    status = _status(row.session_status)
    tx.written.add((new.session_id, new.run_id))
    linked = None
    if link is not None:
        tx.written.add((new.session_id, new.parent_run_id))
        linked = AppendResult(id=str(row.link_record_id), inserted=True, session_status=status)
    return StartResults(
        started=AppendResult(id="1", inserted=True, session_status=status), linked=linked
    )


def finish_run(
    tx: Tx, status: RunStatus, record: NewRecord, payload: RunCompletedPayload
) -> AppendResult | None:
    """A terminal write (3.10) or its exact retry, in one round trip."""
    params = values_of(record, NEW_RECORD_FIELDS)
    reasons = accepted_cancellation_reasons(status, payload.cancellation_reason)
    params.update(
        status=status.value,
        labels=labels_json(payload.labels),
        cancellation_reasons=None if reasons is None else list(reasons),
        now_ms=tx.now_ms,
        # Refused when a subscription wants it: the outbox row is the Python path's.
        event_type=WebhookEventType.RUN_FINISHED.value,
    )
    return _one_record(tx, record, _FINISH_RUN.first(tx.conn, params))
