"""Tables of runtime-store (SQLAlchemy Core metadata); Alembic migrations mirror them.

Times are epoch milliseconds; payloads and checkpoint data are bytes, so exact-retry
equality is a byte comparison. Counters on the session and run rows hand out session
positions and record IDs under the row lock of the transaction that writes the records.
"""

from __future__ import annotations

import enum
from typing import Final

import sqlalchemy as sa

from app.domain.state import SessionRowStatus
from app.domain.tokens import Role
from runtime_store_client import (
    TRANSCRIPT_RECORD_TYPES,
    RunStartKind,
    RunStartOutcome,
    RunStatus,
)


def _one_of(column: str, values: type[enum.StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(str(value)) for value in values)})"


#: Column info of the columns a state change may update (database/row_mapping.py derives
#: the UPDATE statements from it); every other column is fixed when the row is inserted.
MUTABLE = {"mutable": True}

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# SQLite only auto-increments an INTEGER PRIMARY KEY.
_BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("session_id", sa.Text(), primary_key=True),
    # active | ended | purged: a purged row is the session's tombstone, kept forever.
    sa.Column("status", sa.String(16), nullable=False, info=MUTABLE),
    sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
    sa.Column("ended_at_ms", sa.BigInteger(), nullable=True, info=MUTABLE),
    sa.Column("purged_at_ms", sa.BigInteger(), nullable=True),
    # Last session position handed out; the session list pages on it.
    sa.Column("record_count", sa.BigInteger(), nullable=False, server_default="0", info=MUTABLE),
    sa.CheckConstraint(_one_of("status", SessionRowStatus), name="status"),
)
# list_sessions (11.1): newest first, ties by ID, one range per status.
sa.Index(
    "ix_sessions_status_created",
    sessions.c.status,
    sessions.c.created_at_ms.desc(),
    sessions.c.session_id,
)
# Retention (11.4): the ended sessions whose end is older than a cutoff, one range.
sa.Index(
    "ix_sessions_status_ended", sessions.c.status, sessions.c.ended_at_ms, sessions.c.session_id
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("agent_id", sa.Text(), nullable=False),
    # NULL for sessionless (one-shot) runs.
    sa.Column("session_id", sa.Text(), sa.ForeignKey("sessions.session_id"), nullable=True),
    sa.Column("parent_run_id", sa.Text(), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, info=MUTABLE),
    sa.Column("start_outcome", sa.String(8), nullable=False),
    sa.Column("started_at_ms", sa.BigInteger(), nullable=False),
    sa.Column("updated_at_ms", sa.BigInteger(), nullable=False, info=MUTABLE),
    # Canonical JSON text of the label map (sorted keys), compared as a string.
    sa.Column("labels", sa.Text(), nullable=False, server_default="{}"),
    sa.Column("cancellation_reason", sa.Text(), nullable=False, info=MUTABLE),
    # Last record ID handed out for this run.
    sa.Column("record_count", sa.BigInteger(), nullable=False, server_default="0", info=MUTABLE),
    # Remembered lifecycle keys (CONTRACT.md 1.8).
    sa.Column("start_key", sa.Text(), nullable=False),
    sa.Column("parent_link_key", sa.Text(), nullable=True),
    sa.Column("cancellation_key", sa.Text(), nullable=True, info=MUTABLE),
    sa.Column("suspension_key", sa.Text(), nullable=True, info=MUTABLE),
    sa.Column("terminal_key", sa.Text(), nullable=True, info=MUTABLE),
    # The one continuation admitted for this (suspended) run; NULL until then (3.13).
    sa.Column("successor_run_id", sa.Text(), nullable=True, info=MUTABLE),
    # The request digest of the run's first start (12.1): 32 bytes, NULL when none.
    sa.Column("request_digest", sa.LargeBinary(), nullable=True),
    # engine | synchronous (12.2): a run ID is for ever one kind.
    sa.Column("start_kind", sa.String(16), nullable=False, server_default="engine"),
    # The published seed history end the run's first start attached (15.5); "" for none.
    sa.Column("seed_end_id", sa.Text(), nullable=False, server_default=sa.text("''")),
    sa.CheckConstraint(_one_of("status", RunStatus), name="status"),
    sa.CheckConstraint(_one_of("start_outcome", RunStartOutcome), name="start_outcome"),
    sa.CheckConstraint(_one_of("start_kind", RunStartKind), name="start_kind"),
    sa.Index(None, "session_id", "started_at_ms", "run_id"),
)
# search_runs (11.1): newest first, ties by run ID; every filter is the head of an index
# whose next column is the status, so each status is one range (merged per page).
for _name, _head in (
    ("ix_runs_session_status_started", (runs.c.session_id, runs.c.status)),
    ("ix_runs_parent_status_started", (runs.c.parent_run_id, runs.c.status)),
    ("ix_runs_agent_status_started", (runs.c.agent_id, runs.c.status)),
    ("ix_runs_status_started", (runs.c.status,)),
):
    sa.Index(_name, *_head, runs.c.started_at_ms.desc(), runs.c.run_id)

