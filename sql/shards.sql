-- Logical shards: provisioning from a template, the catalog of shards,
-- lookups, and the doctor with each problem planted.
SET client_min_messages = warning;
\set SHOW_CONTEXT never

-- a template designed once: ids, a foreign key, an index, a check
CREATE SCHEMA app_template;
CREATE TABLE app_template.users (
    id    bigint PRIMARY KEY,
    email text NOT NULL UNIQUE,
    CHECK (email LIKE '%@%')
);
CREATE TABLE app_template.photos (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES app_template.users (id) ON DELETE CASCADE,
    caption text
);
CREATE INDEX ON app_template.photos (user_id);
CREATE TABLE app_template.settings (key text PRIMARY KEY, value text);

-- The deprecated names (create_shards(), create_local_shards(), both
-- provision_shards() and mark_status()) work, and each warns the first time
-- a session calls it, naming what replaces it and the release that removes
-- it: create_shards() warns here and not at its next calls, below.
SELECT * FROM shardid.create_shards('app_template', ARRAY[1, 2, 42], use_sequence => true);
SELECT count(*) FROM shardid.mark_status();
SELECT count(*) FROM shardid.mark_status();
-- internal names are refused
SELECT shardid_internal.warn_deprecated('add_shards');
-- every DEFAULT names its shard and its own CACHE 1 sequence
SELECT schema_name, table_name, column_name, shard, default_expr, sequence_name
FROM shardid.id_defaults ORDER BY 1, 2;
SELECT seqrelid::regclass, seqcache FROM pg_sequence
WHERE seqrelid::regclass::text LIKE 'shard\_%' ORDER BY 1;
-- indexes, constraints and the foreign key came along, inside the shard
SELECT conrelid::regclass, contype, pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'shard_0042'::regnamespace AND contype <> 'n' ORDER BY 1, 2, 3;
SELECT indexrelid::regclass FROM pg_index
WHERE indrelid = 'shard_0042.photos'::regclass ORDER BY 1;

-- it works: rows land in their shard
INSERT INTO shard_0042.users (email) VALUES ('ada@example.org') RETURNING shardid.id_shard(id);
INSERT INTO shard_0042.photos (user_id, caption)
SELECT id, 'first' FROM shard_0042.users RETURNING shardid.id_shard(id);
-- the foreign key points into the shard's own users table
INSERT INTO shard_0002.photos (user_id, caption) VALUES (1, 'orphan');

-- re-running skips what exists and adds only what is missing
DROP TABLE shard_0002.settings;
SELECT * FROM shardid.create_shards('app_template', ARRAY[2, 3], use_sequence => true);

-- many shards: a transaction per batch of shards
CALL shardid.provision_shards('app_template', ARRAY[60, 61, 62], use_sequence => true);
CALL shardid.provision_shards('app_template', ARRAY[61, 63], use_sequence => true);
CALL shardid.provision_shards('app_template', 62, 64, use_sequence => true);
SELECT count(*) FROM shardid.shards WHERE shard BETWEEN 60 AND 64;
BEGIN;
CALL shardid.provision_shards('app_template', ARRAY[65], use_sequence => true);
ROLLBACK;
CALL shardid.provision_shards('app_template', NULL);
CALL shardid.provision_shards('app_template', 8191, 8192);
CALL shardid.provision_shards('app_template', NULL::int, 3);
CALL shardid.provision_shards('app_template', 3, NULL::int);
CALL shardid.provision_shards('app_template', 5, 4);
-- shards go a batch per transaction; a failure in a batch undoes it, the
-- rest goes a shard at a time and the error names the shard that failed;
-- the same CALL then resumes
CREATE ROLE shards_other;
CREATE SCHEMA shard_0072 AUTHORIZATION shards_other;
CALL shardid.provision_shards('app_template', 70, 74, use_sequence => true);
SELECT nspname FROM pg_namespace WHERE nspname BETWEEN 'shard_0070' AND 'shard_0074' ORDER BY 1;
SELECT shard FROM shardid.shard_registry WHERE shard BETWEEN 70 AND 74 ORDER BY 1;
DROP SCHEMA shard_0072;
CALL shardid.provision_shards('app_template', 70, 74, use_sequence => true);
SELECT shard FROM shardid.shard_registry WHERE shard BETWEEN 70 AND 74 ORDER BY 1;
DROP ROLE shards_other;
DROP SCHEMA shard_0060, shard_0061, shard_0062, shard_0063, shard_0064, shard_0070, shard_0071, shard_0072, shard_0073, shard_0074 CASCADE;
-- a dropped schema stays registered until its shard is unregistered
SELECT count(*) FROM shardid.shard_registry WHERE shard BETWEEN 60 AND 74 OR shard = 8191;
SELECT shardid.unregister_shard(s) FROM (VALUES (60), (61), (62), (63), (64), (70), (71), (72), (73), (74), (8191), (8191)) v(s);

