-- Strict mode: one stamping state per shard shared by every session of the
-- server, in shared memory set up at start (shardid in
-- shared_preload_libraries) or, on PostgreSQL 17+ without preloading, at
-- first use (the shared memory registry).
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the first stamp after the start (or a promotion) seeded every shard past
-- the durable high-water mark H and the clock; H stays ahead of every id
-- (ahead of the id, not of the clock: H goes one window past the last id,
-- and a slow server, valgrind's say, can pass it before the next line runs)
SELECT shardid.next_id(1) AS first_id \gset
SELECT :first_id > 0 AS stamped;
SELECT mode, shared_memory IN ('shared_preload_libraries', 'dynamic shared memory') AS shared,
       max_lead_ms,
       seeded_at >= pg_postmaster_start_time() AS seeded_after_start,
       high_water_mark > shardid.id_time(:first_id) AS high_water_ahead,
       high_water_writes >= 1 AS high_water_written,
       ids_epoch = epoch AS ids_epoch_remembered
FROM shardid.info();
-- what keeps the durable mark (info() from 1.3 on); the deprecated
-- mark_status() of 1.2 answers the same under its old names
SELECT high_water_origin, epoch_origin,
       -- H less the clock read by info(), plus the time since the id
       high_water_ahead_ms
       + extract(epoch FROM clock_timestamp() - shardid.id_time(:first_id)) * 1000 > 0
         AS mark_ahead,
       origin_slots_setting IN ('max_replication_slots', 'max_active_replication_origins') AS slots_setting,
       origin_slots > 0 AS slots, unconfirmed_raises,
       floors_applied >= 0 AS floors_counted, floors_moved >= 0 AS moves_counted,
       floors_beyond_bound
FROM shardid.info();
SELECT (m.high_water_origin, m.epoch_origin, m.high_water_mark, m.origin_slots_setting,
        m.origin_slots, m.unconfirmed_raises, m.stored_checks, m.stored_moves, m.stored_too_far)
       IS NOT DISTINCT FROM
       (i.high_water_origin, i.epoch_origin, i.high_water_mark, i.origin_slots_setting,
        i.origin_slots, i.unconfirmed_raises, i.floors_applied, i.floors_moved, i.floors_beyond_bound)
       AS mark_status_same, m.stored_unindexed
FROM shardid.mark_status() m, shardid.info() i;

-- ids of a shard increase in the order they are stamped, whatever seqs
-- arrive: the seq field comes from the shard's counter and the given value
-- is ignored, so the same seq again and again still fills a millisecond
-- with up to 1024 ids instead of taking a new millisecond each time
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS increasing,
       count(DISTINCT shardid.id_millis(id)) < 100 AS shares_milliseconds
FROM (SELECT id, lag(id) OVER (ORDER BY i) AS prev
      FROM (SELECT i, shardid.next_id(9, 42) AS id
            FROM generate_series(1, 300) i) s) x;

-- seqs from two sequences and from the shard counter, interleaved
CREATE SEQUENCE sa;
CREATE SEQUENCE sb;
SELECT count(*) AS ids, count(DISTINCT v) AS distinct_ids,
       bool_and(v > prev) AS increasing
FROM (SELECT v, lag(v) OVER (ORDER BY g, k) AS prev
      FROM generate_series(1, 20000) g,
           LATERAL (VALUES (1, shardid.next_id(7, nextval('sa') + 0 * g)),
                           (2, shardid.next_id(7, nextval('sb') + 0 * g)),
                           (3, shardid.next_id(7 + 0 * g))) x(k, v)) y;
DROP SEQUENCE sa, sb;

-- the sequence-free form: a counter in shared memory fills the seq field
SELECT shardid.id_shard(id) AS shard, abs(extract(epoch FROM shardid.id_time(id) - clock_timestamp())) < 2 AS time_is_now
FROM (SELECT shardid.next_id(11) AS id) s;
CREATE SCHEMA s12;
CREATE TABLE s12.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(12), v int);
INSERT INTO s12.t (v) SELECT g FROM generate_series(1, 200000) g;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid.id_shard(id) = 12) AS all_shard_12
FROM s12.t;
SELECT max(n) <= 1024 AS within_ceiling
FROM (SELECT count(*) AS n FROM s12.t GROUP BY shardid.id_millis(id)) c;
SELECT bool_and(id > prev) AS increasing
FROM (SELECT id, lag(id) OVER (ORDER BY v) AS prev FROM s12.t) x;
DROP SCHEMA s12 CASCADE;

-- bad input is rejected as in session mode
SELECT shardid.next_id(8192);
SELECT shardid.next_id(-1);
SELECT shardid.next_id(5, -1);
SELECT shardid.next_id(NULL) IS NULL AS null_in_null_out;

