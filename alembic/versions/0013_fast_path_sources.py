"""PostgreSQL's fast path contained (issue 28): its functions as their ``.sql`` files say.

The source of each fast-path function now lives in ``app/storage/fast_path/<name>.sql``;
this migration freezes a copy of every one (``FUNCTIONS``: a migration never reads the
package, whose files move on). Changes against 0010-0012:

* ``runtime_store_finish_run`` no longer spells the cancellation-provenance rule in SQL
  (``COALESCE(NULLIF(reason, ''), 'engine_canceled')``): the store passes the stored
  reasons the ``run_completed`` accepts, computed by ``app/domain/commands.py``, as
  ``p_cancellation_reasons`` (NULL: any), and the function only compares.
* The store calls every function with named arguments.

``tests/storage/test_fast_path_source.py`` checks that the package's files, the latest
migration's copies and the functions of a migrated database agree.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 07:40:00.000000
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_FINISH: Final = (
    "runtime_store_finish_run"
    "(text, text, text, text, bigint, text, text, text, text, text, bytea, bigint)"
)
_NEW_FINISH: Final = (
    "runtime_store_finish_run"
    "(text, text, text, text[], bigint, text, text, text, text, text, bytea, bigint)"
)

#: The fast path's functions as this revision leaves them, by name.
FUNCTIONS: Final = {
    "runtime_store_append_record": """\
CREATE OR REPLACE FUNCTION runtime_store_append_record(
    p_run_id text, p_event_key text, p_agent_id text, p_session_id text, p_turn_id text,
    p_type text, p_payload bytea, p_timestamp_ms bigint,
    OUT outcome text, OUT record_id bigint, OUT session_status text)
LANGUAGE plpgsql AS $$
DECLARE
    s_id text;
    s_status text;
    s_count bigint;
    r_agent text;
    r_session text;
    r_status text;
    r_count bigint;
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
        SELECT runs.agent_id, runs.session_id, runs.status, runs.record_count
          INTO r_agent, r_session, r_status, r_count
          FROM runs WHERE runs.run_id = p_run_id;
    ELSE
        SELECT runs.agent_id, runs.session_id, runs.status, runs.record_count
          INTO r_agent, r_session, r_status, r_count
          FROM runs WHERE runs.run_id = p_run_id
           FOR UPDATE;
        IF NOT FOUND OR r_session IS NOT NULL THEN
            RETURN;
        END IF;
    END IF;
    IF r_agent IS DISTINCT FROM p_agent_id OR r_session IS DISTINCT FROM p_session_id THEN
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
    IF r_status <> 'running' THEN
        RETURN;
    END IF;
    UPDATE runs SET record_count = r_count + 1 WHERE runs.run_id = p_run_id;
    IF s_id IS NOT NULL THEN
        UPDATE sessions SET record_count = s_count + 1 WHERE sessions.session_id = s_id;
    END IF;
    INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                             turn_id, type, payload, timestamp_ms)
    VALUES (p_run_id, r_count + 1, p_event_key, p_agent_id, p_session_id,
            CASE WHEN s_id IS NULL THEN NULL ELSE s_count + 1 END,
            p_turn_id, p_type, p_payload, p_timestamp_ms);
    outcome := 'inserted';
    record_id := r_count + 1;
    session_status := s_status;
END
$$
""",
    "runtime_store_append_records": """\
CREATE OR REPLACE FUNCTION runtime_store_append_records(
    p_run_id text, p_agent_id text, p_session_id text,
    p_event_keys text[], p_turn_ids text[], p_types text[], p_payloads bytea[],
    p_timestamps_ms bigint[],
    OUT outcome text, OUT record_ids bigint[], OUT inserted boolean[],
    OUT session_status text)
LANGUAGE plpgsql AS $$
DECLARE
    n integer := cardinality(p_event_keys);
    added integer := 0;
    s_id text;
    s_status text;
    s_count bigint;
    r_agent text;
    r_session text;
    r_status text;
    r_count bigint;
    found_row record;