-- add_shards(): the one entry point.  A list, a batch per transaction,
-- returning how many tables it made and found
CALL shardid.add_shards('app_template', '{80, 81}', use_sequence => true);
-- a range; what exists is kept and counted
CALL shardid.add_shards('app_template', first_shard => 81, last_shard => 83, use_sequence => true);
SELECT shard, schema_name, tables FROM shardid.shards WHERE shard BETWEEN 80 AND 89 ORDER BY shard;
-- batches commit: not in a transaction block, unless in_batches => false,
-- which makes them all in the caller's transaction
BEGIN;
CALL shardid.add_shards('app_template', '{84}', use_sequence => true);
ROLLBACK;
BEGIN;
CALL shardid.add_shards('app_template', '{84, 85}', in_batches => false, use_sequence => true);
CALL shardid.add_shards('app_template', first_shard => 85, last_shard => 85, in_batches => false);
SELECT count(*) FROM shardid.shards WHERE shard IN (84, 85);
ROLLBACK;
SELECT count(*) FROM shardid.shards WHERE shard IN (84, 85);
SELECT count(*) FROM pg_namespace WHERE nspname IN ('shard_0084', 'shard_0085');
-- local or distributed: without Citus every shard is a plain schema, and
-- distribute => true is refused before anything is made
CALL shardid.add_shards('app_template', '{84}', distribute => false, use_sequence => true);
CALL shardid.add_shards('app_template', '{86}', distribute => true);
CALL shardid.add_shards('app_template', '{86}', distribute => true, in_batches => false);
SET citus.enable_schema_based_sharding = on;
CALL shardid.add_shards('app_template', '{86}', distribute => true);
RESET citus.enable_schema_based_sharding;
SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0086';
-- a list or a range, not both, not neither; arguments as provision_shards()'s
CALL shardid.add_shards('app_template');
CALL shardid.add_shards('app_template', first_shard => 3);
CALL shardid.add_shards('app_template', '{3}', first_shard => 3, last_shard => 4);
CALL shardid.add_shards(NULL, '{3}');
CALL shardid.add_shards('app_template', '{3}', in_batches => NULL);
CALL shardid.add_shards('app_template', first_shard => 5, last_shard => 4);
CALL shardid.add_shards('app_template', first_shard => 8191, last_shard => 8192);
CALL shardid.add_shards('app_template', '{8192}', in_batches => false);
CALL shardid.add_shards('nowhere', '{3}');
-- a failure names its shard; the same CALL resumes, keeping what exists
CREATE ROLE shards_other;
CREATE SCHEMA shard_0092 AUTHORIZATION shards_other;
CALL shardid.add_shards('app_template', first_shard => 90, last_shard => 94, use_sequence => true);
SELECT shard FROM shardid.shard_registry WHERE shard BETWEEN 90 AND 94 ORDER BY 1;
-- in the caller's transaction the error is the bare one, as create_shards()'s
CALL shardid.add_shards('app_template', first_shard => 90, last_shard => 94, in_batches => false);
DROP SCHEMA shard_0092;
CALL shardid.add_shards('app_template', first_shard => 90, last_shard => 94, use_sequence => true);
SELECT shard FROM shardid.shard_registry WHERE shard BETWEEN 90 AND 94 ORDER BY 1;
DROP ROLE shards_other;
-- the names of 1.2 still work, deprecated: create_shards() (above),
-- create_local_shards(), provision_shards() (above)
SELECT * FROM shardid.create_local_shards('app_template', ARRAY[87], use_sequence => true);
SELECT * FROM shardid.create_local_shards('app_template', NULL);
-- the surface: one entry point, the deprecated names, the private work
-- (in schema shardid_internal)
SELECT p.pronamespace::regnamespace AS schema, p.proname, p.prokind, p.pronargs,
       CASE WHEN obj_description(p.oid, 'pg_proc') LIKE 'private:%' THEN 'private'
            WHEN obj_description(p.oid, 'pg_proc') LIKE 'deprecated (1.3):%' THEN 'deprecated'
            ELSE 'public' END AS kind
