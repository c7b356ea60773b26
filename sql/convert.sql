-- Converting an existing table (shardid.convert_table()): bigserial,
-- serial (widened), identity; old ids kept as legacy ids below a recorded
-- boundary, new ids of the shard after them; routing and the doctor tell
-- them apart; refusals.  The same output in session and strict mode: the
-- DEFAULT (next_id(shard) or next_id(shard, nextval(...))) is checked for
-- the mode in force, not shown.
SET client_min_messages = notice;
\set SHOW_CONTEXT never
CREATE SCHEMA conv;
SELECT shardid.register_shard(42, 'conv');
CREATE VIEW conv_default AS
SELECT d.table_name, d.shard,
       d.sequence_free = ((SELECT mode FROM shardid.info()) = 'strict') AS default_of_the_mode,
       d.sequence_name IS NULL OR (SELECT s.seqcache = 1 AND s.seqtypid = 'bigint'::regtype
                                   FROM pg_sequence s WHERE s.seqrelid = d.sequence_name) AS sequence_ok,
       d.column_type
FROM shardid.id_defaults d WHERE d.schema_name = 'conv' ORDER BY 1;

-- bigserial
CREATE TABLE conv.orders (id bigserial PRIMARY KEY, item text);
INSERT INTO conv.orders (item) VALUES ('a'), ('b'), ('c');
-- before: old ids decode as shard 0 at the epoch, and route there
SELECT id, d.shard, d.millis, shardid.id_schema(id) IS NULL AS no_route
FROM conv.orders, shardid.decode(id) d ORDER BY id;
SELECT legacy_below FROM shardid.convert_table('conv.orders', 42);
INSERT INTO conv.orders (item) VALUES ('new') RETURNING id > 3 AS after_old, shardid.id_shard(id);
SELECT item, shardid.id_is_legacy(id), shardid.id_schema(id) FROM conv.orders ORDER BY id;
-- decode() stays as it is: legacy ids decode as shard 0 at the epoch
SELECT d.shard, d.millis FROM shardid.decode(2) d;
SELECT shardid.id_is_legacy(0), shardid.id_is_legacy(-5), shardid.id_is_legacy(4),
       shardid.id_is_legacy(shardid.make_id(1000, 3, 0));

-- serial: the column is widened to bigint (WARNING), a CACHE 10 sequence
-- gets CACHE 1
CREATE TABLE conv.users (id serial PRIMARY KEY, name text);
ALTER SEQUENCE conv.users_id_seq CACHE 10;
INSERT INTO conv.users (name) SELECT 'u' || g FROM generate_series(1, 5000) g;
DELETE FROM conv.users WHERE id > 4990;   -- ids handed out stay legacy
SELECT legacy_below FROM shardid.convert_table('conv.users', 42);
INSERT INTO conv.users (name) VALUES ('new') RETURNING shardid.id_shard(id);
-- id 4096 decodes as shard 4: legacy, so no route to shard 4's schema
SELECT shardid.id_shard(4096), shardid.id_is_legacy(4096), shardid.id_schema(4096);

-- identity (integer): dropped, values kept, widened
CREATE TABLE conv.events (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, what text);
INSERT INTO conv.events (what) VALUES ('x'), ('y');
SELECT legacy_below FROM shardid.convert_table('conv.events', 42);
SELECT attidentity = '' AS no_identity FROM pg_attribute WHERE attrelid = 'conv.events'::regclass AND attname = 'id';
INSERT INTO conv.events (what) VALUES ('new');
SELECT what, shardid.id_is_legacy(id), shardid.id_shard(id) = 42 AS shard_42 FROM conv.events ORDER BY id;

