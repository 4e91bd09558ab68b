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
    -- The run ID's lock that seed writes take (seeds/locks.py): a begin of this run ID
    -- commits before this start reads, or waits for it.
    PERFORM pg_advisory_xact_lock(hashtextextended(p_run_id, 15));
    IF EXISTS (SELECT 1 FROM runs WHERE runs.run_id = p_run_id)
       OR EXISTS (SELECT 1 FROM run_tombstones WHERE run_tombstones.run_id = p_run_id)
       OR EXISTS (SELECT 1 FROM seed_operations
                   WHERE seed_operations.run_id = p_run_id) THEN
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
