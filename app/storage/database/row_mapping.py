"""Row mapping: session, run and record rows as states and contract types.

A state's fields are its table's columns in the table's order (checked when this module
is imported), so rows become states and states become rows without a column spelled by
hand: the only per-column code here is the conversion of the few columns whose database
form differs (NULL session for sessionless, enums as text). A record's columns are the
fields of the domain's ``NewRecord`` plus its two positions.
"""

from __future__ import annotations

import enum
import json
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any, Final, TypeVar

import sqlalchemy as sa

from app.domain.state import RunState, SessionRowStatus, SessionState, StoredRecord
from app.domain.times import from_millis
from app.domain.validation import NewRecord
from app.storage.database.tables import run_records, runs, sessions
from runtime_store_client import (
    Record,
    RunMeta,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
    Session,
)
from runtime_store_client._records import trusted_record

S = TypeVar("S")


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def _none_as_empty(value: str | None) -> str:
    return value or ""


def _empty_as_none(value: str) -> str | None:
    return value or None


#: Columns whose database form differs from the state's: NULL means "no session" and
#: "no successor".
_FROM_DB: Final[Mapping[str, Callable[[Any], Any]]] = {
    "session_id": _none_as_empty,
    "successor_run_id": _none_as_empty,
}
_TO_DB: Final[Mapping[str, Callable[[Any], Any]]] = {
    "session_id": _empty_as_none,
    "successor_run_id": _empty_as_none,
}


def _optional_bytes(value: bytes | memoryview | None) -> bytes | None:
    return None if value is None else bytes(value)


def _reader(
    table: sa.Table, state: type[S], convert: Mapping[str, Callable[[Any], Any]], prefix: str = ""
) -> Callable[[Any], S]:
    """A function that turns a row (attributes named ``prefix`` + column) into ``state``."""
    names = [column.name for column in table.columns]
    declared = [field.name for field in fields(state)][: len(names)]  # type: ignore[arg-type]
    if declared != names:
        raise TypeError(f"{state.__name__} fields {declared} differ from {table.name} columns")
    get = operator.attrgetter(*(prefix + name for name in names))
    conversions = [(index, convert[name]) for index, name in enumerate(names) if name in convert]

    def read(row: Any) -> S:
        values = list(get(row))
        for index, conversion in conversions:
            values[index] = conversion(values[index])
        return state(*values)

    return read


session_from_row = _reader(sessions, SessionState, {"status": SessionRowStatus})
run_from_row = _reader(
    runs,
    RunState,
    {
        **_FROM_DB,
        "status": RunStatus,
        "start_outcome": RunStartOutcome,
        "start_kind": RunStartKind,
        "request_digest": _optional_bytes,
    },
)


def _mutable(table: sa.Table) -> tuple[str, ...]:
    return tuple(column.name for column in table.columns if column.info.get("mutable"))


RUN_COLUMNS: Final = tuple(column.name for column in runs.columns)
RUN_MUTABLE: Final = _mutable(runs)
SESSION_MUTABLE: Final = _mutable(sessions)


