-- next_id(): ids stamped from the wall clock, unique at any rate.  What
-- holds in every mode (session mode, strict mode preloaded or through the
-- shared memory registry); the seq field, which the modes fill differently,
-- is checked in test/session/sql and test/strict/sql.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the shard field is the shard given, the time is now
SELECT shardid.id_shard(id) AS shard,
       abs(extract(epoch FROM shardid.id_time(id) - clock_timestamp())) < 1 AS time_is_now
FROM (SELECT shardid.next_id(5, 7) AS id) s;
SELECT shardid.id_shard(shardid.next_id(8191, 1024 + 1023));
SELECT shardid.id_shard(shardid.next_id(0, 0));

-- wall clock, not transaction time: ids of one transaction move with it
BEGIN;
SELECT shardid.next_id(1, 1) AS a \gset
SELECT pg_sleep(0.02);
SELECT shardid.next_id(1, 2) AS b \gset
SELECT shardid.id_time(:b) - now() >= interval '19 ms' AS later_than_transaction_start;
COMMIT;

-- as a column DEFAULT, the way schema-per-shard tables use it
CREATE SCHEMA s5;
CREATE SEQUENCE s5.t_id_seq;
CREATE TABLE s5.t (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('s5.t_id_seq')),
    v int
);
-- one statement stamps far more than 1024 ids a millisecond could hold:
-- no duplicate key, no id outside shard 5, never more than 1024 ids in a ms
INSERT INTO s5.t (v) SELECT g FROM generate_series(1, 100000) g;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid.id_shard(id) = 5) AS all_shard_5,
       bool_and(id > 0) AS all_positive
FROM s5.t;
SELECT max(n) <= 1024 AS within_ceiling
FROM (SELECT count(*) AS n FROM s5.t GROUP BY shardid.id_millis(id)) c;
-- a session's ids of a shard never go back in time
SELECT bool_and(shardid.id_millis(id) >= prev) AS time_never_goes_back
FROM (SELECT id, lag(shardid.id_millis(id)) OVER (ORDER BY v) AS prev FROM s5.t) x;

-- two sequences feeding one shard in one session never repeat an id
CREATE SEQUENCE sa;
CREATE SEQUENCE sb;
SELECT count(*) AS ids, count(DISTINCT v) AS distinct_ids
FROM generate_series(1, 5000) g,
     LATERAL (VALUES (shardid.next_id(7, nextval('sa') + 0 * g)),
                     (shardid.next_id(7, nextval('sb') + 0 * g))) x(v);
-- nor does the same seq passed again and again
SELECT count(DISTINCT id) AS distinct_ids
FROM (SELECT shardid.next_id(9, 42) AS id FROM generate_series(1, 30)) x;
-- seq values of any size
SELECT shardid.id_shard(shardid.next_id(9, 9223372036854775807));

-- NULL in, NULL out
SELECT shardid.next_id(NULL, 1) IS NULL AS a, shardid.next_id(1, NULL) IS NULL AS b,
       shardid.next_id(NULL) IS NULL AS c;

-- bad input
SELECT shardid.next_id(-1, 1);
SELECT shardid.next_id(8192, 1);
SELECT shardid.next_id(5, -1);
SELECT shardid.next_id(5, -9223372036854775808);
-- a sequence that can go negative is caught on its first negative value
CREATE SEQUENCE neg_seq MINVALUE -10 START -1;
INSERT INTO s5.t (id, v) VALUES (shardid.next_id(5, nextval('neg_seq')), 0);

-- the clock must lie between the epoch and the sign bit
SET shardid.epoch = '2999-01-01 00:00:00+00';
SELECT shardid.next_id(5, 1);
INSERT INTO s5.t (v) VALUES (1);
SET shardid.epoch = '0';
SELECT shardid.next_id(5, 1);
-- another epoch than the one the server's ids were made with is refused
-- (the server's epoch, whatever it is, named <epoch> in the error)
RESET shardid.epoch;
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

SET shardid.epoch = '1314220021721';
SELECT pg_temp.error_of('SELECT shardid.next_id(5, 1)', ARRAY[:'epoch_at'::timestamptz], ARRAY['<epoch>']);
RESET shardid.epoch;
SELECT shardid.next_id(5, 1) > 0 AS ok_with_the_ids_epoch;

DROP SCHEMA s5 CASCADE;
DROP SEQUENCE sa, sb, neg_seq;
