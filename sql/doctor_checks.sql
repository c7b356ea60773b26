-- The doctor's checks, each on its own (doctor() is their union: see
-- sql/shards.sql), with a planted fault where one can be planted here, and
-- template drift: a shard's table that differs from its template.
SET client_min_messages = warning;
\set SHOW_CONTEXT never
-- the epoch in force is the server's (make installcheck runs on any), set
-- explicitly in the session: doctor_epoch_unset() is quiet
SELECT current_setting('shardid.epoch') AS epoch, epoch_ms FROM shardid.info() \gset
SET shardid.epoch = :'epoch';

-- private, in schema shardid_internal: each with a fixed search_path
SELECT p.proname, p.proconfig FROM pg_proc p
WHERE p.pronamespace = 'shardid_internal'::regnamespace AND p.proname LIKE 'doctor\_%'
ORDER BY 1;

-- a template and three shards of it
CREATE SCHEMA chk_template;
CREATE TABLE chk_template.users (
    id    bigint PRIMARY KEY,
    email text NOT NULL,
    score int DEFAULT 0 CHECK (score >= 0)
);
CREATE INDEX users_email ON chk_template.users (email);
CREATE TABLE chk_template.posts (
    id      bigint PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES chk_template.users (id),
    body    text
);
SELECT count(*) FROM shardid.create_shards('chk_template', ARRAY[501, 502, 503], prefix => 'chk_', use_sequence => true);
INSERT INTO chk_0501.users (email) VALUES ('ada@example.org');

-- doctor_id_defaults(): every id column, read once, without the text of
-- its DEFAULT (which would open each table)
SELECT d.schema_name, d.table_name, d.column_name, d.shard, d.default_expr IS NULL AS no_text
FROM unnest(shardid_internal.doctor_id_defaults()) d WHERE d.schema_name LIKE 'chk\_%' ORDER BY 1, 2;

-- a healthy layout: no check finds anything
SELECT * FROM shardid.doctor() WHERE object LIKE 'chk%';

-- doctor_epoch_unset()
-- its row when the epoch is at its built-in default: where the server sets
-- one (postgresql.conf) no row, where it does not (test/run.sh's servers)
-- the row; either way the comparison is true
RESET shardid.epoch;
SELECT array_agg(u.problem || ' | ' || u.object) FILTER (WHERE u.problem IS NOT NULL) IS NOT DISTINCT FROM
       CASE WHEN s.source = 'default' THEN ARRAY['epoch not set | shardid.epoch'] END AS row_iff_default
FROM pg_settings s LEFT JOIN shardid_internal.doctor_epoch_unset() u ON true
WHERE s.name = 'shardid.epoch' GROUP BY s.source;
SET shardid.epoch = :'epoch';
SELECT count(*) FROM shardid_internal.doctor_epoch_unset();

-- doctor_ids_epoch(): the ids of this server were made with the epoch set
-- above; another one in force is reported
SELECT count(*) FROM shardid_internal.doctor_ids_epoch();
SELECT set_config('shardid.epoch', (:epoch_ms + 1000)::text, false) IS NOT NULL AS one_second_later;
SELECT problem, object FROM shardid_internal.doctor_ids_epoch();
-- and doctor() reports it alone
SELECT problem FROM shardid.doctor(scan_rows => false);

-- doctor_sign_bit(): an epoch of 1990 reached the sign bit in 2024
SET shardid.epoch = '1990-01-01 00:00:00+00';
SELECT problem, object FROM shardid_internal.doctor_sign_bit();
SET shardid.epoch = :'epoch';
SELECT count(*) FROM shardid_internal.doctor_sign_bit();

-- doctor_id_columns(): a sequence of CACHE 20, a shard nobody registered,
-- a DEFAULT that is no plain call (its text read for the row alone), a
-- column not bigint
ALTER SEQUENCE chk_0501.users_id_seq CACHE 20;
CREATE SCHEMA chk_loose;
CREATE TABLE chk_loose.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(599, 1));
CREATE TABLE chk_loose.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(599, 1) + 1);
CREATE TABLE chk_loose.v (id numeric PRIMARY KEY DEFAULT shardid.next_id(599, 1));
SELECT * FROM shardid_internal.doctor_id_columns(shardid_internal.doctor_id_defaults()) WHERE object LIKE 'chk%';
ALTER SEQUENCE chk_0501.users_id_seq CACHE 1;
DROP SCHEMA chk_loose CASCADE;