FROM pg_proc p WHERE p.pronamespace IN ('shardid'::regnamespace, 'shardid_internal'::regnamespace)
  AND p.proname IN ('add_shards', 'create_shards', 'create_local_shards', 'provision_shards',
                    'make_shards', 'make_local_shards', 'shards_distributed', 'default_uses_sequence')
ORDER BY 5 DESC, 2, 4;
DROP SCHEMA shard_0080, shard_0081, shard_0082, shard_0083, shard_0084, shard_0087,
            shard_0090, shard_0091, shard_0092, shard_0093, shard_0094 CASCADE;
SELECT count(*) FROM (SELECT shardid.unregister_shard(shard) FROM shardid.shard_registry
                      WHERE shard BETWEEN 80 AND 94) u;

-- options: other prefix and width, no sequence (strict mode only: where it
-- does not hold, a WARNING says so, test/session/sql/session.sql)
SET client_min_messages = error;
SELECT * FROM shardid.create_shards('app_template', ARRAY[8191], prefix => 's', digits => 2, use_sequence => false);
SET client_min_messages = warning;
SELECT default_expr FROM shardid.id_defaults WHERE schema_name = 's8191' ORDER BY table_name;

-- the shards of this database: the registry, kept by create_shards()
SELECT * FROM shardid.shards ORDER BY shard;
SELECT shard, schema_name, registered_by = current_user AS by_me FROM shardid.shard_registry ORDER BY shard;
SELECT shardid.shard_schema(42), shardid.shard_schema(7) IS NULL AS not_here;
SELECT shardid.id_schema(id) FROM shard_0042.users;
SELECT shardid.id_schema(shardid.make_id(0, 1, 0)), shardid.id_schema(NULL) IS NULL AS null_in;

-- bad input
SELECT * FROM shardid.create_shards('no_such_schema', ARRAY[1]);
SELECT * FROM shardid.create_shards('app_template', ARRAY[8192]);
SELECT * FROM shardid.create_shards('app_template', ARRAY[-1]);
SELECT * FROM shardid.create_shards('app_template', ARRAY[NULL]::int[]);
SELECT * FROM shardid.create_shards(NULL, ARRAY[4]);
SELECT * FROM shardid.create_shards('app_template', NULL);
SELECT * FROM shardid.create_shards('app_template', '{}');
SELECT * FROM shardid.create_shards('app_template', ARRAY[4], digits => 0);
SELECT * FROM shardid.create_shards('app_template', ARRAY[4], prefix => '');
CREATE SCHEMA empty_template;
SELECT * FROM shardid.create_shards('empty_template', ARRAY[4]);
-- a shard schema used as the template would overwrite itself
SELECT * FROM shardid.create_shards('shard_0001', ARRAY[1]);
DROP SCHEMA empty_template;
-- system schemas are no templates
SELECT * FROM shardid.create_shards('pg_catalog', ARRAY[4]);
SELECT * FROM shardid.create_shards('information_schema', ARRAY[4]);
SELECT * FROM shardid.create_shards('shardid', ARRAY[4]);
-- a shard registered to another schema is refused before anything is made
SELECT * FROM shardid.create_shards('app_template', ARRAY[5, 42], prefix => 'other_', use_sequence => true);
SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'other\_%';