# A run's labels, one row each, so a label filter is an index range (11.1). Written with
# the run and never changed (labels are fixed at start); ``started_at_ms`` copied from the
# run keeps the range in the search's order. Keys and values are kept as JSON string
# literals (``rows.label_text``): labels may hold an escaped NUL (2.6).
run_labels = sa.Table(
    "run_labels",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("key", sa.Text(), primary_key=True),
    sa.Column("value", sa.Text(), nullable=False),
    sa.Column("started_at_ms", sa.BigInteger(), nullable=False),
)
sa.Index(
    "ix_run_labels_key_value_started",
    run_labels.c.key,
    run_labels.c.value,
    run_labels.c.started_at_ms.desc(),
    run_labels.c.run_id,
)

run_tombstones = sa.Table(
    "run_tombstones",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    # NULL: a sessionless run deleted by retention (app/storage/retention/runs.py).
    sa.Column("session_id", sa.Text(), sa.ForeignKey("sessions.session_id"), nullable=True),
    # A purge finds the records it still has to delete through its tombstones.
    sa.Index(None, "session_id"),
)

# Checkpoints and records name their run without a foreign key: a purge removes the run
# rows in its first transaction and their records and checkpoints in later batches.
checkpoints = sa.Table(
    "checkpoints",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("checkpoint_id", sa.Text(), nullable=False),
    sa.Column("data", sa.LargeBinary(), nullable=False),
)