BEGIN
    outcome := 'refused';
    IF n IS NULL OR n = 0 THEN
        RETURN;
    END IF;
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
        SELECT runs.agent_id, runs.session_id, runs.status, runs.record_count
          INTO r_agent, r_session, r_status, r_count
          FROM runs WHERE runs.run_id = p_run_id;
    ELSE
        SELECT runs.agent_id, runs.session_id, runs.status, runs.record_count
          INTO r_agent, r_session, r_status, r_count
          FROM runs WHERE runs.run_id = p_run_id
           FOR UPDATE;
        IF NOT FOUND OR r_session IS NOT NULL THEN
            RETURN;
        END IF;
    END IF;
    IF r_agent IS DISTINCT FROM p_agent_id OR r_session IS DISTINCT FROM p_session_id THEN
        RETURN;
    END IF;
    record_ids := array_fill(NULL::bigint, ARRAY[n]);
    inserted := array_fill(true, ARRAY[n]);
    -- The records already stored under the batch's keys, in one join on the key index.
    FOR found_row IN
        SELECT i.ord, stored.seq,
               (stored.agent_id = p_agent_id
                AND stored.session_id IS NOT DISTINCT FROM p_session_id
                AND stored.turn_id = i.turn_id
                AND stored.type = i.type
                AND stored.timestamp_ms = i.timestamp_ms
                AND stored.payload = i.payload) AS same
          FROM unnest(p_event_keys, p_turn_ids, p_types, p_payloads, p_timestamps_ms)
               WITH ORDINALITY AS i(event_key, turn_id, type, payload, timestamp_ms, ord)
          JOIN run_records AS stored
            ON stored.run_id = p_run_id AND stored.event_key = i.event_key
    LOOP
        IF NOT found_row.same THEN
            RETURN;
        END IF;
        record_ids[found_row.ord] := found_row.seq;
        inserted[found_row.ord] := false;
    END LOOP;
    FOR k IN 1..n LOOP
        IF inserted[k] THEN
            added := added + 1;
            record_ids[k] := r_count + added;
        END IF;
    END LOOP;
    IF added > 0 THEN
        IF r_status <> 'running' THEN
            RETURN;
        END IF;
        UPDATE runs SET record_count = r_count + added WHERE runs.run_id = p_run_id;
        IF s_id IS NOT NULL THEN
            UPDATE sessions SET record_count = s_count + added
             WHERE sessions.session_id = s_id;
        END IF;
        INSERT INTO run_records (run_id, seq, event_key, agent_id, session_id, session_seq,
                                 turn_id, type, payload, timestamp_ms)
        SELECT p_run_id, record_ids[i.ord], i.event_key, p_agent_id, p_session_id,
               CASE WHEN s_id IS NULL THEN NULL ELSE s_count + (record_ids[i.ord] - r_count) END,
               i.turn_id, i.type, i.payload, i.timestamp_ms
          FROM unnest(p_event_keys, p_turn_ids, p_types, p_payloads, p_timestamps_ms)
               WITH ORDINALITY AS i(event_key, turn_id, type, payload, timestamp_ms, ord)
         WHERE inserted[i.ord]
         ORDER BY i.ord;
    END IF;
    outcome := 'done';
    session_status := s_status;
END
$$
""",
    "runtime_store_start_run": """\
CREATE OR REPLACE FUNCTION runtime_store_start_run(
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
""",
    "runtime_store_finish_run": """\
CREATE OR REPLACE FUNCTION runtime_store_finish_run(
    p_run_id text, p_status text, p_labels text, p_cancellation_reasons text[],
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
    -- The run as the store's Python rules expect it (app/domain/commands.py): the record's
    -- labels, a stored cancellation reason the record accepts (any, when the array is
    -- NULL), running or already in this status (a retry), the record's owner.
    IF run.labels <> p_labels
       OR run.cancellation_reason <> ALL (p_cancellation_reasons)
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
""",
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"DROP FUNCTION {_OLD_FINISH}")
    for source in FUNCTIONS.values():
        op.execute(source)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"DROP FUNCTION {_NEW_FINISH}")
    # The other three are unchanged in substance; 0012's terminal function comes back.
    path = Path(__file__).with_name("0012_one_statement_start_and_terminal.py")
    spec = importlib.util.spec_from_file_location("revision_0012", path)
    assert spec is not None
    assert spec.loader is not None
    previous = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(previous)
    op.execute(previous._FINISH_FUNCTION)
