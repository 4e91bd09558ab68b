"""The session file (CONTRACT.md 11.4), written by ``export`` and read by ``importer``: its
versions, each line kind's keys in their order, and the one spelling of every value.

Export (CONTRACT.md 11.4): a session as NDJSON lines, read in one consistent snapshot.

The file, one JSON object per line, each line ending in ``\\n``:

1. the header: ``{"format": "runtime-store.session/2", "session": {id, status, created_at,
   ended_at}}``;
2. one ``{"run": {…}}`` per run, by ``started_at`` then ``run_id``: its meta (section 1.5),
   its remembered lifecycle keys (``keys``, "" for none), its checkpoint (``{id, data}``,
   ``data`` as standard base64, or null), its ``request_digest`` (64 lowercase hex, or
   null: 12.1) and its ``start_kind`` (12.2; always ``engine`` in a session). Version 1
   files (``runtime-store.session/1``) have neither key and still import;
3. one ``{"record": {…}}`` per record in session order, as a page shows it (the payload a
   string holding the exact JSON text);
4. one ``{"memory_event": {…}}`` per memory event of the session's runs, in append order,
   and one ``{"memory_batch": {…}}`` per accepted memory append (its idempotency key);
5. the trailer: ``{"end": {"runs", "records", "memory_events", "memory_batches"}}``, the
   counts of the lines above.

Every value has one spelling (times as the API writes them, labels in their stored key
order, no optional whitespace), so an export of an imported session is byte for byte the
original export, whichever database either came from. Lines are produced one at a time
from server-side cursors: memory stays constant however large the session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from app.domain.times import from_millis
from app.storage.database.row_mapping import RECORD_COLUMNS as PAGE_COLUMNS
from runtime_store_client.times import format_rfc3339

#: The ``format`` of the header line: version 2 adds ``request_digest`` and ``start_kind``
#: to each run line (CONTRACT.md 12.1, 12.2).
FORMAT: Final = "runtime-store.session/2"
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
RUN_KEYS: Final = (*RUN_KEYS_1, "request_digest", "start_kind")


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


COUNT_KEYS: Final = ("runs", "records", "memory_events", "memory_batches")


#: Line kinds in the order the file holds them.
KINDS: Final = ("run", "record", "memory_event", "memory_batch", "end")