run_records = sa.Table(
    "run_records",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    # The record ID: 1, 2, ... per run.
    sa.Column("seq", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("event_key", sa.Text(), nullable=False),
    sa.Column("agent_id", sa.Text(), nullable=False),
    sa.Column("session_id", sa.Text(), nullable=True),
    # Position in the session list, assigned under the session's row lock.
    sa.Column("session_seq", sa.BigInteger(), nullable=True),
    sa.Column("turn_id", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=False),
    sa.Column("payload", sa.LargeBinary(), nullable=False),
    sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
    sa.UniqueConstraint("run_id", "event_key"),
    sa.UniqueConstraint("session_id", "session_seq"),
)

#: A run's transcript records (CONTRACT.md 12.3) with the types as literals, never bound
#: parameters: a statement that repeats this clause matches the index's predicate on both
#: databases, also in a prepared statement's generic plan.
TRANSCRIPT_RECORD: Final = run_records.c.type.in_(
    [sa.literal_column(f"'{record_type}'") for record_type in sorted(TRANSCRIPT_RECORD_TYPES)]
)
# Transcript prefix reads: one index range of the run's transcript records only, however
# many other records the run holds (migration 0014).
sa.Index(
    "ix_run_records_transcript",
    run_records.c.run_id,
    run_records.c.seq,
    sqlite_where=TRANSCRIPT_RECORD,
    postgresql_where=TRANSCRIPT_RECORD,
)

memory_events = sa.Table(
    "memory_events",
    metadata,
    sa.Column("id", _BigId, primary_key=True, autoincrement=True),
    sa.Column("agent_id", sa.Text(), nullable=False),
    sa.Column("run_id", sa.Text(), nullable=False),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
    sa.Column("data", sa.Text(), nullable=False),
    sa.Column("labels", sa.Text(), nullable=False),
    sa.Index(None, "agent_id", "run_id", "id"),
    # A purge deletes the memory of its session's runs, whichever agent wrote it.
    sa.Index(None, "run_id", "id"),
)

api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("name", sa.Text(), primary_key=True),
    sa.Column("role", sa.String(16), nullable=False),
    # HMAC-SHA256 of the token under the service's token key: the token itself is never stored.
    sa.Column("digest", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
    sa.Column("revoked_at_ms", sa.BigInteger(), nullable=True),
    sa.CheckConstraint(_one_of("role", Role), name="role"),
)

memory_batches = sa.Table(
    "memory_batches",
    metadata,
    # One row per accepted append: a retried append with the same key is a no-op, so a
    # response lost after the commit never stores the events twice.
    sa.Column("agent_id", sa.Text(), primary_key=True),
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("idempotency_key", sa.Text(), primary_key=True),
    sa.Column("appended_at_ms", sa.BigInteger(), nullable=False),
    # SHA-256 of the batch's events: a key repeated with other events is a conflict (2.7).
    # NULL for batches accepted before the digest was kept.
    sa.Column("digest", sa.String(64), nullable=True),
    sa.Index(None, "run_id"),
)

service_keys = sa.Table(
    "service_keys",
    metadata,
    # Secrets every replica shares through the database (e.g. the key that seals cursors).
    sa.Column("name", sa.Text(), primary_key=True),
    sa.Column("secret", sa.LargeBinary(), nullable=False),
    sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
)

# --- webhooks (CONTRACT.md 13) ---------------------------------------------------------

webhooks = sa.Table(
    "webhooks",
    metadata,
    sa.Column("webhook_id", sa.Text(), primary_key=True),
    sa.Column("url", sa.Text(), nullable=False),
    # ``whsec_`` + base64: kept, since every delivery is signed with it; never answered
    # again after its creation.
    sa.Column("secret", sa.Text(), nullable=False),
    # The event types as a JSON array, in the order the subscription named them.
    sa.Column("events", sa.Text(), nullable=False),
    sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
)

# Which subscriptions want which event type: the fan-out of a write is one index range.
webhook_event_types = sa.Table(
    "webhook_event_types",
    metadata,
    sa.Column("event_type", sa.Text(), primary_key=True),
    sa.Column("webhook_id", sa.Text(), primary_key=True),
)

# The outbox: one row per event that at least one subscription wanted, written in the
# transaction of the state change that caused it (its body is fixed then).
webhook_events = sa.Table(
    "webhook_events",
    metadata,
    sa.Column("event_id", sa.Text(), primary_key=True),
    sa.Column("type", sa.Text(), nullable=False),
    sa.Column("occurred_at_ms", sa.BigInteger(), nullable=False),
    # The JSON body every delivery of the event sends, byte for byte.
    sa.Column("body", sa.Text(), nullable=False),
)

# One delivery per (subscription, event), fanned out at write time. ``seq`` is drawn under
# the lock that serialises the writers of the event's session (or sessionless run), so it
# is the commit order within ``ordering``.
webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
    sa.Column("seq", _BigId, primary_key=True, autoincrement=True),
    sa.Column("webhook_id", sa.Text(), nullable=False),
    sa.Column("event_id", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=False),
    # "session:<id>" or "run:<id>" (a sessionless run): deliveries in one ordering go out
    # one after the other.
    sa.Column("ordering", sa.Text(), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("last_status_code", sa.Integer(), nullable=True),
    # Due time; while an attempt is in flight, the end of its lease.
    sa.Column("next_attempt_at_ms", sa.BigInteger(), nullable=False),
    # When the retry window began (creation, or a manual retry).
    sa.Column("window_start_ms", sa.BigInteger(), nullable=False),
    sa.UniqueConstraint("webhook_id", "event_id"),
    sa.Index(None, "status", "next_attempt_at_ms"),
    sa.Index(None, "webhook_id", "ordering", "seq"),
    sa.Index(None, "webhook_id", "status", "seq"),
    sa.Index(None, "event_id"),
)

# Session and run IDs an SQLite import holds while it publishes in slices (claims.py): a
# start or create_session of a claimed ID waits (``unavailable``) until the import has
# published it or given it back. ``expires_at_ms`` is a lease every slice renews.
import_claims = sa.Table(
    "import_claims",
    metadata,
    # session | run
    sa.Column("kind", sa.String(8), primary_key=True),
    sa.Column("claimed_id", sa.Text(), primary_key=True),
    sa.Column("import_id", sa.Text(), nullable=False),
    sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
    sa.Index(None, "import_id"),
)

# --- run seeds and preparations (CONTRACT.md 15) -------------------------------------
# One row per seed operation: the run ID it binds, its owner, the attempt that published
# (NULL until one did) and the store-clock time of its last seed write (retention, 15.7).
seed_operations = sa.Table(
    "seed_operations",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("agent_id", sa.Text(), nullable=False),
    # NULL for a sessionless operation (declared with session_id "").
    sa.Column("session_id", sa.Text(), sa.ForeignKey("sessions.session_id"), nullable=True),
    sa.Column("command_id", sa.Text(), nullable=False),
    sa.Column("published_attempt_id", sa.Text(), nullable=True, info=MUTABLE),
    sa.Column("updated_at_ms", sa.BigInteger(), nullable=False, info=MUTABLE),
    sa.Index(None, "session_id", "updated_at_ms"),
)

# One row per attempt: its state, its declaration and resolved source (canonical JSON;
# NULL for a settlement's tombstone), and the counters its appends move.
seed_attempts = sa.Table(
    "seed_attempts",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("attempt_id", sa.Text(), primary_key=True),
    # open | published | abandoned
    sa.Column("state", sa.String(16), nullable=False, info=MUTABLE),
    sa.Column("declaration", sa.Text(), nullable=True),
    sa.Column("source", sa.Text(), nullable=True),
    sa.Column("history_end", sa.BigInteger(), nullable=False, server_default="0", info=MUTABLE),
    sa.Column("body_end", sa.BigInteger(), nullable=False, server_default="0", info=MUTABLE),
    sa.Column("prepared_bytes", sa.BigInteger(), nullable=False, server_default="0", info=MUTABLE),
    # The position of the attempt's ``prefix`` record; NULL while it holds none.
    sa.Column("prefix_id", sa.BigInteger(), nullable=True, info=MUTABLE),
    # Whether the last record is a literal part that is not final.
    sa.Column(
        "literal_open", sa.Boolean(), nullable=False, server_default=sa.false(), info=MUTABLE
    ),
    sa.CheckConstraint("state IN ('open', 'published', 'abandoned')", name="state"),
)

# An attempt's records, numbered 1, 2, ... (``previous_id`` is always ``id - 1``).
# ``wire_size``: the bytes of the record's canonical wire encoding, so a page is cut at its
# byte bound before any content is read.
seed_records = sa.Table(
    "seed_records",
    metadata,
    sa.Column("run_id", sa.Text(), primary_key=True),
    sa.Column("attempt_id", sa.Text(), primary_key=True),
    sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("key", sa.Text(), nullable=False),
    # messages | literal_part | prefix | prepared
    sa.Column("variant", sa.String(16), nullable=False),
    # The exact bytes: messages' JSON text, a literal part's data, the prepared bytes, or a
    # prefix's canonical JSON.
    sa.Column("data", sa.LargeBinary(), nullable=False),
    # A literal part's ``final``; NULL for the other variants.
    sa.Column("final", sa.Boolean(), nullable=True),
    sa.Column("wire_size", sa.BigInteger(), nullable=False),
    sa.UniqueConstraint("run_id", "attempt_id", "key"),
)
