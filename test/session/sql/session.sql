-- Session mode: shardid not preloaded before PostgreSQL 17, each session
-- stamping on its own.  Runs only on such a server (test/run.sh picks it).
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

SELECT mode, shared_memory, seeded_at FROM shardid.info();

-- the seq field is the seq given, & 1023
SELECT shardid.id_shard(id) AS shard, shardid.id_seq(id) AS seq
FROM (SELECT shardid.next_id(5, 7) AS id) s;
SELECT shardid.id_shard(id), shardid.id_seq(id)
FROM (SELECT shardid.next_id(8191, 1024 + 1023) AS id) s;
SELECT shardid.id_shard(id), shardid.id_seq(id)
FROM (SELECT shardid.next_id(0, 0) AS id) s;
SELECT shardid.id_seq(shardid.next_id(9, 9223372036854775807));

-- the same seq passed again and again: each call after the first finds seq
-- 42 taken in its millisecond and moves to the next one
SELECT count(DISTINCT id) AS distinct_ids,
       count(DISTINCT shardid.id_millis(id)) AS distinct_ms,
       bool_and(shardid.id_seq(id) = 42) AS seq_kept
FROM (SELECT shardid.next_id(9, 42) AS id FROM generate_series(1, 30)) x;
SELECT clock_behind_calls FROM shardid.info();
-- the mark's origins exist in session mode too; the counters of strict
-- mode are NULL
SELECT high_water_origin, epoch_origin, unconfirmed_raises, floors_applied,
       floors_moved, floors_beyond_bound
FROM shardid.info();

-- the sequence-free form needs shared memory
SELECT shardid.next_id(5);

-- the doctor reports a sequence-free DEFAULT: every insert fails here
CREATE SCHEMA s8190;
CREATE TABLE s8190.t (id bigint DEFAULT shardid.next_id(8190), v int);
SELECT problem, object FROM shardid.doctor() WHERE problem LIKE 'sequence-free%';
DROP SCHEMA s8190 CASCADE;

-- add_shards() (and the deprecated create_shards() and provision_shards())
-- give new tables the sequence form where strict mode does not hold
-- (next_id(shard) would fail), and say so
SET client_min_messages = notice;
CREATE SCHEMA dflt_tpl;
CREATE TABLE dflt_tpl.a (id bigint PRIMARY KEY, v int);
SELECT * FROM shardid.create_shards('dflt_tpl', ARRAY[8180], prefix => 'dflt_');
CALL shardid.provision_shards('dflt_tpl', 8181, 8181, prefix => 'dflt_');
CALL shardid.add_shards('dflt_tpl', '{8182}', prefix => 'dflt_');
SELECT schema_name, default_expr FROM shardid.id_defaults WHERE schema_name LIKE 'dflt\_%' ORDER BY 1;
INSERT INTO dflt_8181.a (v) VALUES (1);
SELECT shardid.id_shard(id) FROM dflt_8181.a;
SELECT shardid.unregister_shard(s) FROM generate_series(8180, 8182) s;
SET client_min_messages = warning;
DROP SCHEMA dflt_tpl, dflt_8180, dflt_8181, dflt_8182 CASCADE;

-- use_sequence => false here: the tables are made as asked, with a
-- WARNING that every INSERT fails until shardid is preloaded (1.3 said
-- nothing)
\set SHOW_CONTEXT never
CREATE SCHEMA sf_tpl;
CREATE TABLE sf_tpl.a (id bigint PRIMARY KEY);
CALL shardid.add_shards('sf_tpl', '{8183}', prefix => 'sf_', use_sequence => false);
CALL shardid.add_shards('sf_tpl', '{8184}', prefix => 'sf_', use_sequence => false, in_batches => false);
SELECT count(*) FROM shardid.create_shards('sf_tpl', ARRAY[8185], prefix => 'sf_', use_sequence => false);
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE problem LIKE 'sequence-free%';
SELECT shardid.unregister_shard(s) FROM generate_series(8183, 8185) s;
DROP SCHEMA sf_tpl, sf_8183, sf_8184, sf_8185 CASCADE;
\set SHOW_CONTEXT errors
RESET client_min_messages;
