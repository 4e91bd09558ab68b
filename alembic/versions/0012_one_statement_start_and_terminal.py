"""One round trip for a run start and a terminal write on PostgreSQL (issue 18).

Two functions in the manner of ``runtime_store_append_record`` (migration 0010), which the
store sends in autocommit (no ``BEGIN``, no ``COMMIT``). Each does its operation's common
path and nothing else; whenever any rule would not let the write through unchanged it
writes nothing and answers ``refused``, and ``SqlStore`` runs its ordinary transaction,
which checks in the contract's order and raises the contract's error (or, if the state
changed in between, does whatever that state calls for).

* ``runtime_store_start_run`` (3.3-3.6): takes the start's lock (the session's row; for a
  one-shot child its parent's row) and, in an *active* session or none, starts a run whose
  ID was never used (no run, no tombstone): for a child first the ``child_run_linked``
  record on its parent (which must be running, of the start's session, the link record's
  owner, with the link's key free), then the run row, its label rows, the ``run_started``
  record with record ID 1, the next session positions and the session's counter. It
  refuses an unknown, ended or purged session, a parent that fails a check and an ID in
  use, so retries, stops in an ended session and every error take the transaction; the
  store never sends it a continuation (the predecessor's checks stay in Python).
* ``runtime_store_finish_run`` (3.10): takes the run's writers' lock (its session's row
  through the run; a sessionless run's own row) and, when the ``run_completed`` record
  passes the run's checks (labels, cancellation reason, owner), either answers ``stored``
  for the same record already stored under its key on a run already in that status (an
  exact retry), or finishes a *running* run: status, terminal key, ``updated_at``, the
  record with the next record ID and session position, and both counters.

The statement-level NOTIFY trigger of migration 0008 fires on each record insert as
before. SQLite has no such functions and keeps its path.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 17:40:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_START_FUNCTION = """
CREATE FUNCTION runtime_store_start_run(
    p_run_id text, p_agent_id text, p_session_id text, p_parent_run_id text,
    p_started_at_ms bigint, p_labels text, p_label_keys text[], p_label_values text[],
    p_now_ms bigint,
    p_event_key text, p_turn_id text, p_type text, p_payload bytea, p_timestamp_ms bigint,
    p_link_key text, p_link_agent_id text, p_link_turn_id text, p_link_type text,
    p_link_payload bytea, p_link_timestamp_ms bigint,
    OUT outcome text, OUT link_record_id bigint, OUT session_status text)
LANGUAGE plpgsql AS $$
DECLARE
    s_status text;
    s_count bigint;
    parent runs%ROWTYPE;
    linked integer := 0;
BEGIN
    outcome := 'refused';
    -- The lock that serialises the start: the session's row; a one-shot child's parent row.
    IF p_session_id IS NOT NULL THEN
        SELECT sessions.status, sessions.record_count INTO s_status, s_count
          FROM sessions WHERE sessions.session_id = p_session_id
           FOR UPDATE;
        IF NOT FOUND OR s_status <> 'active' THEN
            RETURN;
        END IF;
    END IF;
    IF p_link_key IS NOT NULL THEN
        IF p_session_id IS NULL THEN
            SELECT * INTO parent FROM runs WHERE runs.run_id = p_parent_run_id FOR UPDATE;
        ELSE
            SELECT * INTO parent FROM runs WHERE runs.run_id = p_parent_run_id;
        END IF;
        -- A running parent of the start's session, the link record's owner, its key free.
        IF NOT FOUND
           OR parent.status <> 'running'
           OR parent.session_id IS DISTINCT FROM p_session_id
           OR parent.agent_id <> p_link_agent_id
           OR EXISTS (SELECT 1 FROM run_records
                       WHERE run_records.run_id = p_parent_run_id
                         AND run_records.event_key = p_link_key) THEN
            RETURN;
        END IF;
        linked := 1;
    END IF;
    IF EXISTS (SELECT 1 FROM runs WHERE runs.run_id = p_run_id)
       OR EXISTS (SELECT 1 FROM run_tombstones WHERE run_tombstones.run_id = p_run_id) THEN
        RETURN;
    END IF;
    IF linked = 1 THEN
        UPDATE runs SET record_count = parent.record_count + 1
         WHERE runs.run_id = p_parent_run_id;
        INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                                 turn_id, type, payload, timestamp_ms)
        VALUES (p_parent_run_id, parent.record_count + 1, p_link_key, p_link_agent_id,
                p_session_id, s_count + 1, p_link_turn_id, p_link_type, p_link_payload,
                p_link_timestamp_ms);
        link_record_id := parent.record_count + 1;
    END IF;
    INSERT INTO runs (run_id, agent_id, session_id, parent_run_id, status, start_outcome,
                      started_at_ms, updated_at_ms, labels, cancellation_reason,
                      record_count, start_key, parent_link_key)
    VALUES (p_run_id, p_agent_id, p_session_id, p_parent_run_id, 'running', 'proceed',
            p_started_at_ms, p_now_ms, p_labels, '', 1, p_event_key, p_link_key);
    INSERT INTO run_labels (run_id, key, value, started_at_ms)
    SELECT p_run_id, label.key, label.value, p_started_at_ms
      FROM unnest(p_label_keys, p_label_values) AS label(key, value);
    INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                             turn_id, type, payload, timestamp_ms)
    VALUES (p_run_id, 1, p_event_key, p_agent_id, p_session_id, s_count + linked + 1,
            p_turn_id, p_type, p_payload, p_timestamp_ms);
    IF p_session_id IS NOT NULL THEN
        UPDATE sessions SET record_count = s_count + linked + 1
         WHERE sessions.session_id = p_session_id;
    END IF;
    outcome := 'inserted';
    session_status := s_status;