-- the registry by hand: a schema made without create_shards()
CREATE SCHEMA hand_made;
CREATE SEQUENCE hand_made.t_id_seq;
CREATE TABLE hand_made.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(77, nextval('hand_made.t_id_seq')));
SELECT shardid.shard_schema(77) IS NULL AS not_registered_yet;
SELECT shardid.register_shard(77, 'hand_made');
SELECT shardid.register_shard(77, 'hand_made');  -- again: nothing to do
SELECT shardid.shard_schema(77), shardid.id_schema(shardid.next_id(77, 1));
SELECT * FROM shardid.shards WHERE shard = 77;
SELECT shardid.register_shard(77, 'shard_0042');
SELECT shardid.register_shard(78, 'hand_made');
SELECT shardid.register_shard(8192, 'hand_made');
SELECT shardid.register_shard(-1, 'hand_made');
SELECT shardid.register_shard(79, 'no_such_schema');
SELECT shardid.register_shard(NULL, 'hand_made') IS NULL AS strict;
-- a registration whose schema was dropped gives way
ALTER SCHEMA hand_made RENAME TO hand_made_renamed;
SELECT shardid.shard_schema(77) IS NULL AS schema_gone;
SELECT shardid.register_shard(77, 'hand_made_renamed');
SELECT shardid.shard_schema(77);
SELECT shardid.unregister_shard(77), shardid.unregister_shard(77);
DROP SCHEMA hand_made_renamed CASCADE;
-- so it does in provisioning, which registers the schemas a call made in
-- one statement: a shard registered to a dropped schema of another name
-- takes the schema made; one registered to the very name, dropped and
-- made again, keeps its row
CREATE SCHEMA gone_elsewhere;
SELECT shardid.register_shard(96, 'gone_elsewhere');
CALL shardid.add_shards('app_template', '{97}', use_sequence => true);
CREATE TEMP TABLE reg97 AS SELECT * FROM shardid.shard_registry WHERE shard = 97;
DROP SCHEMA gone_elsewhere, shard_0097 CASCADE;
CALL shardid.add_shards('app_template', '{96, 97, 98}', use_sequence => true);
SELECT r.shard, r.schema_name, r.registered_at = k.registered_at AS row_kept,
       (SELECT count(*) FROM pg_tables t WHERE t.schemaname = r.schema_name) AS tables
FROM shardid.shard_registry r LEFT JOIN reg97 k USING (shard)
WHERE r.shard IN (96, 97, 98) ORDER BY r.shard;
-- a registration whose schema exists is refused before anything is made
CREATE SCHEMA held_elsewhere;
SELECT shardid.register_shard(99, 'held_elsewhere');
CALL shardid.add_shards('app_template', '{99}', use_sequence => true);
SELECT to_regnamespace('shard_0099') IS NULL AS nothing_made;
SELECT shardid.unregister_shard(s) FROM generate_series(96, 99) s;
DROP SCHEMA shard_0096, shard_0097, shard_0098, held_elsewhere CASCADE;
-- create_shards() and create_local_shards() warn of a DEFAULT outside the
-- shard schemas that makes ids of a shard they register, as add_shards()
-- does (they said nothing, and the doctor then reported it)
CREATE SCHEMA claims;
CREATE TABLE claims.a (id bigint DEFAULT shardid.next_id(94));
CREATE TABLE claims.b (id bigint DEFAULT shardid.next_id(95));
SELECT count(*) FROM shardid.create_shards('app_template', '{94}', use_sequence => true);
SELECT count(*) FROM shardid.create_local_shards('app_template', '{95}', use_sequence => true);
SELECT shardid.unregister_shard(s) FROM generate_series(94, 95) s;
DROP SCHEMA shard_0094, shard_0095, claims CASCADE;
-- A registration that the checks refused, made between them and the
-- registration of the batch (here by an event trigger, as another session
-- could), is refused with register_shard()'s words, naming the shard
CREATE SCHEMA et_template;
CREATE TABLE et_template.a (id bigint PRIMARY KEY, v text);
CREATE SCHEMA et_other;
CREATE FUNCTION et_register() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
        IF r.object_identity = 'et_8101' THEN
            PERFORM shardid.register_shard(8109, 'et_8101');
        ELSIF r.object_identity = 'et_8102' THEN
            PERFORM shardid.register_shard(8102, 'et_other');
        END IF;
    END LOOP;
