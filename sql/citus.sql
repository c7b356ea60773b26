-- The Citus helpers of section 4 on a server without Citus: the set_id()
-- trigger and citus_use_trigger() work on any table; the rest say that
-- Citus is missing.  Ids made by the trigger (NULL id) are tested with a
-- real Citus cluster in test/citus.
SET client_min_messages = warning;
SET timezone = 'UTC';
-- the epoch in force, the server's (make installcheck runs on any): times
-- print as intervals since it
SELECT epoch AS epoch_at FROM shardid.info() \gset
CREATE SCHEMA c7;
CREATE TABLE c7.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE c7.u (uid bigint, v int);
CREATE TABLE c7.w (id integer, v int);

-- bad arguments
SELECT shardid.citus_use_trigger('c7.t', -1);
SELECT shardid.citus_use_trigger('c7.t', 8192);
SELECT shardid.citus_use_trigger('c7.t', NULL);
SELECT shardid.citus_use_trigger('c7.u', 7);
SELECT shardid.citus_use_trigger('c7.w', 7);
SELECT shardid.citus_use_trigger('c7.u', 7, 'nope');

-- the DEFAULT goes, the trigger comes (twice: it is replaced)
SELECT shardid.citus_use_trigger('c7.t', 7);
SELECT shardid.citus_use_trigger('c7.t', 7);
SELECT shardid.citus_use_trigger('c7.u', 7, 'uid');
SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d WHERE d.adrelid = 'c7.t'::regclass;
SELECT tgname, tgtype, pg_get_triggerdef(oid) FROM pg_trigger
WHERE tgrelid IN ('c7.t'::regclass, 'c7.u'::regclass) ORDER BY tgrelid::regclass::text;
SELECT schema_name, table_name, table_oid = 'c7.t'::regclass AS oid_ok, shard, id_column
FROM shardid.citus_tenants ORDER BY table_name;

-- an id given in the statement is kept, on any column name
INSERT INTO c7.t (id, v) VALUES (shardid.make_id(1000, 7, 1), 1) RETURNING (SELECT (d.created_at - :'epoch_at', d.shard, d.seq, d.millis) FROM shardid.decode(id) d) AS decode;
INSERT INTO c7.u (uid, v) VALUES (shardid.make_id(1000, 9, 2), 1) RETURNING (SELECT (d.created_at - :'epoch_at', d.shard, d.seq, d.millis) FROM shardid.decode(uid) d) AS decode;

-- set_id() only as the trigger citus_use_trigger() makes
CREATE TABLE c7.x (id bigint, v int);
CREATE TRIGGER bad AFTER INSERT ON c7.x FOR EACH ROW EXECUTE FUNCTION shardid.set_id(7, 'id');
INSERT INTO c7.x (v) VALUES (1);
DROP TRIGGER bad ON c7.x;
CREATE TRIGGER bad BEFORE INSERT ON c7.x FOR EACH ROW EXECUTE FUNCTION shardid.set_id(7);
INSERT INTO c7.x (v) VALUES (1);
DROP TRIGGER bad ON c7.x;
CREATE TRIGGER bad BEFORE INSERT ON c7.x FOR EACH STATEMENT EXECUTE FUNCTION shardid.set_id(7, 'id');
INSERT INTO c7.x (v) VALUES (1);
DROP TRIGGER bad ON c7.x;
CREATE TRIGGER bad BEFORE INSERT ON c7.x FOR EACH ROW EXECUTE FUNCTION shardid.set_id(7, 'nope');
INSERT INTO c7.x (v) VALUES (1);
DROP TRIGGER bad ON c7.x;
CREATE TRIGGER bad BEFORE INSERT ON c7.x FOR EACH ROW EXECUTE FUNCTION shardid.set_id(7, 'v');
INSERT INTO c7.x (v) VALUES (1);
DROP TRIGGER bad ON c7.x;

-- routing without a registry row: the one schema whose set_id() triggers
-- name the shard (what a Citus worker knows); the registry comes first;
-- two schemas claiming a shard give no answer
SELECT shardid.shard_schema(7), shardid.id_schema(shardid.make_id(1000, 7, 1)), shardid.shard_schema(8);
CREATE SCHEMA c7bis;
CREATE TABLE c7bis.t (id bigint, v int);
SELECT shardid.citus_use_trigger('c7bis.t', 7);
SELECT shardid.shard_schema(7);
SELECT shardid.register_shard(7, 'c7bis');
SELECT shardid.shard_schema(7);
SELECT shardid.unregister_shard(7);
DROP SCHEMA c7bis CASCADE;
SELECT shardid.shard_schema(7);
-- set_id() is PUBLIC: a role that may not register shards claims none with
-- a trigger on a table of its own
CREATE ROLE c_claimer;
CREATE SCHEMA c_claim AUTHORIZATION c_claimer;
SET ROLE c_claimer;
CREATE TABLE c_claim.t (id bigint, v int);
CREATE TRIGGER claim BEFORE INSERT ON c_claim.t FOR EACH ROW EXECUTE FUNCTION shardid.set_id(8, 'id');
RESET ROLE;
SELECT shardid.shard_schema(8), shardid.id_schema(shardid.make_id(1000, 8, 1)), count(*) FROM shardid.citus_tenants WHERE shard = 8;
DROP SCHEMA c_claim CASCADE;
DROP ROLE c_claimer;

-- Citus is not here: create_shards() makes plain schemas; doctor() reads the
-- rows of set_id() tables too (c7.u holds a row of shard 9)
CREATE SCHEMA c_template;
CREATE TABLE c_template.t (id bigint PRIMARY KEY, v int);
SET citus.enable_schema_based_sharding = on;
SELECT * FROM shardid.create_shards('c_template', ARRAY[11], use_sequence => true);
SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d WHERE d.adrelid = 'shard_0011.t'::regclass;
RESET citus.enable_schema_based_sharding;
SELECT problem, object FROM shardid.doctor() WHERE problem <> 'epoch not set';
SELECT shardid.unregister_shard(11);
DROP SCHEMA shard_0011, c_template CASCADE;
SELECT * FROM shardid.citus_distribute_shard('c7', 7);
SELECT * FROM shardid.citus_doctor();

-- administrative functions are not for PUBLIC
SELECT p.pronamespace::regnamespace AS schema, p.proname,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_run
FROM pg_proc p WHERE p.pronamespace IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace)
  AND p.proname IN ('set_id', 'citus_use_trigger', 'citus_distribute_shard', 'citus_doctor',
                    'create_shards', 'create_local_shards', 'citus_guard', 'citus_guard_ddl')
ORDER BY 1, 2;

-- event trigger shardid_citus_guard without Citus: it is there, and leaves
-- every table as made, also one beside a set_id() table with a next_id()
-- DEFAULT or without any (test/citus/guard.sh: what it does with Citus)
SELECT evtevent, evttags, evtfoid::regprocedure, evtenabled FROM pg_event_trigger
WHERE evtname = 'shardid_citus_guard';
CREATE TABLE c7.late (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE c7.late2 (id bigint NOT NULL, v int);
ALTER TABLE c7.late2 ADD COLUMN w int;
SELECT c.relname, pg_get_expr(d.adbin, d.adrelid) AS id_default,
       (SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = c.oid) AS triggers
FROM pg_class c LEFT JOIN pg_attrdef d ON d.adrelid = c.oid
WHERE c.oid IN ('c7.late'::regclass, 'c7.late2'::regclass) ORDER BY 1;
-- its function is for the event trigger only
SELECT shardid_internal.citus_guard();

DROP SCHEMA c7 CASCADE;
