-- Wrong calls of provisioning and conversion: each refused before anything
-- is made, with what to do; and what drifted from what provisioning makes
-- is seen, by add_shards() when it adopts a table or a schema (a WARNING
-- with the fix) and by doctor(scan_rows => false) afterwards (the same
-- fix).  The seeded fuzzer of such calls is test/security/wrong_calls.sh.
SET client_min_messages = warning;
\set SHOW_CONTEXT never
-- a session's first doctor() says that the epoch is not set, also where
-- the library is not preloaded and nothing loaded it yet (1.3 said nothing):
-- its epoch rows, kept, are that row where the epoch is at its built-in
-- default (test/run.sh's servers) and none where the server sets one (make
-- installcheck runs on any server); either way the comparison is true
CREATE TEMP TABLE first_doctor AS
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE problem LIKE 'epoch%';
SELECT (SELECT array_agg(problem || ' | ' || object) FROM first_doctor) IS NOT DISTINCT FROM
       CASE WHEN source = 'default' THEN ARRAY['epoch not set | shardid.epoch'] END AS row_iff_default
FROM pg_settings WHERE name = 'shardid.epoch';
DROP TABLE first_doctor;
-- the epoch in force, set explicitly: the doctor is quiet about it
SELECT current_setting('shardid.epoch') AS epoch \gset
SET shardid.epoch = :'epoch';