END
$$;
CREATE EVENT TRIGGER et_register ON ddl_command_end WHEN TAG IN ('CREATE SCHEMA')
    EXECUTE FUNCTION et_register();
CALL shardid.add_shards('et_template', '{8100, 8101}', prefix => 'et_', in_batches => false, use_sequence => true);
CALL shardid.add_shards('et_template', '{8100, 8102}', prefix => 'et_', in_batches => false, use_sequence => true);
CALL shardid.add_shards('et_template', '{8100, 8102}', prefix => 'et_', use_sequence => true);
DROP EVENT TRIGGER et_register;
SELECT shard, schema_name FROM shardid.shard_registry WHERE shard BETWEEN 8100 AND 8109 ORDER BY shard;
SELECT shardid.unregister_shard(8100);
DROP SCHEMA et_8100 CASCADE;
-- Each copy's id column is read once the batch is made: an index dropped
-- since its copy was made (here by an event trigger) is refused, and every
-- schema with a copy that cannot be read is searched, even after one whose
-- search refuses nothing (its column lost the next_id() DEFAULT too)
CREATE FUNCTION et_break() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
        IF r.command_tag = 'CREATE TABLE' AND r.object_identity = 'et_8104.a' THEN
            ALTER TABLE et_8103.a DROP CONSTRAINT a_pkey;
        ELSIF r.command_tag = 'ALTER TABLE' AND r.object_identity IN ('et_8105.a', 'et_8106.a')
              AND EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = r.objid AND c.contype = 'p')
              AND EXISTS (SELECT FROM pg_attrdef d WHERE d.adrelid = r.objid) THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT a_pkey', r.object_identity);
            IF r.object_identity = 'et_8105.a' THEN
                ALTER TABLE et_8105.a ALTER COLUMN id DROP DEFAULT;
            END IF;
        END IF;
    END LOOP;
END
$$;
CREATE EVENT TRIGGER et_break ON ddl_command_end WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE')
    EXECUTE FUNCTION et_break();
CALL shardid.add_shards('et_template', '{8103, 8104}', prefix => 'et_', in_batches => false, use_sequence => false);
CALL shardid.add_shards('et_template', '{8105, 8106}', prefix => 'et_', in_batches => false, use_sequence => false);
DROP EVENT TRIGGER et_break;
SELECT count(*) AS registered, count(n.oid) AS schemas
FROM shardid.shard_registry r FULL JOIN pg_namespace n ON n.nspname = r.schema_name
WHERE r.shard BETWEEN 8100 AND 8109 OR n.nspname LIKE 'et\_81%';
DROP FUNCTION et_register(), et_break();
DROP SCHEMA et_template, et_other CASCADE;
INSERT INTO shardid.shard_registry VALUES (8192, 'x', '2026-01-01 00:00:00+00', 'someone');

-- sequence names: <table>_<column>_seq cut to 63 bytes on a character
-- boundary, numbered when two tables' names would meet
CREATE SCHEMA long_template;
-- (two names of 62 bytes: 30 two-byte letters and _a, _b)
CREATE TABLE long_template."éééééééééééééééééééééééééééééé_a" (id bigint PRIMARY KEY);
CREATE TABLE long_template."éééééééééééééééééééééééééééééé_b" (id bigint PRIMARY KEY);
CREATE TABLE long_template.t (id bigint PRIMARY KEY);
CREATE TABLE long_template.t_id_seq (id bigint PRIMARY KEY);
SELECT shard, table_name, action FROM shardid.create_shards('long_template', ARRAY[300], use_sequence => true);
SELECT d.table_name, d.sequence_name, octet_length(c.relname) AS bytes
FROM shardid.id_defaults d JOIN pg_class c ON c.oid = d.sequence_name
WHERE d.schema_name = 'shard_0300' ORDER BY d.table_name COLLATE "C";
INSERT INTO shard_0300.t DEFAULT VALUES;
INSERT INTO shard_0300.t_id_seq DEFAULT VALUES;
DROP SCHEMA long_template, shard_0300 CASCADE;
SELECT shardid.unregister_shard(300);