SELECT * FROM conv_default;
SELECT tab, id_column, shard, legacy_below, converted_by FROM shardid.legacy_ids ORDER BY tab::text;
-- the doctor does not take legacy ids for rows of another shard
SELECT problem, object FROM shardid.doctor() WHERE problem <> 'epoch not set';
SELECT shardid_internal.rows_of_other_shards('conv.users', 'id', 42);
-- nor after the column is renamed (the boundary is the table's)
ALTER TABLE conv.users RENAME COLUMN id TO user_id;
SELECT shardid_internal.rows_of_other_shards('conv.users', 'user_id', 42);
SELECT problem, object FROM shardid.doctor() WHERE problem <> 'epoch not set';
ALTER TABLE conv.users RENAME COLUMN user_id TO id;

-- refused: again
SELECT legacy_below FROM shardid.convert_table('conv.orders', 42);
-- and by its building block, on another column
ALTER TABLE conv.orders ADD COLUMN ref bigint;
SELECT shardid.record_legacy_ids('conv.orders', 'ref', 42, 0);
ALTER TABLE conv.orders DROP COLUMN ref;
-- refused: a column that already makes shardid ids
CREATE TABLE conv.by_hand (id bigint PRIMARY KEY DEFAULT shardid.next_id(42, 1));
SELECT legacy_below FROM shardid.convert_table('conv.by_hand', 42);
-- refused: a superuser who does not own the table
CREATE ROLE conv_owner;
GRANT USAGE, CREATE ON SCHEMA conv TO conv_owner;
SET ROLE conv_owner;
CREATE TABLE conv.theirs (id bigserial PRIMARY KEY);
INSERT INTO conv.theirs VALUES (100000);
RESET ROLE;
SELECT legacy_below FROM shardid.convert_table('conv.theirs', 42);
-- as the owner it converts; a role that may not register shards is warned
-- that routing does not count its boundary
SET ROLE conv_owner;
SELECT legacy_below FROM shardid.convert_table('conv.theirs', 42);
SELECT legacy_below FROM shardid.legacy_ids WHERE tab = 'conv.theirs'::regclass;
SELECT shardid.id_is_legacy(50000);
-- nor may it write the boundaries directly
INSERT INTO shardid.legacy_ids VALUES ('conv.theirs', 'id', 42, 1000000, now(), 'conv_owner');
SELECT shardid.record_legacy_ids('conv.orders', 'id', 42, 0);
RESET ROLE;
-- whether a boundary counts is decided when the table is converted: a
-- later grant does not make it count (nor a revoke stop it)
GRANT INSERT, DELETE ON shardid.shard_registry TO conv_owner;
SELECT shardid.id_is_legacy(50000);
REVOKE INSERT, DELETE ON shardid.shard_registry FROM conv_owner;
-- ... which a superuser does, after checking the boundary, as the WARNING's
-- HINT says
UPDATE shardid.legacy_ids SET trusted = true WHERE tab = 'conv.theirs'::regclass;
SELECT shardid.id_is_legacy(50000);
UPDATE shardid.legacy_ids SET trusted = false WHERE tab = 'conv.theirs'::regclass;
-- the WARNING follows who converts, as the boundary's trust does: a member
-- of the owner who may register shards converts her table without one
CREATE ROLE conv_member IN ROLE conv_owner;
GRANT INSERT, DELETE ON shardid.shard_registry TO conv_member;
SET ROLE conv_owner;
CREATE TABLE conv.theirs2 (id bigserial PRIMARY KEY);
INSERT INTO conv.theirs2 VALUES (7);
-- (in session mode the DEFAULT takes her sequence, or a new one of hers:
-- the member's failed, "sequence must have same owner as table")
CREATE TABLE conv.theirs3 (id bigint PRIMARY KEY);
INSERT INTO conv.theirs3 VALUES (9);
SET ROLE conv_member;
SELECT legacy_below FROM shardid.convert_table('conv.theirs2', 42);
SELECT legacy_below FROM shardid.convert_table('conv.theirs3', 42);
RESET ROLE;
SELECT tab, converted_by, trusted FROM shardid.legacy_ids WHERE tab::text LIKE 'conv.theirs_' ORDER BY 1;
SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c
WHERE c.relkind = 'S' AND c.relnamespace = 'conv'::regnamespace AND c.relname LIKE 'theirs%'
  AND c.relowner <> 'conv_owner'::regrole;
REVOKE INSERT, DELETE ON shardid.shard_registry FROM conv_member;
DROP ROLE conv_member;
-- refused: a table that does not exist (an OID)
SELECT legacy_below FROM shardid.convert_table(4294967295::oid::regclass, 42);
-- refused: ids that reach the ids of now
CREATE TABLE conv.far (id bigint PRIMARY KEY);
INSERT INTO conv.far VALUES (shardid.min_id(now() + interval '1 day'));
\set VERBOSITY terse
SELECT legacy_below FROM shardid.convert_table('conv.far', 42);
\set VERBOSITY default
-- refused: a shard out of range, a missing column, a column of another type,
-- a partitioned table
SELECT legacy_below FROM shardid.convert_table('conv.far', 8192);
SELECT legacy_below FROM shardid.convert_table('conv.far', 42, 'nope');
CREATE TABLE conv.texty (id text);
SELECT legacy_below FROM shardid.convert_table('conv.texty', 42);
CREATE TABLE conv.parted (id bigserial) PARTITION BY RANGE (id);
SELECT legacy_below FROM shardid.convert_table('conv.parted', 42);
-- refused: a column of a domain over bigint
CREATE DOMAIN conv.did AS bigint CHECK (VALUE > 0);
CREATE TABLE conv.domained (id conv.did PRIMARY KEY);
SELECT legacy_below FROM shardid.convert_table('conv.domained', 42);
-- refused, before any lock: a role that may only connect
SELECT 'conv.orders'::regclass::oid AS orders_oid \gset
CREATE ROLE conv_nobody;
SET ROLE conv_nobody;
SELECT legacy_below FROM shardid.convert_table(:orders_oid::oid::regclass, 42);
SELECT shardid.record_legacy_ids(:orders_oid::oid::regclass, 'id', 42, 0);
RESET ROLE;
DROP ROLE conv_nobody;

-- refused: a planted id near the ids shardid made (an INSERT-only role's
-- row): a boundary above it would make those ids pass for legacy ones
CREATE TABLE conv.planted (id bigserial PRIMARY KEY);
INSERT INTO conv.planted VALUES (1), (shardid.min_id(now() - interval '1 second'));
\set VERBOSITY terse
SELECT legacy_below FROM shardid.convert_table('conv.planted', 42);
\set VERBOSITY default
-- legacy_ids is written through convert_table() only, whatever the grants
CREATE ROLE conv_writer;
GRANT pg_write_all_data TO conv_writer;
SET ROLE conv_writer;
INSERT INTO shardid.legacy_ids VALUES ('conv.planted', 'id', 42, 1000000, now(), 'postgres', true);
RESET ROLE;
DROP ROLE conv_writer;
-- a temporary table is refused
CREATE TEMP TABLE conv_tmp (id bigint);
SELECT shardid.record_legacy_ids('conv_tmp', 'id', 42, 0);

-- a superuser forgets the boundaries of dropped tables
DELETE FROM shardid.legacy_ids WHERE tab::text LIKE 'conv.%';
SET client_min_messages = warning;
DROP SCHEMA conv CASCADE;
DROP OWNED BY conv_owner;
DROP ROLE conv_owner;
DROP VIEW conv_default;
SELECT shardid.unregister_shard(42);