-- the clock checks hold here too
SET shardid.epoch = '2999-01-01 00:00:00+00';
SELECT shardid.next_id(5);
SET shardid.epoch = '0';
SELECT shardid.next_id(5, 1);
RESET shardid.epoch;

-- shardid.max_lead_ms is set in postgresql.conf, not per session
SET shardid.max_lead_ms = 10;

-- the doctor has nothing against a sequence-free DEFAULT here
CREATE SCHEMA s8190;
CREATE TABLE s8190.t (id bigint DEFAULT shardid.next_id(8190), v int);
SELECT problem, object FROM shardid.doctor() WHERE problem LIKE 'sequence-free%';
DROP SCHEMA s8190 CASCADE;

-- shard_stamps(): ids made since the start, counted per shard; the last id
-- is the shard's newest; the view shard_state shows registered shards
CREATE TEMP TABLE before AS SELECT shard, ids FROM shardid_internal.shard_stamps() WHERE shard = 8189;
SELECT count(*) FROM shardid.next_ids(8189, 300);
CREATE TEMP TABLE made AS SELECT x FROM shardid.next_ids(8189, 5) x;
SELECT s.ids - b.ids AS made, s.last_id = (SELECT max(x) FROM made) AS last_is_newest
FROM shardid_internal.shard_stamps() s JOIN before b USING (shard);
-- lead_ms is the last id's time less the clock read by shard_stamps():
-- checked against clock_timestamp() read after it in the same statement
-- (the last id was made statements ago, a slow server's seconds perhaps)
SELECT shardid.next_id(8189) > last_id AS after_last,
       lead_ms <= 2000
       AND lead_ms - extract(epoch FROM shardid.id_time(last_id) - clock_timestamp()) * 1000
           BETWEEN -1 AND 1000 AS lead_sane
FROM shardid_internal.shard_stamps() WHERE shard = 8189;
SELECT count(*) = 8192 AS every_shard FROM shardid_internal.shard_stamps();
CREATE SCHEMA s8189;
SELECT shardid.register_shard(8189, 's8189');
SELECT shard, schema_name, stamped_since_start, ids > 0 AS counted FROM shardid.shard_state WHERE shard = 8189;
SELECT shardid.unregister_shard(8189);
DROP SCHEMA s8189;

-- add_shards() (and the deprecated create_shards() and provision_shards())
-- give new tables next_id(shard), without a sequence, where strict mode
-- holds, and say so once (the sequence form is faster than bigserial only
-- without its nextval())
CREATE SCHEMA dflt_tpl;
CREATE TABLE dflt_tpl.a (id bigint PRIMARY KEY, v int);
CREATE TABLE dflt_tpl.b (id bigint PRIMARY KEY, v int);
SELECT * FROM shardid.create_shards('dflt_tpl', ARRAY[8180], prefix => 'dflt_');
SELECT table_name, default_expr FROM shardid.id_defaults WHERE schema_name = 'dflt_8180' ORDER BY 1;
SELECT count(*) AS sequences FROM pg_class WHERE relkind = 'S' AND relnamespace = 'dflt_8180'::regnamespace;
-- nothing to make: nothing said
SELECT * FROM shardid.create_shards('dflt_tpl', ARRAY[8180], prefix => 'dflt_');
CALL shardid.provision_shards('dflt_tpl', 8181, 8182, prefix => 'dflt_');
CALL shardid.add_shards('dflt_tpl', '{8184}', prefix => 'dflt_');
CALL shardid.add_shards('dflt_tpl', '{8185}', in_batches => false, prefix => 'dflt_');
SELECT schema_name, table_name, default_expr FROM shardid.id_defaults WHERE schema_name IN ('dflt_8181', 'dflt_8182', 'dflt_8184', 'dflt_8185') ORDER BY 1, 2;
-- use_sequence => true still makes the sequence form
SELECT * FROM shardid.create_shards('dflt_tpl', ARRAY[8183], prefix => 'dflt_', use_sequence => true);
SELECT table_name, default_expr FROM shardid.id_defaults WHERE schema_name = 'dflt_8183' ORDER BY 1;
INSERT INTO dflt_8180.a (v) VALUES (1);
SELECT shardid.id_shard(id) FROM dflt_8180.a;
SELECT shardid.unregister_shard(s) FROM generate_series(8180, 8185) s;
SET client_min_messages = warning;
DROP SCHEMA dflt_tpl, dflt_8180, dflt_8181, dflt_8182, dflt_8183, dflt_8184, dflt_8185 CASCADE;
RESET client_min_messages;