END
$$
"""

_FINISH_FUNCTION = """
CREATE FUNCTION runtime_store_finish_run(
    p_run_id text, p_status text, p_labels text, p_cancellation_reason text,
    p_now_ms bigint, p_event_key text, p_agent_id text, p_session_id text, p_turn_id text,
    p_type text, p_payload bytea, p_timestamp_ms bigint,
    OUT outcome text, OUT record_id bigint, OUT session_status text)
LANGUAGE plpgsql AS $$
DECLARE
    s_id text;
    s_status text;
    s_count bigint;
    run runs%ROWTYPE;
    stored run_records%ROWTYPE;
BEGIN
    outcome := 'refused';
    -- The writers' lock: the session's row through the run, else the sessionless run's own.
    SELECT sessions.session_id, sessions.status, sessions.record_count
      INTO s_id, s_status, s_count
      FROM sessions JOIN runs ON runs.session_id = sessions.session_id
     WHERE runs.run_id = p_run_id
       FOR UPDATE OF sessions;
    IF FOUND THEN
        IF s_status = 'purged' THEN
            RETURN;
        END IF;
        SELECT * INTO run FROM runs WHERE runs.run_id = p_run_id;
    ELSE
        SELECT * INTO run FROM runs WHERE runs.run_id = p_run_id FOR UPDATE;
        IF NOT FOUND OR run.session_id IS NOT NULL THEN
            RETURN;
        END IF;
    END IF;
    -- The run_completed record's checks against the run (labels, cancellation reason),
    -- the status (running, or this status for a retry) and the owner.
    IF run.labels <> p_labels
       OR (p_status = 'canceled'
           AND COALESCE(NULLIF(run.cancellation_reason, ''), 'engine_canceled')
               IS DISTINCT FROM p_cancellation_reason)
       OR (run.status <> 'running' AND run.status <> p_status)
       OR run.agent_id IS DISTINCT FROM p_agent_id
       OR run.session_id IS DISTINCT FROM p_session_id THEN
        RETURN;
    END IF;
    SELECT * INTO stored FROM run_records
     WHERE run_records.run_id = p_run_id AND run_records.event_key = p_event_key;
    IF FOUND THEN
        IF stored.agent_id = p_agent_id
           AND stored.session_id IS NOT DISTINCT FROM p_session_id
           AND stored.turn_id = p_turn_id
           AND stored.type = p_type
           AND stored.timestamp_ms = p_timestamp_ms
           AND stored.payload = p_payload THEN
            outcome := 'stored';
            record_id := stored.seq;
            session_status := s_status;
        END IF;
        RETURN;
    END IF;
    IF run.status <> 'running' THEN
        RETURN;
    END IF;
    UPDATE runs
       SET status = p_status, terminal_key = p_event_key, updated_at_ms = p_now_ms,
           record_count = run.record_count + 1
     WHERE runs.run_id = p_run_id;
    IF s_id IS NOT NULL THEN
        UPDATE sessions SET record_count = s_count + 1 WHERE sessions.session_id = s_id;
    END IF;
    INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                             turn_id, type, payload, timestamp_ms)
    VALUES (p_run_id, run.record_count + 1, p_event_key, p_agent_id, p_session_id,
            CASE WHEN s_id IS NULL THEN NULL ELSE s_count + 1 END,
            p_turn_id, p_type, p_payload, p_timestamp_ms);
    outcome := 'inserted';
    record_id := run.record_count + 1;
    session_status := s_status;
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_START_FUNCTION)
    op.execute(_FINISH_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "DROP FUNCTION runtime_store_start_run(text, text, text, text, bigint, text, text[], "
        "text[], bigint, text, text, text, bytea, bigint, text, text, text, text, bytea, bigint)"
    )
    op.execute(
        "DROP FUNCTION runtime_store_finish_run"
        "(text, text, text, text, bigint, text, text, text, text, text, bytea, bigint)"
    )