-- doctor_mark(), doctor_lock_table(), doctor_stored_ids(), doctor_citus():
-- nothing to report on this server (sql/shards.sql and sql/floor.sql, the
-- failover and Citus suites plant their problems)
SELECT (SELECT count(*) FROM shardid_internal.doctor_mark()) AS mark,
       (SELECT count(*) FROM shardid_internal.doctor_lock_table()) AS lock_table,
       (SELECT count(*) FROM shardid_internal.doctor_stored_ids()) AS stored_ids,
       (SELECT count(*) FROM shardid_internal.doctor_citus()) AS citus;

-- doctor_unindexed(): an id column without a btree index
CREATE TABLE chk_0501.log (id bigint DEFAULT shardid.next_id(501, nextval('chk_0501.users_id_seq')), line text);
CREATE INDEX ON chk_0501.log USING hash (id);
SELECT * FROM shardid_internal.doctor_unindexed(shardid_internal.doctor_id_defaults()) WHERE object LIKE 'chk%';
DROP TABLE chk_0501.log;

-- doctor_domains(): a domain whose DEFAULT makes ids
CREATE DOMAIN chk_0501.chk_id AS bigint DEFAULT shardid.next_id(501, 1);
CREATE TABLE chk_0501.notes (id chk_0501.chk_id PRIMARY KEY);
SELECT * FROM shardid_internal.doctor_domains(shardid_internal.doctor_id_defaults());
DROP TABLE chk_0501.notes;
DROP DOMAIN chk_0501.chk_id;

-- doctor_foreign_objects(): a function of another origin in schema shardid
CREATE FUNCTION shardid.chk_planted() RETURNS int AS 'SELECT 1' LANGUAGE sql;
SELECT * FROM shardid_internal.doctor_foreign_objects();
DROP FUNCTION shardid.chk_planted();

-- doctor_missing_schemas(): a registration whose schema is gone
CREATE SCHEMA chk_gone;
SELECT shardid.register_shard(598, 'chk_gone');
DROP SCHEMA chk_gone;
SELECT * FROM shardid_internal.doctor_missing_schemas();
SELECT shardid.unregister_shard(598);

-- doctor_claimed_shards() and doctor_schema_shards(): another schema makes
-- ids of shard 502; a table of chk_0503 makes ids of shard 504
CREATE SCHEMA chk_dup;
CREATE TABLE chk_dup.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(502, 1));
CREATE TABLE chk_0503.odd (id bigint PRIMARY KEY DEFAULT shardid.next_id(504, 1));
SELECT * FROM shardid_internal.doctor_claimed_shards(shardid_internal.doctor_id_defaults()) WHERE object LIKE 'shard 50%';
SELECT * FROM shardid_internal.doctor_schema_shards(shardid_internal.doctor_id_defaults()) WHERE object LIKE 'chk%';
DROP SCHEMA chk_dup CASCADE;
DROP TABLE chk_0503.odd;

-- doctor_rows(): a row of another shard
INSERT INTO chk_0502.users (id, email) VALUES (shardid.make_id(5, 77, 1), 'stray@example.org');
SELECT * FROM shardid_internal.doctor_rows(shardid_internal.doctor_id_defaults()) WHERE object LIKE 'chk%';
DELETE FROM chk_0502.users;

