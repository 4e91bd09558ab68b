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
