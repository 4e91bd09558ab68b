"""The session file (CONTRACT.md 11.4, 15.7), written by ``export`` and read by
``importer``: its versions, each line kind's keys in their order, and the one spelling of
every value.

Export (CONTRACT.md 11.4): a session as NDJSON lines, read in one consistent snapshot.

The file, one JSON object per line, each line ending in ``\\n``:

1. the header: ``{"format": "runtime-store.session/3", "session": {id, status, created_at,
   ended_at}}``;
2. one ``{"run": {…}}`` per run, by ``started_at`` then ``run_id``: its meta (section 1.5),
   its remembered lifecycle keys (``keys``, "" for none), its checkpoint (``{id, data}``,
   ``data`` as standard base64, or null), its ``request_digest`` (64 lowercase hex, or
   null: 12.1), its ``start_kind`` (12.2; always ``engine`` in a session) and its
   ``seed_end_id`` (15.5; "" for none). Version 1 files (``runtime-store.session/1``) have
   none of the last three keys, version 2 files no ``seed_end_id``; both still import
   (every run's ``seed_end_id`` "");
3. the session's seeds (15.7, version 3 only): each seed operation by run ID (comparing
   UTF-8 bytes), ``{"seed_operation": {run_id, agent_id, session_id, command_id}}``,
   followed by its attempts by attempt ID (UTF-8 bytes), each ``{"seed_attempt":
   {run_id, attempt_id, state, declaration (null for a settlement's tombstone), source
   (or null), seed_end_id (history end), end_id (body end), prepared_bytes}}`` followed by
   its records in position order, each ``{"seed_record": {run_id, attempt_id, id, key,
   previous_id, <variant>}}`` (the variant exactly as the wire shape, 15.8: bytes as
   padded standard base64, ``messages`` a string holding the exact JSON text);
4. one ``{"record": {…}}`` per record in session order, as a page shows it (the payload a
   string holding the exact JSON text);
5. one ``{"memory_event": {…}}`` per memory event of the session's runs, in append order,
   and one ``{"memory_batch": {…}}`` per accepted memory append (its idempotency key);
6. the trailer: ``{"end": {"runs", "records", "memory_events", "memory_batches",
   "seed_operations", "seed_attempts", "seed_records"}}``, the counts of the lines above
   (versions 1 and 2: the first four).

Every value has one spelling (times as the API writes them, labels in their stored key
order, declarations and sources in their canonical key order, base64 as the encoder
writes it, no optional whitespace), so an export of an imported session is byte for byte
the original export, whichever database either came from. Lines are produced one at a
time from server-side cursors: memory stays constant however large the session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from app.domain.times import from_millis
from app.storage.database.row_mapping import RECORD_COLUMNS as PAGE_COLUMNS
from runtime_store_client.times import format_rfc3339

#: The ``format`` of the header line: version 3 adds ``seed_end_id`` to each run line and
#: the seed lines (CONTRACT.md 15.7).
FORMAT: Final = "runtime-store.session/3"
#: Version 2 files (``request_digest`` and ``start_kind`` on each run line, 12.1 and 12.2;
#: no seeds) still import.
FORMAT_2: Final = "runtime-store.session/2"
#: The format of version 1 files (no request digests, every run engine-started), which
#: still import.
FORMAT_1: Final = "runtime-store.session/1"
#: The remembered lifecycle keys (1.8) by their name in a run line, with their column.
KEY_COLUMNS: Final = {
    "start": "start_key",
    "parent_link": "parent_link_key",
    "cancellation": "cancellation_key",
    "suspension": "suspension_key",
    "terminal": "terminal_key",
}


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
#: A JSON string as ``_ENCODER`` writes it (the same C function).
_string: Final[Callable[[str], str]] = json.encoder.encode_basestring


def encode_line(value: dict[str, Any]) -> bytes:
    """One line: compact JSON, non-ASCII text as itself, ``\\n`` at the end."""
    return (_ENCODER.encode(value) + "\n").encode()


def time_text(ms: int | None) -> str | None:
    """A stored time as the API writes it (``format_rfc3339``)."""
    return None if ms is None else format_rfc3339(from_millis(ms))


#: A record line's columns, in its order: the order a page reads them in.
RECORD_COLUMNS: Final = tuple(column.name for column in PAGE_COLUMNS)


def record_line(row: Any) -> bytes:
    """The line of a record row (``RECORD_COLUMNS``): what ``encode_line`` writes for
    ``{"record": {"id", "event_key", …, "payload", "timestamp"}}``, built directly because
    it is the line written a million times."""
    seq, event_key, run_id, agent_id, session_id, turn_id, type_, payload, ms = row
    return (
        f'{{"record":{{"id":"{seq}","event_key":{_string(event_key)},"run_id":'
        f'{_string(run_id)},"agent_id":{_string(agent_id)},"session_id":'
        f'{_string(session_id)},"turn_id":{_string(turn_id)},"type":{_string(type_)},'
        f'"payload":{_string(bytes(payload).decode("utf-8"))},"timestamp":"{time_text(ms)}"}}}}\n'
    ).encode()


# --- each line kind's keys, in their order ---------------------------------------------------

SESSION_KEYS: Final = ("id", "status", "created_at", "ended_at")


RUN_KEYS_1: Final = (
    "run_id",
    "agent_id",
    "session_id",
    "parent_run_id",
    "status",
    "start_outcome",
    "started_at",
    "updated_at",
    "labels",
    "cancellation_reason",
    "successor_run_id",
    "keys",
    "checkpoint",
)


#: Version 2 (12.1, 12.2): every run line also has these.
RUN_KEYS_2: Final = (*RUN_KEYS_1, "request_digest", "start_kind")


#: Version 3 (15.5): and the seed history end the run attached.
RUN_KEYS: Final = (*RUN_KEYS_2, "seed_end_id")


SEED_OPERATION_KEYS: Final = ("run_id", "agent_id", "session_id", "command_id")


SEED_ATTEMPT_KEYS: Final = (
    "run_id",
    "attempt_id",
    "state",
    "declaration",
    "source",
    "seed_end_id",
    "end_id",
    "prepared_bytes",
)


#: A seed record line's keys before its one variant key (15.8's wire shape).
SEED_RECORD_KEYS: Final = ("run_id", "attempt_id", "id", "key", "previous_id")


RECORD_KEYS: Final = (
    "id",
    "event_key",
    "run_id",
    "agent_id",
    "session_id",
    "turn_id",
    "type",
    "payload",
    "timestamp",
)


MEMORY_EVENT_KEYS: Final = ("agent_id", "run_id", "type", "timestamp", "data", "labels")


MEMORY_BATCH_KEYS: Final = ("agent_id", "run_id", "idempotency_key", "appended_at", "digest")


#: The trailer's counts in versions 1 and 2.
COUNT_KEYS_2: Final = ("runs", "records", "memory_events", "memory_batches")


#: Version 3: and the seed lines'.
COUNT_KEYS: Final = (*COUNT_KEYS_2, "seed_operations", "seed_attempts", "seed_records")


#: The seed line kinds (version 3), which share one place in the file: each operation is
#: followed by its attempts, each attempt by its records.
SEED_KINDS: Final = ("seed_operation", "seed_attempt", "seed_record")


#: Line kinds in the order the file holds them (the seed kinds in one place).
KINDS: Final = ("run", *SEED_KINDS, "record", "memory_event", "memory_batch", "end")


def phase_of(kind: str) -> int:
    """The place of a line kind in the file; the seed kinds share one."""
    return KINDS.index("seed_operation") if kind in SEED_KINDS else KINDS.index(kind)