-- doctor_drift(): shards whose tables left their template.  chk_0502.users
-- gained a column, lost a NOT NULL, a DEFAULT and an index, and has an
-- index of its own; chk_0503.posts lost its foreign key and its body is
-- varchar; chk_0501 is as made.
ALTER TABLE chk_0502.users ADD COLUMN nickname text;
ALTER TABLE chk_0502.users ALTER COLUMN email DROP NOT NULL;
ALTER TABLE chk_0502.users ALTER COLUMN score DROP DEFAULT;
SELECT format('DROP INDEX %s', indexrelid::regclass) FROM pg_index
WHERE indrelid = 'chk_0502.users'::regclass AND NOT indisprimary \gexec
CREATE INDEX users_lower ON chk_0502.users (lower(email));
ALTER TABLE chk_0503.posts DROP CONSTRAINT posts_user_id_fkey;
ALTER TABLE chk_0503.posts ALTER COLUMN body TYPE varchar(100);
SELECT * FROM shardid_internal.doctor_drift(shardid_internal.doctor_id_defaults());
-- doctor() has the rows (scan_rows or not: it reads no table rows)
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE object LIKE 'chk%';
-- the statements of the fix align the tables: run them, and nothing is left
SELECT shardid_internal.doctor_align_statements('chk_template.users', 'chk_0502.users', 'id') AS users,
       shardid_internal.doctor_align_statements('chk_template.posts', 'chk_0503.posts', 'id') AS posts,
       shardid_internal.doctor_align_statements('chk_template.users', 'chk_0501.users', 'id') AS alike;
SELECT shardid_internal.doctor_align_statements('chk_template.users', 'chk_0502.users', 'id') \gexec
SELECT shardid_internal.doctor_align_statements('chk_template.posts', 'chk_0503.posts', 'id') \gexec
SELECT count(*) FROM shardid_internal.doctor_drift(shardid_internal.doctor_id_defaults());
SELECT shardid_internal.table_drift('chk_template.users', 'chk_0502.users', 'id') AS users,
       shardid_internal.table_drift('chk_template.posts', 'chk_0503.posts', 'id') AS posts;

-- a template that changed: every shard differs the same way
ALTER TABLE chk_template.posts ADD COLUMN posted_at timestamptz NOT NULL DEFAULT now();
SELECT object, fix FROM shardid_internal.doctor_drift(shardid_internal.doctor_id_defaults());
ALTER TABLE chk_template.posts DROP COLUMN posted_at;

-- a name that two schemas besides the shards hold has no template that
-- can be told: not compared
CREATE SCHEMA chk_other;
CREATE TABLE chk_other.users (id bigint PRIMARY KEY);
ALTER TABLE chk_0501.users ADD COLUMN extra int;
SELECT count(*) FROM shardid_internal.doctor_drift(shardid_internal.doctor_id_defaults());
DROP SCHEMA chk_other CASCADE;
SELECT object FROM shardid_internal.doctor_drift(shardid_internal.doctor_id_defaults());

-- doctor_no_id_default(): id columns of registered shards' tables without
-- a next_id() DEFAULT: dropped, a sequence's, an identity's; a table
-- without the id column is none of its business, nor one whose ids the
-- set_id() trigger makes
ALTER TABLE chk_0501.users ALTER COLUMN id DROP DEFAULT;
ALTER TABLE chk_0502.users ALTER COLUMN id SET DEFAULT nextval('chk_0502.users_id_seq');
CREATE TABLE chk_0503.later (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY);
CREATE TABLE chk_0503.kv (key text PRIMARY KEY);
CREATE TABLE chk_0503.by_trigger (id bigint PRIMARY KEY);
CREATE TRIGGER set_id BEFORE INSERT ON chk_0503.by_trigger FOR EACH ROW EXECUTE FUNCTION shardid.set_id(503, 'id');
SELECT * FROM shardid_internal.doctor_no_id_default(shardid_internal.doctor_id_defaults()) WHERE object LIKE 'chk%';
DROP TABLE chk_0503.later, chk_0503.kv, chk_0503.by_trigger;

-- doctor_foreign_objects(): in a registered shard's schema, an object of a
-- role that may not register shards, and a schema such a role owns
CREATE ROLE chk_other;
CREATE VIEW chk_0501.chk_view AS SELECT 1 AS one;
ALTER VIEW chk_0501.chk_view OWNER TO chk_other;
ALTER SCHEMA chk_0502 OWNER TO chk_other;
SELECT problem, object FROM shardid_internal.doctor_foreign_objects();
ALTER SCHEMA chk_0502 OWNER TO CURRENT_USER;
DROP VIEW chk_0501.chk_view;
DROP ROLE chk_other;

RESET shardid.epoch;
DROP SCHEMA chk_0501, chk_0502, chk_0503, chk_template CASCADE;
SELECT shardid.unregister_shard(s) FROM (VALUES (501), (502), (503)) v(s);