CREATE SCHEMA wc_template;
CREATE TABLE wc_template.users (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE wc_template.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE TABLE wc_template.settings (key text PRIMARY KEY, value text);

-- An id column that no table of the template has (a typo): refused,
-- naming the tables and the template's bigint primary key, in every form
CALL shardid.add_shards('wc_template', '{700}', id_column => 'nope', use_sequence => true);
CALL shardid.add_shards('wc_template', '{700}', id_column => 'nope', in_batches => false, use_sequence => true);
SELECT * FROM shardid.create_shards('wc_template', '{700}', id_column => 'nope');
-- nothing made, nothing registered
SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0700') AS schemas,
       (SELECT count(*) FROM shardid.shard_registry WHERE shard = 700) AS registered;
-- an id column of another type, or a generated one
CREATE SCHEMA wc_int;
CREATE TABLE wc_int.t (id integer PRIMARY KEY, v text);
CALL shardid.add_shards('wc_int', '{700}');
CREATE SCHEMA wc_gen;
CREATE TABLE wc_gen.t (id bigint GENERATED ALWAYS AS (v * 2) STORED, v bigint);
CALL shardid.add_shards('wc_gen', '{700}');
-- a template without a bigint primary key: the hint names no column
CREATE SCHEMA wc_nokey;
CREATE TABLE wc_nokey.t (v text);
CALL shardid.add_shards('wc_nokey', '{700}');
DROP SCHEMA wc_int, wc_gen, wc_nokey CASCADE;

-- What 1.3 made of id_column => 'nope': a registered shard whose tables
-- have no id DEFAULT, every insert failing on NOT NULL.  The doctor reports
-- each such column, with the call that fixes it; a table without the id
-- column (settings) is none of its business.
CREATE SCHEMA shard_0701;
CREATE TABLE shard_0701.users (LIKE wc_template.users INCLUDING ALL);
CREATE TABLE shard_0701.photos (LIKE wc_template.photos INCLUDING ALL);
CREATE TABLE shard_0701.settings (LIKE wc_template.settings INCLUDING ALL);
SELECT shardid.register_shard(701, 'shard_0701');
SELECT problem, object, detail, fix FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%0701%';
-- the fix, run as given: the doctor is silent, and inserts make ids of the shard
\o /dev/null
SELECT substring(fix FROM ': (SELECT shardid.convert_table\(.*\);) it gives') FROM shardid.doctor(scan_rows => false)
WHERE object LIKE '%0701%' \gexec
\o
SELECT count(*) AS rows_left FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%0701%';
INSERT INTO shard_0701.users (name) VALUES ('ada') RETURNING shardid.id_shard(id), shardid.id_schema(id);

-- A hand-made schema of bigserial tables, adopted: the WARNINGs of its id
-- columns and of its drift, each with its fix, at the time; the doctor
-- reports the same afterwards (1.3: no word from either, and the next
-- INSERT made id 2 of "shard 0")
CREATE SCHEMA shard_0702;
CREATE TABLE shard_0702.users (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE shard_0702.photos (id bigserial PRIMARY KEY, user_id bigint NOT NULL, caption text, extra int);
INSERT INTO shard_0702.users (name) VALUES ('ada');
CALL shardid.add_shards('wc_template', '{702}', use_sequence => true);
SELECT problem, object, detail, fix FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%0702%';
-- the fixes, run as given: the doctor is silent, the old id is a legacy
-- id and new ones are the shard's
\o /dev/null
SELECT coalesce(substring(fix FROM ': (SELECT shardid.convert_table\(.*\);) it gives'),
                substring(fix FROM 'To align it with the template: (.*) \(a DROP removes'))
FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%0702%' \gexec
\o
SELECT count(*) AS rows_left FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%0702%';
INSERT INTO shard_0702.users (name) VALUES ('bob');
SELECT name, shardid.id_is_legacy(id) AS legacy, shardid.id_shard(id) = 702 AS of_shard, shardid.id_schema(id)
FROM shard_0702.users ORDER BY id;
-- a next_id() DEFAULT of another shard, adopted: said too
CREATE SCHEMA shard_0703;
CREATE TABLE shard_0703.users (id bigint PRIMARY KEY DEFAULT shardid.next_id(7031, 1), name text NOT NULL);
CALL shardid.add_shards('wc_template', '{703}', use_sequence => true);

-- Drift after provisioning: a DEFAULT dropped, a sequence's DEFAULT, a
-- table that left its template (1.3 compared only tables with a next_id()
-- DEFAULT of their registered shard)
ALTER TABLE shard_0701.users ALTER COLUMN id DROP DEFAULT;
CREATE SEQUENCE shard_0701.photos_seq;
ALTER TABLE shard_0701.photos ALTER COLUMN id SET DEFAULT nextval('shard_0701.photos_seq');
ALTER TABLE shard_0701.photos ADD COLUMN extra int;
ALTER TABLE shard_0701.settings ALTER COLUMN value SET NOT NULL;
SELECT problem, object, fix FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%0701%';
-- a table of a shard can also hold ids of its shard already: convert_table()
-- refuses it (its DETAIL names the id, and whether the id is ahead of the
-- clock depends on the mode) and says the DEFAULT is all it needs
CREATE TABLE shard_0701.notes (id bigint PRIMARY KEY);
INSERT INTO shard_0701.notes VALUES (shardid.next_id(701, 1));
DO $$DECLARE hint text;
BEGIN
    PERFORM shardid.convert_table('shard_0701.notes', 701);
EXCEPTION WHEN numeric_value_out_of_range THEN
    GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
    RAISE WARNING '%', substring(hint FROM 'If they are .*');
END$$;

-- Another role's objects in a shard schema: provisioning refuses to adopt
-- one under a template table's name; the doctor names every one afterwards
-- (1.3: never), and provisioning says so when it adopts the schema
CREATE ROLE wc_other;
GRANT USAGE, CREATE ON SCHEMA shard_0702 TO wc_other;
CREATE TABLE wc_template.comments (id bigint PRIMARY KEY, body text);
SET ROLE wc_other;
CREATE VIEW shard_0702.comments AS SELECT 1::bigint AS id, 'x'::text AS body;
CREATE FUNCTION shard_0702.helper() RETURNS integer LANGUAGE sql AS 'SELECT 1';
RESET ROLE;
CALL shardid.add_shards('wc_template', '{702}', use_sequence => true);
SELECT problem, object, detail, fix FROM shardid.doctor(scan_rows => false) WHERE problem LIKE 'foreign object%';
DROP VIEW shard_0702.comments;
CALL shardid.add_shards('wc_template', '{702}', use_sequence => true);
-- a shard schema of such a role is one too
CREATE SCHEMA shard_0704 AUTHORIZATION wc_other;
SELECT shardid.register_shard(704, 'shard_0704');
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE problem LIKE 'foreign object%';
DROP SCHEMA shard_0704;
SELECT shardid.unregister_shard(704);
DROP FUNCTION shard_0702.helper();
DROP TABLE wc_template.comments, shard_0702.comments;
REVOKE ALL ON SCHEMA shard_0702 FROM wc_other;
DROP ROLE wc_other;

-- convert_table() with a shard registered to another schema: refused (1.3
-- accepted it with a NOTICE whose register_shard() then failed), the hint
-- works; and a schema registered to another shard
CREATE SCHEMA wc_app;
CREATE TABLE wc_app.orders (id bigserial PRIMARY KEY, what text);
SELECT legacy_below FROM shardid.convert_table('wc_app.orders', 702);
SELECT legacy_below FROM shardid.convert_table('shard_0702.users', 701);
SELECT shardid.register_shard(705, 'wc_app');
SELECT legacy_below FROM shardid.convert_table('wc_app.orders', 702);
SELECT legacy_below FROM shardid.convert_table('wc_app.orders', 706);
SELECT legacy_below FROM shardid.convert_table('wc_app.orders', 705);
SELECT shardid.unregister_shard(705);
-- converted with a shard registered nowhere, which add_shards() registers
-- later: said when it does (the doctor's "DEFAULT of a shard registered
-- elsewhere")
CREATE TABLE wc_app.events_log (id bigserial PRIMARY KEY);
SELECT legacy_below FROM shardid.convert_table('wc_app.events_log', 711);
CALL shardid.add_shards('wc_template', '{711}', use_sequence => true);
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE object LIKE '%711%' OR object LIKE 'wc_app.events%';
DROP TABLE wc_app.events_log;
DROP SCHEMA shard_0711 CASCADE;
SELECT shardid.unregister_shard(711);
-- a view, a sequence, a partition, a temporary table, a column that is
-- not there or not an integer, a shard out of range or NULL
CREATE VIEW wc_app.v AS SELECT id FROM wc_app.orders;
SELECT legacy_below FROM shardid.convert_table('wc_app.v', 705);
SELECT legacy_below FROM shardid.convert_table('wc_app.orders_id_seq', 705);
CREATE TABLE wc_app.events (id bigint, at date) PARTITION BY RANGE (at);
CREATE TABLE wc_app.events_1 PARTITION OF wc_app.events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
SELECT legacy_below FROM shardid.convert_table('wc_app.events_1', 705);
CREATE TEMP TABLE wc_temp (id bigserial);
SELECT legacy_below FROM shardid.convert_table('wc_temp', 705);
CREATE TABLE wc_app.keyed (code text PRIMARY KEY, n integer);
SELECT legacy_below FROM shardid.convert_table('wc_app.keyed', 705);
SELECT legacy_below FROM shardid.convert_table('wc_app.keyed', 705, 'code');
SELECT legacy_below FROM shardid.convert_table('wc_app.keyed', 8192, 'n');
SELECT shardid.convert_table('wc_app.keyed', NULL, 'n') IS NULL AS strict;
SELECT count(*) AS recorded FROM shardid.legacy_ids WHERE tab::text LIKE 'wc_app.%';
DROP SCHEMA wc_app CASCADE;

-- add_shards() commits after each batch: inside a transaction block (what
-- migration tools run), from a function, in an implicit transaction of
-- several statements or in an EXCEPTION block it is refused at once with
-- what to do (1.3: "invalid transaction termination" at its first COMMIT)
BEGIN;
CALL shardid.add_shards('wc_template', '{706}', use_sequence => true);
ROLLBACK;
CREATE FUNCTION wc_provision() RETURNS void LANGUAGE plpgsql AS
$$DECLARE c integer; e integer;
BEGIN CALL shardid.add_shards('wc_template', '{706}', use_sequence => true, tables_created => c, tables_existing => e); END$$;
SELECT wc_provision();
DROP FUNCTION wc_provision();
SELECT 1 AS first \; CALL shardid.add_shards('wc_template', '{706}', use_sequence => true);
DO $$DECLARE c integer; e integer;
BEGIN CALL shardid.add_shards('wc_template', '{706}', use_sequence => true, tables_created => c, tables_existing => e);
EXCEPTION WHEN division_by_zero THEN NULL; END$$;
-- what the hint says works: in_batches => false in the transaction, or
-- the CALL on its own (also from a DO block, which may commit)
BEGIN;
CALL shardid.add_shards('wc_template', '{706}', in_batches => false, use_sequence => true);
ROLLBACK;
DO $$DECLARE c integer; e integer;
BEGIN CALL shardid.add_shards('wc_template', '{706}', use_sequence => true, tables_created => c, tables_existing => e); END$$;
SELECT shard, schema_name FROM shardid.shards WHERE shard = 706;

-- the shards of a call: a NULL, a range out of range (checked before its
-- list is built), upwards only; a shard given twice is made once
CALL shardid.add_shards('wc_template', '{707, NULL}', use_sequence => true);
CALL shardid.add_shards('wc_template', first_shard => 0, last_shard => 2147483647, use_sequence => true);
CALL shardid.add_shards('wc_template', first_shard => 708, last_shard => 707, use_sequence => true);
CALL shardid.add_shards('wc_template', '{707, 707}', use_sequence => true);
-- names: a prefix whose schema names PostgreSQL would cut, a schema
-- registered to another shard
CALL shardid.add_shards('wc_template', '{708}', prefix => repeat('p', 60), use_sequence => true);
CREATE SCHEMA wc_0709;
SELECT shardid.register_shard(710, 'wc_0709');
CALL shardid.add_shards('wc_template', '{709}', prefix => 'wc_', use_sequence => true);
SELECT shardid.unregister_shard(710);
DROP SCHEMA wc_0709;
SELECT count(*) AS made FROM pg_namespace WHERE nspname LIKE 'shard\_070_' OR nspname LIKE 'wc\_07%';

-- Near misses of the id functions are PostgreSQL's own errors: there is no
-- next_id(bigint) overload to catch them, as one would make next_id($1) of
-- an untyped parameter (how drivers send one) ambiguous, and a DEFAULT
-- written with it would fail only at INSERT; the README's Troubleshooting
-- says what to pass
SELECT shardid.next_id(5::bigint);
SELECT shardid.next_id(5::bigint, 1);
SELECT shardid.next_id(5, 'shard_0005.t_id_seq');
PREPARE wc_untyped AS SELECT shardid.id_shard(shardid.next_id($1, 1));
EXECUTE wc_untyped(5);
DEALLOCATE wc_untyped;

RESET shardid.epoch;
DELETE FROM shardid.legacy_ids WHERE tab::text LIKE 'shard\_070_.%';
DROP SCHEMA shard_0701, shard_0702, shard_0703, shard_0706, shard_0707, wc_template CASCADE;
SELECT shardid.unregister_shard(s) FROM (VALUES (701), (702), (703), (706), (707)) v(s);
SELECT count(*) AS left_registered FROM shardid.shard_registry;
