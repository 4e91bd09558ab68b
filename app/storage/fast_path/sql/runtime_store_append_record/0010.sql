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