def values_of(state: object, names: tuple[str, ...], prefix: str = "") -> dict[str, Any]:
    """The bind values of ``names`` taken from ``state``, in database form."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(state, name)
        convert = _TO_DB.get(name)
        out[prefix + name] = convert(value) if convert is not None else _plain(value)
    return out


# --- records ----------------------------------------------------------------------------

#: The fields that make two records *the same* (1.7), and with the positions every column.
NEW_RECORD_FIELDS: Final = tuple(field.name for field in fields(NewRecord))
_POSITIONS: Final = ("seq", "session_seq")
if set(NEW_RECORD_FIELDS) | set(_POSITIONS) != {column.name for column in run_records.columns}:
    raise TypeError("NewRecord fields and run_records columns differ")

#: A record's columns labelled ``rec_*``, for reading it beside its run in one statement.
RECORD_PREFIX: Final = "rec_"
PREFIXED_RECORD_COLUMNS: Final = tuple(
    run_records.c[name].label(RECORD_PREFIX + name) for name in ("seq", *NEW_RECORD_FIELDS)
)
_get_record_fields = operator.attrgetter(*(RECORD_PREFIX + name for name in NEW_RECORD_FIELDS))
_SESSION_INDEX: Final = NEW_RECORD_FIELDS.index("session_id")
_PAYLOAD_INDEX: Final = NEW_RECORD_FIELDS.index("payload")


def stored_record_from_row(row: Any) -> StoredRecord:
    """The record of a row read with ``PREFIXED_RECORD_COLUMNS``."""
    values = list(_get_record_fields(row))
    values[_SESSION_INDEX] = values[_SESSION_INDEX] or ""
    values[_PAYLOAD_INDEX] = bytes(values[_PAYLOAD_INDEX])
    return StoredRecord(seq=getattr(row, RECORD_PREFIX + "seq"), record=NewRecord(*values))


def record_row(record: NewRecord, seq: int, session_seq: int | None) -> dict[str, Any]:
    """The ``run_records`` row of a record with its record ID and session position."""
    row = values_of(record, NEW_RECORD_FIELDS)
    row["seq"] = seq
    row["session_seq"] = session_seq
    return row


#: The columns a page reads, in the order ``records_from_rows`` takes them.
RECORD_COLUMNS: Final = tuple(
    run_records.c[name]
    for name in (
        "seq",
        "event_key",
        "run_id",
        "agent_id",
        "session_id",
        "turn_id",
        "type",
        "payload",
        "timestamp_ms",
    )
)


def records_from_rows(rows: Sequence[Sequence[Any]]) -> list[Record]:
    """The contract ``Record`` of each row read with ``RECORD_COLUMNS`` first (a page: up
    to 1,000 rows, so no named row and no dataclass constructor per record)."""
    return [
        trusted_record(
            str(row[0]),
            row[1],
            row[2],
            row[3],
            row[4] or "",
            row[5],
            row[6],
            bytes(row[7]),
            from_millis(row[8]),
        )
        for row in rows
    ]


def record_from_row(row: Any) -> Record:
    """The contract ``Record`` of a ``run_records`` row."""
    return Record(
        id=str(row.seq),
        event_key=row.event_key,
        run_id=row.run_id,
        agent_id=row.agent_id,
        session_id=row.session_id or "",
        turn_id=row.turn_id,
        type=row.type,
        payload=bytes(row.payload),
        timestamp=from_millis(row.timestamp_ms),
    )


# --- contract types ---------------------------------------------------------------------


def label_text(value: str) -> str:
    """A label key or value as ``run_labels`` keeps it: its JSON string literal, so an
    escaped NUL (allowed in labels, 2.6) never reaches a plain text column."""
    return json.dumps(value, ensure_ascii=False)


def label_rows(run: RunState) -> list[dict[str, Any]]:
    """The ``run_labels`` rows of a new run (none for ``{}``)."""
    if run.labels == "{}":
        return []
    return [
        {
            "run_id": run.run_id,
            "key": label_text(key),
            "value": label_text(value),
            "started_at_ms": run.started_at_ms,
        }
        for key, value in json.loads(run.labels).items()
    ]


def run_meta(run: RunState) -> RunMeta:
    return RunMeta(
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        parent_run_id=run.parent_run_id,
        status=run.status,
        start_outcome=run.start_outcome,
        started_at=from_millis(run.started_at_ms),
        updated_at=from_millis(run.updated_at_ms),
        labels=json.loads(run.labels),
        cancellation_reason=run.cancellation_reason,
        successor_run_id=run.successor_run_id,
        start_kind=run.start_kind,
        seed_end_id=run.seed_end_id,
    )


def session_of(state: SessionState) -> Session:
    return Session(
        id=state.session_id,
        status=state.contract_status,
        created_at=from_millis(state.created_at_ms),
        ended_at=None if state.ended_at_ms is None else from_millis(state.ended_at_ms),
    )
