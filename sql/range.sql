-- min_id() and max_id(): a time range becomes a primary-key range.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
-- times are given relative to the epoch in force, the server's (make
-- installcheck runs on any server) or the default 2026-01-01
SELECT epoch AS epoch_at FROM shardid.info() \gset
-- an error with the texts of the times it names (as shardid prints them,
-- in ms) replaced by what they are relative to the epoch: each text is
-- checked exactly
CREATE FUNCTION pg_temp.error_of(stmt text, times timestamptz[], names text[]) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE
    s text; m text; d text; h text; t text;
BEGIN
    EXECUTE stmt;
    RETURN NEXT 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
    FOR i IN 1 .. coalesce(array_length(times, 1), 0) LOOP
        t := to_char(times[i] AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00';
        m := replace(m, t, names[i]);
        d := replace(d, t, names[i]);
        h := replace(h, t, names[i]);
    END LOOP;
    RETURN NEXT 'ERROR ' || s || ':  ' || m;
    IF d <> '' THEN RETURN NEXT 'DETAIL:  ' || d; END IF;
    IF h <> '' THEN RETURN NEXT 'HINT:  ' || h; END IF;
END
$f$;

-- the epoch's first millisecond spans ids 0 .. 2^23 - 1
SELECT shardid.min_id(:'epoch_at'), shardid.max_id(:'epoch_at');
-- sub-millisecond parts fall to their millisecond
SELECT shardid.min_id(:'epoch_at'::timestamptz + interval '0.0019 s'),
       shardid.max_id(:'epoch_at'::timestamptz + interval '0.0019 s');
SELECT shardid.min_id(ts) = shardid.make_id(shardid.id_millis(shardid.min_id(ts)), 0, 0) AS min_ok,
       shardid.max_id(ts) = shardid.make_id(shardid.id_millis(shardid.min_id(ts)), 8191, 1023) AS max_ok,
       shardid.id_time(shardid.min_id(ts)) - :'epoch_at' AS ms
FROM (VALUES (:'epoch_at'::timestamptz + interval '324 days 12:34:56.789')) v(ts);
-- the last millisecond before the sign bit
SELECT shardid.max_id(:'epoch_at'::timestamptz + interval '12725 days 19:53:47.775');

-- with the 2011 epoch
SET shardid.epoch = '1314220021721';
SELECT shardid.min_id('2011-08-24 21:07:01.721+00'),
       shardid.max_id('2011-08-24 21:07:01.721+00') - shardid.min_id('2011-08-24 21:07:01.721+00') + 1 AS ids_per_ms;
SELECT sign_bit_at FROM shardid.info();
RESET shardid.epoch;

-- out of range
SELECT pg_temp.error_of(format('SELECT shardid.min_id(%L)', t), ARRAY[t, e], ARRAY['<epoch - 1 ms>', '<epoch>'])
FROM CAST(:'epoch_at' AS timestamptz) e, CAST(e - interval '1 ms' AS timestamptz) t;
SELECT pg_temp.error_of(format('SELECT shardid.max_id(%L)', t), ARRAY[t, e], ARRAY['<epoch + 2^40 ms>', '<epoch>'])
FROM CAST(:'epoch_at' AS timestamptz) e, CAST(e + interval '12725 days 19:53:47.776' AS timestamptz) t;
SELECT shardid.min_id('infinity');
SELECT shardid.max_id('-infinity');
SELECT shardid.min_id(NULL) IS NULL AS a, shardid.max_id(NULL) IS NULL AS b;

-- a time-range query is a primary-key index range scan
CREATE TABLE events (id bigint PRIMARY KEY, note text);
INSERT INTO events
SELECT shardid.make_id(i * 60000, (i % 8192)::int, i), 'minute ' || i
FROM generate_series(0::bigint, 99999) i;
ANALYZE events;
-- (the plan of any times: the generic plan, with the times as parameters)
PREPARE range_count(timestamptz, timestamptz) AS
SELECT count(*) FROM events
WHERE id BETWEEN shardid.min_id($1) AND shardid.max_id($2);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE range_count(:'epoch_at', :'epoch_at');
RESET plan_cache_mode;
EXECUTE range_count(:'epoch_at'::timestamptz + interval '1 day', :'epoch_at'::timestamptz + interval '1 day 01:00');
-- both ends' milliseconds are included: minutes 1440 .. 1500
SELECT count(*), min(shardid.id_time(id)) - :'epoch_at' AS min, max(shardid.id_time(id)) - :'epoch_at' AS max
FROM events
WHERE id BETWEEN shardid.min_id(:'epoch_at'::timestamptz + interval '1 day')
             AND shardid.max_id(:'epoch_at'::timestamptz + interval '1 day 01:00');
-- the same answer as filtering on the decoded time, which must read every row
SELECT count(*) FROM events
WHERE shardid.id_time(id) BETWEEN :'epoch_at'::timestamptz + interval '1 day'
                              AND :'epoch_at'::timestamptz + interval '1 day 01:00:00.000999';
DROP TABLE events;
