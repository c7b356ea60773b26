-- What an ordinary user can and cannot do.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set SHOW_CONTEXT never
SELECT current_user AS "ROLE_NAME", current_database() AS "DB_NAME" \gset

CREATE ROLE regress_shardid_app LOGIN;
CREATE SCHEMA app_s1 AUTHORIZATION regress_shardid_app;
SET ROLE regress_shardid_app;

-- tables with the DEFAULT, the decoders, the helpers: all allowed
CREATE SEQUENCE app_s1.t_id_seq;
CREATE TABLE app_s1.t (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(1, nextval('app_s1.t_id_seq')),
    v  int
);
INSERT INTO app_s1.t (v) SELECT g FROM generate_series(1, 3000) g;
SELECT count(DISTINCT id) AS ids, bool_and(shardid.id_shard(id) = 1) AS shard_1,
       bool_and((shardid.decode(id)).seq = shardid.id_seq(id)) AS decode_ok,
       bool_and(id >= shardid.min_id(now() - interval '1 hour')) AS min_id_ok
FROM app_s1.t;
SELECT max_shard FROM shardid.info();
SELECT shardid.make_id(1, 2, 3);
RESET ROLE;

-- with CREATE on the database, an ordinary user makes schemas, but
-- registering logical shards for routing takes a grant on the registry
GRANT CREATE ON DATABASE :"DB_NAME" TO regress_shardid_app;
SET ROLE regress_shardid_app;
CREATE SCHEMA app_tpl;
CREATE TABLE app_tpl.items (id bigint PRIMARY KEY, name text);
SELECT * FROM shardid.create_shards('app_tpl', ARRAY[11, 12], prefix => 'app_', use_sequence => true);
SELECT shardid.register_shard(1, 'app_s1');
SELECT shardid.unregister_shard(1);
INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (1, 'app_s1');
RESET ROLE;
GRANT INSERT, DELETE ON shardid.shard_registry TO regress_shardid_app;
SET ROLE regress_shardid_app;
-- with it, it provisions logical shards, reads the catalog of shards and
-- runs the doctor
SELECT * FROM shardid.create_shards('app_tpl', ARRAY[11, 12], prefix => 'app_', use_sequence => true);
SELECT shardid.register_shard(1, 'app_s1');
SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname LIKE 'app\_00%' ORDER BY 1;
SELECT * FROM shardid.shards WHERE schema_name LIKE 'app\_%' ORDER BY shard;
SELECT shardid.shard_schema(12);
SELECT problem, object FROM shardid.doctor() WHERE object LIKE 'app%';

-- nothing that could make ids collide or decode wrongly
SET shardid.epoch = '0';
ALTER SYSTEM SET shardid.max_lead_ms = 0;
ALTER SYSTEM SET shardid.epoch = '0';
ALTER DATABASE postgres SET shardid.epoch = '0';
-- nor change or shadow the extension's functions
CREATE OR REPLACE FUNCTION shardid.next_id(shard integer, seq bigint) RETURNS bigint
    AS 'SELECT 1::bigint' LANGUAGE sql;
CREATE FUNCTION shardid.next_id(shard bigint, seq bigint) RETURNS bigint
    AS 'SELECT 1::bigint' LANGUAGE sql;
DROP FUNCTION shardid.id_time(bigint);
ALTER FUNCTION shardid.next_id(integer, bigint) VOLATILE;
ALTER EXTENSION shardid UPDATE;
DROP EXTENSION shardid;
RESET ROLE;

-- the extension is not trusted (from 1.2 on): the owner of a database
-- cannot install it.  A superuser installs it there; the owner of the
-- database as it is now registers shards, a former owner no longer; nobody
-- but superusers sets the epoch.
CREATE ROLE regress_shardid_owner LOGIN;
CREATE ROLE regress_shardid_next LOGIN;
CREATE DATABASE regress_shardid_trusted OWNER regress_shardid_owner;
\c regress_shardid_trusted regress_shardid_owner
SET client_min_messages = warning;
CREATE EXTENSION shardid;
\c - :ROLE_NAME
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE SCHEMA s7 AUTHORIZATION regress_shardid_owner;
CREATE SCHEMA s8 AUTHORIZATION regress_shardid_owner;
\c - regress_shardid_owner
SET client_min_messages = warning;
SELECT shardid.id_shard(shardid.next_id(7, 1)) AS shard;
SET shardid.epoch = '0';
SELECT shardid.register_shard(7, 's7');
-- a direct write passes the same checks, and records who wrote
INSERT INTO shardid.shard_registry (shard, schema_name, registered_by) VALUES (77, 'pg_catalog', 'postgres');
INSERT INTO shardid.shard_registry (shard, schema_name, registered_by) VALUES (8, 's8', 'postgres');
UPDATE shardid.shard_registry SET shard = 9 WHERE shard = 7;
SELECT shard, schema_name, registered_by FROM shardid.shard_registry ORDER BY shard;
\c - :ROLE_NAME
SET client_min_messages = warning;
ALTER DATABASE regress_shardid_trusted OWNER TO regress_shardid_next;
\c - regress_shardid_owner
SET client_min_messages = warning;
SELECT shardid.unregister_shard(7);
DELETE FROM shardid.shard_registry WHERE shard = 8;
\c - regress_shardid_next
SET client_min_messages = warning;
SELECT shardid.unregister_shard(8);
-- the move journal names hosts: only its writers read it
SELECT count(*) FROM shardid.move_journal;
-- next_id() is executable by everyone, who can so use up a shard's ids
-- (in strict mode, up to shardid.max_lead_ms ahead of the clock).  To keep
-- it to the roles that write the shard's tables:
\c - :ROLE_NAME
SET client_min_messages = warning;
REVOKE EXECUTE ON FUNCTION shardid.next_id(integer, bigint), shardid.next_id(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shardid.next_id(integer, bigint), shardid.next_id(integer) TO regress_shardid_owner;
CREATE SEQUENCE s7.items_id_seq;
CREATE TABLE s7.items (id bigint DEFAULT shardid.next_id(7, nextval('s7.items_id_seq')), v int);
GRANT INSERT ON s7.items TO regress_shardid_owner, regress_shardid_next;
GRANT USAGE ON SEQUENCE s7.items_id_seq TO regress_shardid_owner, regress_shardid_next;
GRANT USAGE ON SCHEMA s7 TO regress_shardid_next;
\c - regress_shardid_next
SET client_min_messages = warning;
INSERT INTO s7.items (v) VALUES (1);
SELECT shardid.next_id(7, 1);
\c - regress_shardid_owner
SET client_min_messages = warning;
INSERT INTO s7.items (v) VALUES (2);
\c :DB_NAME :ROLE_NAME
SET client_min_messages = warning;
DROP DATABASE regress_shardid_trusted;
DROP ROLE regress_shardid_owner, regress_shardid_next;
DROP SCHEMA app_s1, app_tpl, app_0011, app_0012 CASCADE;
SELECT shardid.unregister_shard(s) FROM (VALUES (1), (11), (12)) v(s);
REVOKE INSERT, DELETE ON shardid.shard_registry FROM regress_shardid_app;
REVOKE CREATE ON DATABASE :"DB_NAME" FROM regress_shardid_app;
DROP ROLE regress_shardid_app;