-- the doctor: the epoch is left as the server has it here (whether the
-- sequence-free DEFAULTs of s8191 can work depends on the mode: checked in
-- test/session/sql and test/strict/sql)
SELECT * FROM shardid.doctor() WHERE problem NOT IN ('sequence-free DEFAULT without strict mode', 'epoch not set');
-- the row of an epoch at its built-in default, in full, where the server
-- sets none (test/run.sh's servers); none where it sets one (make
-- installcheck runs on any server): either way the comparison is true
SELECT (SELECT array_agg(concat_ws(' | ', problem, object, detail, fix))
        FROM shardid.doctor(scan_rows => false) WHERE problem = 'epoch not set') IS NOT DISTINCT FROM
       CASE WHEN source = 'default' THEN ARRAY['epoch not set | shardid.epoch | '
           'shardid.epoch is at its built-in default (2026-01-01 00:00:00+00); ids of this server decode right only where the same epoch is in force. | '
           'Set it explicitly and identically on every server: ALTER SYSTEM SET shardid.epoch = ''2026-01-01 00:00:00+00''; SELECT pg_reload_conf();'] END
       AS row_iff_default
FROM pg_settings WHERE name = 'shardid.epoch';
DROP SCHEMA s8191 CASCADE;
SELECT shardid.unregister_shard(8191);
-- the epoch in force, set explicitly: the doctor is quiet about it
SELECT current_setting('shardid.epoch') AS epoch \gset
SET shardid.epoch = :'epoch';
-- a healthy database: no rows
SELECT * FROM shardid.doctor();

-- plant each problem
ALTER SEQUENCE shard_0001.users_id_seq CACHE 20;
CREATE SCHEMA shard_dup;
CREATE SEQUENCE shard_dup.t_id_seq;
CREATE TABLE shard_dup.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(2, nextval('shard_dup.t_id_seq')));
ALTER TABLE shard_0042.settings ADD COLUMN id bigint DEFAULT shardid.next_id(41, nextval('shard_0042.users_id_seq'));
INSERT INTO shard_0003.users (id, email) VALUES (shardid.make_id(5, 99, 1), 'stray@example.org');
CREATE SCHEMA shard_bad;
CREATE TABLE shard_bad.t (id bigint DEFAULT shardid.next_id(9000, 1), v int);
CREATE TABLE shard_bad.u (id bigint DEFAULT shardid.next_id(length(current_user), 1), v int);
CREATE TABLE shard_bad.w (id bigint DEFAULT shardid.next_id(-1), v int);
CREATE TABLE shard_bad.n (id numeric DEFAULT shardid.next_id(3, 1), v int);
CREATE SCHEMA shard_gone;
SELECT shardid.register_shard(4000, 'shard_gone');
DROP SCHEMA shard_gone;
-- partitions: each row is counted once, in its partition
CREATE TABLE shard_0003.events (id bigint DEFAULT shardid.next_id(3, nextval('shard_0003.users_id_seq')), k int)
    PARTITION BY RANGE (k);
CREATE TABLE shard_0003.events_1 PARTITION OF shard_0003.events FOR VALUES FROM (0) TO (10);
INSERT INTO shard_0003.events VALUES (shardid.make_id(5, 99, 2), 1);
SELECT * FROM shardid.doctor();
-- without reading rows, the stray row goes unseen
SELECT problem, object FROM shardid.doctor(scan_rows => false);

SELECT shardid.unregister_shard(4000);

-- an epoch other than the one this server's ids were made with
SELECT set_config('shardid.epoch', (extract(epoch FROM ids_epoch) * 1000 + 1000)::bigint::text, false) IS NOT NULL AS moved
FROM shardid.info() WHERE ids_epoch IS NOT NULL;
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE problem LIKE 'epoch%';

RESET shardid.epoch;
DROP SCHEMA shard_0001, shard_0002, shard_0003, shard_0042, shard_dup, shard_bad, app_template CASCADE;
SELECT shardid.unregister_shard(s) FROM (VALUES (1), (2), (3), (42)) v(s);
SELECT count(*) AS left_registered FROM shardid.shard_registry;
